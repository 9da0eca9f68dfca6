import { describeRunStore } from '@agent/events/testing';
import { PostgresDatabase } from '../database.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import { PostgresRunStore } from './postgres-run-store.js';

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
  await database.query('TRUNCATE agent_task_events, agent_tasks, agent_run_reports');
});

describeRunStore('PostgresRunStore', {
  open: (options) => new PostgresRunStore({ ...options, database }),
});
