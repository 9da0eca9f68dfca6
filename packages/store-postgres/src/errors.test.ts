import { UnavailableError } from '@agent/core';
import { createServer } from 'node:net';
import { Client } from 'pg';
import { PostgresDatabase } from './database.js';
import { PostgresRegistryStore } from './registry-store/postgres-registry-store.js';
import { PostgresRunStore } from './run-store/postgres-run-store.js';
import { startTestPostgres, type TestPostgres } from './testing/test-postgres.js';

let server: TestPostgres;
let url: string;
beforeAll(async () => {
  server = await startTestPostgres();
  url = await server.createDatabase();
}, 60_000);
afterAll(() => server?.stop());

async function failure(work: Promise<unknown>): Promise<UnavailableError> {
  const error = await work.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(UnavailableError);
  return error as UnavailableError;
}

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

it('reports a wrong password as UnavailableError, without the password or the connection string', async () => {
  const wrong = new URL(url);
  wrong.password = 'not-the-Secret-7';
  const store = new PostgresRunStore({ connectionString: wrong.toString() });
  try {
    const error = await failure(store.getTaskRecord('t1'));
    const told = `${error.message} ${JSON.stringify(error.data)} ${String(error.cause)}`;
    expect(told).not.toContain('not-the-Secret-7');
    expect(told).not.toContain(wrong.toString());
    expect(error.message).toMatch(/^PostgresRunStore\.getTaskRecord: /);
    expect(error.data).toEqual({ pg_code: '28P01' });
  } finally {
    await store.close();
  }
});

it('reports an unreachable server as UnavailableError, without the password', async () => {
  const port = await closedPort();
  const store = new PostgresRegistryStore({
    connectionString: `postgres://agent:hunter2-pw@127.0.0.1:${port}/db`,
  });
  try {
    const error = await failure(store.countEntries());
    expect(error.message).not.toContain('hunter2-pw');
    expect(error.data).toEqual({ pg_code: 'ECONNREFUSED' });
  } finally {
    await store.close();
  }
});

it('cancels a statement that runs past statementTimeoutMs with UnavailableError', async () => {
  const database = new PostgresDatabase({ connectionString: url, statementTimeoutMs: 100 });
  const store = new PostgresRunStore({ database });
  const holder = new Client({ connectionString: url });
  try {
    await store.saveTaskSnapshot({
      id: 'held',
      state: 'working',
      created_at: new Date().toISOString(),
    } as never);
    await holder.connect();
    // Another session holds the task's row: the append waits for it until the server cancels it.
    await holder.query('BEGIN');
    await holder.query("SELECT 1 FROM agent_tasks WHERE task_id = 'held' FOR UPDATE");
    const error = await failure(
      store.appendTaskEvents({ tenant: '', principal_id: 'anonymous' }, 'held', [
        { type: 'task.status', task_id: 'held' } as never,
      ]),
    );
    expect(error.data).toEqual({ pg_code: '57014' });
  } finally {
    await holder.end();
    await store.close();
    await database.close();
  }
});
