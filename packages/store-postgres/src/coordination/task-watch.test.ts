import { createTask, nowIso, UnavailableError } from '@agent/core';
import type { TaskOwner, TaskWatch } from '@agent/events';
import { PostgresRunStore } from '../run-store/postgres-run-store.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import { eventually } from './test-support/eventually.js';
import { FAST, killListener, listenerPid, openReplica, sql, type Replica } from './test-support/replicas.js';

const owner: TaskOwner = { tenant: 'acme', principal_id: 'alice' };
// Longer than any test lasts: a watch of B that resolves was woken by a notification, not its poll.
const DEAF_POLL = { ...FAST, pollIntervalMs: 600_000 };

let server: TestPostgres;
let url: string;
let a: Replica;
let b: Replica;
let open: TaskWatch[];
beforeAll(async () => {
  server = await startTestPostgres();
  url = await server.createDatabase();
}, 60_000);
afterAll(() => server?.stop());

beforeEach(async () => {
  a = await openReplica(url);
  b = await openReplica(url, DEAF_POLL);
  open = [];
});
afterEach(async () => {
  for (const watch of open) watch.close();
  await a.close();
  await b.close();
});

function watch(replica: Replica, taskId: string): TaskWatch {
  const opened = replica.coordination.watchTask(owner, taskId);
  open.push(opened);
  return opened;
}

function announce(taskId: string, sequence = 1): Promise<unknown> {
  return sql(url, 'SELECT pg_notify($1, $2)', [
    'agent_task_events',
    JSON.stringify({ tenant: owner.tenant, principal_id: owner.principal_id, task_id: taskId, sequence }),
  ]);
}

it('wakes a watch on B when A appends to the task through the run store', async () => {
  const store = new PostgresRunStore({ database: a.db });
  const task = { ...createTask('hello', { id: 'task-1' }), state: 'working' as const };
  await store.saveTaskSnapshot(task, { owner });
  const followed = watch(b, 'task-1');
  const other = watch(b, 'task-other');
  await store.appendTaskEvents(owner, 'task-1', [
    { type: 'task.status', task_id: 'task-1', state: 'working', final: false, timestamp: nowIso() },
  ]);
  await followed.next();
  const events = await store.listTaskEvents(owner, 'task-1');
  expect(events.map((event) => event.sequence)).toEqual([1]);
  // Another task's watch was not woken. Notifications arrive in order on B's one connection, so once
  // a later announcement has woken a probe, a wrongly set flag would have resolved other.next().
  let otherWoke = false;
  void other.next().then(() => (otherWoke = true));
  const probe = watch(b, 'task-probe');
  await announce('task-probe');
  await probe.next();
  expect(otherWoke).toBe(false);
  await announce('task-other');
  await eventually('the other watch to wake on its own task', () => otherWoke);
});

it('does not lose a change announced between two next() calls', async () => {
  const watched = watch(b, 'task-2');
  const probe = watch(b, 'task-2');
  await announce('task-2');
  // Once the probe woke, the notification reached B; `watched` was not waiting then.
  await probe.next();
  await watched.next();
  // The change was consumed: the next call waits for the next one.
  let woke = false;
  void watched.next().then(() => (woke = true));
  await announce('task-2', 2);
  await eventually('the watch to wake on the second change', () => woke);
});

it('resolves after the poll interval without any notification', async () => {
  const polled = watch(a, 'quiet');
  await expect(polled.next()).resolves.toBeUndefined();
});

it("rejects with the signal's reason on abort, whether before or while waiting", async () => {
  const watched = watch(b, 'task-3');
  const early = new AbortController();
  early.abort(new Error('gone before'));
  await expect(watched.next(early.signal)).rejects.toThrow('gone before');
  const late = new AbortController();
  const waiting = watched.next(late.signal);
  late.abort(new Error('gone while waiting'));
  await expect(waiting).rejects.toThrow('gone while waiting');
  // The watch still works afterwards.
  const next = watched.next();
  await announce('task-3');
  await next;
});

it('wakes every watch after the LISTEN connection comes back, since announcements may be lost', async () => {
  const watched = watch(b, 'task-4');
  const before = await killListener(url, b.coordination.replicaId);
  await watched.next();
  await eventually('a new LISTEN connection for B', async () => {
    const pid = await listenerPid(url, b.coordination.replicaId);
    return pid !== undefined && pid !== before;
  });
});

it('closes: a waiting next() resolves, later calls reject, and close() again is harmless', async () => {
  const watched = watch(b, 'task-5');
  const waiting = watched.next();
  watched.close();
  await waiting;
  await expect(watched.next()).rejects.toBeInstanceOf(UnavailableError);
  watched.close();
});
