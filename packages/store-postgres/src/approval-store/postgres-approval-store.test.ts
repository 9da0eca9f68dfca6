import { describeApprovalStore } from '@agent/events/testing';
import { PostgresDatabase } from '../database.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import { PostgresApprovalStore } from './postgres-approval-store.js';

let server: TestPostgres;
let database: PostgresDatabase;
/** The same database through a pool of its own, as another process opens it. */
let elsewhere: PostgresDatabase;
beforeAll(async () => {
  server = await startTestPostgres();
  const url = await server.createDatabase();
  database = new PostgresDatabase({ connectionString: url });
  elsewhere = new PostgresDatabase({ connectionString: url });
  await database.ready();
}, 60_000);
afterAll(async () => {
  await database?.close();
  await elsewhere?.close();
  await server?.stop();
});

// A poll too slow for any test: a decision made through the sibling reaches a waiter by notification.
const pollIntervalMs = 60_000;

describeApprovalStore('PostgresApprovalStore', {
  // Every test gets an empty store: the stores share one database, emptied as each opens.
  open: async (options) => {
    await database.query('TRUNCATE agent_approvals');
    return new PostgresApprovalStore({ ...options, database, pollIntervalMs });
  },
  openSibling: (options) => new PostgresApprovalStore({ ...options, database: elsewhere, pollIntervalMs }),
});
