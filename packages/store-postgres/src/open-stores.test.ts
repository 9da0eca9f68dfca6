import { createTask, UnavailableError } from '@agent/core';
import { openPostgresStores } from './open-stores.js';
import { POSTGRES_SCHEMA_VERSION } from './schema/migrations.js';
import { startTestPostgres, type TestPostgres } from './testing/test-postgres.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

it('opens the three stores over one database, with the schema current, and closes them together', async () => {
  const stores = await openPostgresStores({
    connectionString: await server.createDatabase(),
    runStore: { taskRetentionMs: 60_000 },
    approvalStore: { pollIntervalMs: 500 },
  });
  const { rows } = await stores.database.query<{ version: number }>(
    'SELECT max(version) AS version FROM agent_schema_migrations',
  );
  expect(rows[0]!.version).toBe(POSTGRES_SCHEMA_VERSION);
  await stores.runStore.saveTaskSnapshot(createTask('hi', { id: 't1' }));
  expect(await stores.runStore.getTaskRecord('t1')).toMatchObject({ task_id: 't1' });
  expect(await stores.registryStore.countEntries()).toBe(0);
  expect(stores.approvalStore.pollIntervalMs).toBe(500);
  await stores.close();
  await stores.close();
  expect(stores.database.isClosed).toBe(true);
  await expect(stores.runStore.getTaskRecord('t1')).rejects.toThrow(UnavailableError);
});

it('fails at open when the database cannot be reached', async () => {
  const url = new URL(await server.createDatabase());
  url.password = 'wrong-password-9';
  const error = await openPostgresStores({ connectionString: url.toString() }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(UnavailableError);
  expect((error as Error).message).not.toContain('wrong-password-9');
});
