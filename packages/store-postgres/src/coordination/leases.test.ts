import { AlreadyExistsError, ReplicaLostError, ValueError } from '@agent/core';
import type { TaskOwner } from '@agent/events';
import { PostgresDatabase } from '../database.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import type { LostReplica } from './options.js';
import { PostgresCoordination } from './postgres-coordination.js';
import { eventually } from './test-support/eventually.js';
import { FAST, openReplica, sql, type Replica } from './test-support/replicas.js';

const owner: TaskOwner = { tenant: 'acme', principal_id: 'alice' };

let server: TestPostgres;
let url: string;
const opened: Replica[] = [];
beforeAll(async () => {
  server = await startTestPostgres();
  url = await server.createDatabase();
}, 60_000);
afterAll(() => server?.stop());
afterEach(async () => {
  for (const replica of opened.splice(0)) await replica.close();
});

async function replica(options = FAST): Promise<Replica> {
  const started = await openReplica(url, options);
  opened.push(started);
  return started;
}

async function leaseOf(replicaId: string): Promise<{ live: boolean } | undefined> {
  const [row] = await sql<{ live: boolean }>(
    url,
    'SELECT expires_at > now() AS live FROM agent_replicas WHERE replica_id = $1',
    [replicaId],
  );
  return row;
}

it('answers here, elsewhere and nowhere as claims come, move and go', async () => {
  const a = await replica();
  const b = await replica();
  expect(await a.coordination.placement(owner, 't1')).toBe('nowhere');
  await a.coordination.claimTask(owner, 't1');
  expect(await a.coordination.placement(owner, 't1')).toBe('here');
  expect(await b.coordination.placement(owner, 't1')).toBe('elsewhere');
  // Another owner's task of the same id is another task.
  expect(await b.coordination.placement({ tenant: 'acme', principal_id: 'bob' }, 't1')).toBe('nowhere');

  // A release by a replica that does not hold the claim changes nothing.
  await b.coordination.releaseTask(owner, 't1');
  expect(await b.coordination.placement(owner, 't1')).toBe('elsewhere');

  // The task continued on B: the claim moves, and A's late release leaves B's claim alone.
  await b.coordination.claimTask(owner, 't1');
  expect(await a.coordination.placement(owner, 't1')).toBe('elsewhere');
  await a.coordination.releaseTask(owner, 't1');
  expect(await b.coordination.placement(owner, 't1')).toBe('here');
  await b.coordination.releaseTask(owner, 't1');
  expect(await a.coordination.placement(owner, 't1')).toBe('nowhere');
});

it('answers nowhere once the lease of the claiming replica ran out', async () => {
  const a = await replica();
  // An observer that is never started: it does not sweep, so A's claim stays while its lease lapses.
  const db = new PostgresDatabase({ connectionString: url });
  const observer = new PostgresCoordination(db, FAST);
  try {
    await a.coordination.claimTask(owner, 't2');
    expect(await observer.placement(owner, 't2')).toBe('elsewhere');
    // close() with a claim left: the lease row stays and expires, as when a process dies.
    await a.coordination.close();
    expect(await leaseOf(a.coordination.replicaId)).toEqual({ live: true });
    await eventually(
      'A lease to run out',
      async () => (await leaseOf(a.coordination.replicaId))?.live === false,
    );
    expect(await observer.placement(owner, 't2')).toBe('nowhere');
    const [claim] = await sql(url, 'SELECT 1 FROM agent_task_claims WHERE task_id = $1', ['t2']);
    expect(claim).toBeDefined();
  } finally {
    await observer.close();
    await db.close();
  }
});

it('finds its own lease gone: reports itself lost once and claims nothing more', async () => {
  const lost: LostReplica[] = [];
  const a = await replica({ ...FAST, onLost: (report) => lost.push(report) });
  await a.coordination.claimTask(owner, 't3');
  // As if the process had stalled past its lease.
  await sql(url, "UPDATE agent_replicas SET expires_at = now() - interval '1 second' WHERE replica_id = $1", [
    a.coordination.replicaId,
  ]);
  await eventually('A to notice', () => a.coordination.state === 'lost');
  await expect(a.coordination.claimTask(owner, 't4')).rejects.toBeInstanceOf(ReplicaLostError);
  expect(await a.coordination.placement(owner, 't3')).toBe('nowhere');
  await eventually(
    'its lease row to be swept',
    async () => (await leaseOf(a.coordination.replicaId)) === undefined,
  );
  expect(
    lost.filter((report) => report.replica_id === a.coordination.replicaId && report.tasks.length === 0),
  ).toHaveLength(1);
});

it('drops its lease row on close when it claims nothing, and close() twice is harmless', async () => {
  const a = await replica();
  await a.coordination.claimTask(owner, 't5');
  await a.coordination.releaseTask(owner, 't5');
  await a.coordination.close();
  await a.coordination.close();
  expect(await leaseOf(a.coordination.replicaId)).toBeUndefined();
  expect(a.coordination.state).toBe('closed');
  await expect(a.coordination.claimTask(owner, 't6')).rejects.toThrow('closed');
});

it('refuses a second live replica under the same id, and bad options', async () => {
  const a = await replica();
  const db = new PostgresDatabase({ connectionString: url });
  try {
    const twin = new PostgresCoordination(db, { ...FAST, replicaId: a.coordination.replicaId });
    await expect(twin.start()).rejects.toBeInstanceOf(AlreadyExistsError);
    await twin.close();
    expect(() => new PostgresCoordination(db, { leaseMs: 100, renewEveryMs: 100 })).toThrow(ValueError);
    expect(() => new PostgresCoordination(db, { pollIntervalMs: 0 })).toThrow(ValueError);
    expect(() => new PostgresCoordination(db, { leasMs: 100 } as never)).toThrow(/leasMs/);
    const idle = new PostgresCoordination(db, FAST);
    await expect(idle.claimTask(owner, 't7')).rejects.toThrow('not started');
  } finally {
    await db.close();
  }
});
