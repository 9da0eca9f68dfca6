import {
  ANONYMOUS_PRINCIPAL,
  createTask,
  silentLogger,
  type AgentError,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { ServerPipeline } from './pipeline.js';
import type { RequestInfo } from './request.js';
import { ContractHandler } from './testing/contract-handler.js';
import { SharedBackend } from './test-support/shared-store.js';

// Replicas of one agent over one shared store: each has its own handler, pipeline and ledger, as
// separate processes would; the shared backend stands in for the database and its signals.

function request(): RequestInfo {
  return { headers: {}, signal: new AbortController().signal };
}

function replicas(count: number) {
  const backend = new SharedBackend();
  const nodes = Array.from({ length: count }, (_, i) => {
    const handler = new ContractHandler();
    const store = backend.replica(`replica-${i}`);
    const pipeline = new ServerPipeline({ transport: 'http', handler, store, logger: silentLogger });
    pipeline.markReady();
    return { handler, store, pipeline };
  });
  return { backend, nodes };
}

async function collect(feed: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  for await (const event of feed) events.push(event);
  return events;
}

/** Resolves once the shared store holds a record of the task. */
async function stored(backend: SharedBackend, taskId: string): Promise<void> {
  while (!(await backend.store.getTaskRecord(taskId, { tenant: '', principal_id: ANONYMOUS_PRINCIPAL }))) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const finals = (events: TaskEvent[]) => events.filter((e) => e.type === 'task.status' && e.final);

describe('replicas sharing a store', () => {
  it('a task running on A is read, listed, followed and canceled from B and C', async () => {
    const { backend, nodes } = replicas(3);
    const [a, b, c] = nodes as [(typeof nodes)[0], (typeof nodes)[0], (typeof nodes)[0]];
    const task = createTask('hold', { id: 'shared-1' });
    const streamOnA = collect(a.pipeline.stream(await a.pipeline.open(request()), task));
    await a.handler.whenRunning(task.id);

    // A streamed `hold` records no status of its own until it ends: still `submitted` in the store.
    const onB = await b.pipeline.get(await b.pipeline.open(request()), { task_id: task.id });
    expect(onB.state).toBe('submitted');
    const listed = await c.pipeline.list(await c.pipeline.open(request()), {});
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);

    const followOnB = collect(b.pipeline.subscribe(await b.pipeline.open(request()), { task_id: task.id }));
    const canceled = await c.pipeline.cancel(await c.pipeline.open(request()), {
      task_id: task.id,
      reason: 'from C',
    });
    expect(canceled.state).toBe('canceled');
    expect(canceled.metadata?.cancel_reason).toBe('from C');
    expect(a.handler.calls).toContain('cancelTask');
    expect(c.handler.calls).not.toContain('cancelTask');

    const [eventsOnA, eventsOnB] = await Promise.all([streamOnA, followOnB]);
    for (const events of [eventsOnA, eventsOnB]) {
      expect(finals(events)).toHaveLength(1);
      expect(finals(events)[0]).toMatchObject({ state: 'canceled' });
    }
    // B saw the same numbered log as A's caller.
    expect(eventsOnB.map((e) => e.sequence)).toEqual(eventsOnA.map((e) => e.sequence));
    expect(backend.openWatches).toBe(0);
  });

  it('a unary caller on A and a resubmission on B both get the task canceled from B', async () => {
    const { backend, nodes } = replicas(2);
    const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    const task = createTask('hold', { id: 'shared-2' });
    const onA = a.pipeline.send(await a.pipeline.open(request()), task);
    await a.handler.whenRunning(task.id);
    // B can tell the id is taken once A's first snapshot is in the shared store.
    await stored(backend, task.id);
    const resubmittedOnB = b.pipeline.send(await b.pipeline.open(request()), task);
    const canceled = await b.pipeline.cancel(await b.pipeline.open(request()), { task_id: task.id });
    const [fromA, fromB] = await Promise.all([onA, resubmittedOnB]);
    for (const result of [canceled, fromA, fromB]) expect(result.state).toBe('canceled');
    // Only A ran it: the resubmission on B attached to the run through the store.
    expect(b.handler.calls).toEqual([]);
  });

  it('a subscriber on B resumes after the last sequence it saw, nothing lost or repeated', async () => {
    const { nodes } = replicas(2);
    const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    const task = createTask('hold', { id: 'shared-3' });
    const onA = collect(a.pipeline.stream(await a.pipeline.open(request()), task));
    await a.handler.whenRunning(task.id);

    const first = b.pipeline.subscribe(await b.pipeline.open(request()), { task_id: task.id });
    const seen: TaskEvent[] = [];
    for await (const event of first) {
      seen.push(event);
      break; // the connection drops
    }
    const resumed = collect(
      b.pipeline.subscribe(await b.pipeline.open(request()), { task_id: task.id, after: seen[0]!.sequence }),
    );
    await a.pipeline.cancel(await a.pipeline.open(request()), { task_id: task.id });
    const rest = await resumed;
    const all = [...seen, ...rest].map((e) => e.sequence);
    expect(all).toEqual((await onA).map((e) => e.sequence));
  });

  it('another owner reaches nothing of a task running elsewhere', async () => {
    const { nodes } = replicas(2);
    const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    const task = createTask('hold', { id: 'shared-4' });
    const onA = a.pipeline.send(await a.pipeline.open(request()), task);
    await a.handler.whenRunning(task.id);
    const bob = await b.pipeline.open({ ...request(), tenant: 'other' });
    for (const attempt of [
      b.pipeline.get(bob, { task_id: task.id }),
      b.pipeline.cancel(bob, { task_id: task.id }),
    ]) {
      expect(((await attempt.catch((e: unknown) => e)) as AgentError).code).toBe('TASK_NOT_FOUND');
    }
    await a.pipeline.cancel(await a.pipeline.open(request()), { task_id: task.id });
    expect((await onA).state).toBe('canceled');
  });

  it('a cancel from B for a task A finished answers TASK_NOT_CANCELABLE', async () => {
    const { nodes } = replicas(2);
    const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    const done: Task = await a.pipeline.send(
      await a.pipeline.open(request()),
      createTask('echo hi', { id: 's5' }),
    );
    expect(done.state).toBe('completed');
    const error = (await b.pipeline
      .cancel(await b.pipeline.open(request()), { task_id: 's5' })
      .catch((e: unknown) => e)) as AgentError;
    expect(error.code).toBe('TASK_NOT_CANCELABLE');
  });
});
