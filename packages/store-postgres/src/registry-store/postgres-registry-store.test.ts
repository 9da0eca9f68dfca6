import { describeRegistryStore } from '@agent/events/testing';
import { PostgresDatabase } from '../database.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import { PostgresRegistryStore } from './postgres-registry-store.js';

let server: TestPostgres;
let database: PostgresDatabase;
beforeAll(async () => {
  server = await startTestPostgres();
  database = new PostgresDatabase({ connectionString: await server.createDatabase() });
  await database.ready();
}, 60_000);
afterAll(async () => {
  await database?.close();
  await server?.stop();
});

// The suite opens an empty store for every test: the stores share one database, emptied before each.
beforeEach(async () => {
  await database.query('TRUNCATE agent_registry_entries');
});

describeRegistryStore('PostgresRegistryStore', {
  open: (options) => new PostgresRegistryStore({ ...options, database }),
});
