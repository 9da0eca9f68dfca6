import { createTask } from '@agent/core';
import { coordinationOf } from '@agent/events';
import { openPostgresStores } from '../open-stores.js';
import { PostgresRunStore } from './postgres-run-store.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

const OWNER = { tenant: '', principal_id: 'anonymous' };

it('a run store opened for replicas carries a started coordination, which the pipeline finds', async () => {
  const url = await server.createDatabase();
  const [a, b] = await Promise.all([
    openPostgresStores({ connectionString: url, runStore: { coordination: { replicaId: 'replica-a' } } }),
    openPostgresStores({ connectionString: url, runStore: { coordination: { replicaId: 'replica-b' } } }),
  ]);
  try {
    const found = coordinationOf(a.runStore);
    expect(found).toBe(a.runStore.coordination);
    expect(a.runStore.coordination?.state).toBe('running');
    // A claim made through one store is seen through the other: they share the database.
    await a.runStore.saveTaskSnapshot(createTask('hold', { id: 'c1' }));
    await a.runStore.coordination!.claimTask(OWNER, 'c1');
    expect(await b.runStore.coordination!.placement(OWNER, 'c1')).toBe('elsewhere');
    expect(await a.runStore.coordination!.placement(OWNER, 'c1')).toBe('here');
    await a.runStore.coordination!.releaseTask(OWNER, 'c1');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
  expect(a.runStore.coordination?.state).toBe('closed');
});

it('a run store without the option serves one process: no coordination', async () => {
  const store = new PostgresRunStore({ connectionString: await server.createDatabase() });
  expect(coordinationOf(store)).toBeUndefined();
  await store.close();
});
