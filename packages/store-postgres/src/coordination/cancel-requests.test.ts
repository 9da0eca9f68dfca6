import type { CancelRequest, TaskOwner } from '@agent/events';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import { eventually } from './test-support/eventually.js';
import { FAST, killListener, listenerPid, openReplica, sql, type Replica } from './test-support/replicas.js';

const owner: TaskOwner = { tenant: 'acme', principal_id: 'alice' };

let server: TestPostgres;
let url: string;
let a: Replica;
let b: Replica;
beforeAll(async () => {
  server = await startTestPostgres();
  url = await server.createDatabase();
}, 60_000);
afterAll(() => server?.stop());

beforeEach(async () => {
  a = await openReplica(url);
  b = await openReplica(url);
});
afterEach(async () => {
  await a.close();
  await b.close();
});

function collect(replica: Replica): CancelRequest[] {
  const received: CancelRequest[] = [];
  replica.coordination.onCancelRequest((request) => received.push(request));
  return received;
}

async function storedRequests(): Promise<number> {
  const [row] = await sql<{ count: string }>(url, 'SELECT count(*) AS count FROM agent_cancel_requests');
  return Number(row!.count);
}

it('hands a request from another replica to the replica that claims the task, once', async () => {
  const atA = collect(a);
  const atB = collect(b);
  await a.coordination.claimTask(owner, 'task-1');

  await b.coordination.requestCancel({ owner, task_id: 'task-1', reason: 'user asked' });
  await eventually('the request at A', () => atA.length > 0);
  expect(atA).toEqual([{ owner, task_id: 'task-1', reason: 'user asked' }]);
  // Delivered means deleted: neither the notification nor a later poll can hand it out again.
  expect(await storedRequests()).toBe(0);

  await b.coordination.requestCancel({ owner, task_id: 'task-1' });
  await eventually('the second request at A', () => atA.length > 1);
  expect(atA).toEqual([
    { owner, task_id: 'task-1', reason: 'user asked' },
    { owner, task_id: 'task-1' },
  ]);
  expect(atB).toEqual([]);
});

it('delivers each of many requests exactly once while notifications and polls race for them', async () => {
  const atA = collect(a);
  await a.coordination.claimTask(owner, 'busy');
  const reasons = Array.from({ length: 40 }, (_, index) => `r${index}`);
  await Promise.all(
    reasons.map((reason) => b.coordination.requestCancel({ owner, task_id: 'busy', reason })),
  );
  await eventually('every request at A', () => atA.length >= reasons.length);
  expect(atA.map((request) => request.reason).sort()).toEqual([...reasons].sort());
  expect(await storedRequests()).toBe(0);
});

it('delivers a request for a task nobody claims to nobody, and forgets it', async () => {
  const atA = collect(a);
  const atB = collect(b);
  await b.coordination.requestCancel({ owner, task_id: 'unclaimed', reason: 'stale' });
  // The sweep drops what can never be delivered; nothing else changes.
  await eventually('the undeliverable request to be dropped', async () => (await storedRequests()) === 0);
  expect(atA).toEqual([]);
  expect(atB).toEqual([]);

  // A later run of that id does not receive it, and requests for it work as usual.
  await a.coordination.claimTask(owner, 'unclaimed');
  await b.coordination.requestCancel({ owner, task_id: 'unclaimed', reason: 'fresh' });
  await eventually('the fresh request at A', () => atA.length > 0);
  expect(atA).toEqual([{ owner, task_id: 'unclaimed', reason: 'fresh' }]);
  expect(atB).toEqual([]);
});

it('does not hand a request made for an earlier run to the next run of the task', async () => {
  const atA = collect(a);
  // Nobody listens on B, so the request made while B ran the task stays stored until A's run
  // claims the task.
  await b.coordination.claimTask(owner, 'rerun');
  await a.coordination.requestCancel({ owner, task_id: 'rerun', reason: 'old run' });
  await a.coordination.claimTask(owner, 'rerun');
  await a.coordination.requestCancel({ owner, task_id: 'rerun', reason: 'this run' });
  await eventually('the request for this run at A', () => atA.length > 0);
  expect(atA).toEqual([{ owner, task_id: 'rerun', reason: 'this run' }]);
});

it('keeps requests until someone listens, and stops handing them to a listener that left', async () => {
  await a.coordination.claimTask(owner, 'later');
  await b.coordination.requestCancel({ owner, task_id: 'later', reason: 'first' });
  expect(await storedRequests()).toBe(1);
  const first: CancelRequest[] = [];
  const stop = a.coordination.onCancelRequest((request) => first.push(request));
  await eventually('the stored request at the new listener', () => first.length > 0);
  stop();
  const second = collect(a);
  await b.coordination.requestCancel({ owner, task_id: 'later', reason: 'second' });
  await eventually('the second request', () => second.length > 0);
  expect(first.map((request) => request.reason)).toEqual(['first']);
  expect(second.map((request) => request.reason)).toEqual(['second']);
});

it('still delivers when the notification is lost, and listens again afterwards', async () => {
  const atA = collect(a);
  await a.coordination.claimTask(owner, 'task-2');
  const before = await killListener(url, a.coordination.replicaId);

  await b.coordination.requestCancel({ owner, task_id: 'task-2', reason: 'while deaf' });
  await eventually('the request at A through the poll', () => atA.length > 0);
  expect(atA).toEqual([{ owner, task_id: 'task-2', reason: 'while deaf' }]);

  const after = await eventually('a new LISTEN connection for A', async () => {
    const pid = await listenerPid(url, a.coordination.replicaId);
    return pid !== undefined && pid !== before ? pid : undefined;
  });
  expect(after).not.toBe(before);
});

it('relies on the notification alone when the poll is far away', async () => {
  // With a poll interval longer than the test can last, only a NOTIFY can deliver.
  const slow = await openReplica(url, { ...FAST, pollIntervalMs: 600_000 });
  try {
    const received = collect(slow);
    await slow.coordination.claimTask(owner, 'task-3');
    await b.coordination.requestCancel({ owner, task_id: 'task-3' });
    await eventually('the request at the slow-polling replica', () => received.length > 0);
    expect(received).toEqual([{ owner, task_id: 'task-3' }]);
  } finally {
    await slow.close();
  }
});
