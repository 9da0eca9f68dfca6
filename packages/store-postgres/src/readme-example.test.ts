/** The README's examples, as written there (the README points here). */
import { createTask } from '@agent/core';
import { coordinationOf } from '@agent/events';
import { openPostgresStores } from './open-stores.js';
import { startTestPostgres, type TestPostgres } from './testing/test-postgres.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

it('opens the stores, files a task with its events, pages it back and closes', async () => {
  const databaseUrl = await server.createDatabase();

  // --- as in the README ---
  const stores = await openPostgresStores({
    connectionString: databaseUrl, // postgres://user:password@host:5432/agents
    runStore: { taskRetentionMs: 7 * 24 * 60 * 60 * 1000 }, // finished tasks go after a week
  });
  const alice = { tenant: 'acme', principal_id: 'alice' };
  const task = createTask('summarize the report', { id: 'task-1', state: 'working' });
  await stores.runStore.saveTaskSnapshot(task, { owner: alice });
  const sequences = await stores.runStore.appendTaskEvents(alice, task.id, [
    {
      type: 'task.status',
      task_id: task.id,
      state: 'working',
      final: false,
      timestamp: new Date().toISOString(),
    },
  ]); // [1], whichever replica appends next gets 2
  const page = await stores.runStore.pageTaskRecords({ owner: alice, pageSize: 20 });
  // Hand them to the agent and the registry: new Agent({ runStore, approvalStore, ... }),
  // new Registry({ store: stores.registryStore }).
  await stores.close();
  // --- end ---

  expect(sequences).toEqual([1]);
  expect(page.records.map((record) => record.task_id)).toEqual(['task-1']);
});

it('opens the stores of a replica: the run store carries a started coordination the pipeline finds', async () => {
  const databaseUrl = await server.createDatabase();

  // --- as in the README (Replicas) ---
  const stores = await openPostgresStores({
    connectionString: databaseUrl, // the same database on every replica
    runStore: { coordination: { leaseMs: 15_000 } }, // `{}` for the defaults
  });
  const state = stores.runStore.coordination?.state; // 'running': this replica holds its lease
  const found = coordinationOf(stores.runStore); // what the server's pipeline uses: the same object
  // new Agent({ runStore: stores.runStore, approvalStore: stores.approvalStore, ... }), then serve.
  await stores.close(); // after the server stopped: closes the coordination, then the database
  // --- end ---

  expect(state).toBe('running');
  expect(found).toBe(stores.runStore.coordination);
  expect(stores.runStore.coordination?.state).toBe('closed');
});
