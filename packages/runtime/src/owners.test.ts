import {
  AgentError,
  createTask,
  TaskAlreadyRunningError,
  TaskNotCancelableError,
  TaskNotFoundError,
  type CallContext,
  type Task,
} from '@agent/core';
import { DEFAULT_OWNER, InMemoryRunStore } from '@agent/events';
import { Agent } from './agent.js';
import { aborted, deferred } from './test-support/helpers.js';

/** A call as the server pipeline hands it over: a tenant (`''` by default) and maybe a principal. */
function ctxOf(principalId: string | null, tenant = ''): CallContext {
  return {
    tenant,
    signal: new AbortController().signal,
    headers: {},
    transport: 'memory',
    ...(principalId === null ? {} : { security: { principalId, token: 'opaque', metadata: {} } }),
  };
}

/** An agent whose tasks run until canceled; `started` tells when a task (by owner) is inside execute. */
function blockingAgent(options: { runStore?: InMemoryRunStore } = {}) {
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  let running = 0;
  const agent = new Agent({
    card: { name: 'owners' },
    ...options,
    execute: async (_task, run) => {
      running += 1;
      for (const waiter of waiting.filter((entry) => running >= entry.count)) waiter.resolve();
      await aborted(run.signal);
    },
  });
  const started = (count: number): Promise<void> => {
    if (running >= count) return Promise.resolve();
    const gate = deferred();
    waiting.push({ count, resolve: gate.resolve });
    return gate.promise;
  };
  return { agent, started };
}

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AgentError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

function answer(error: AgentError, taskId: string): { code: string; message: string; data: unknown } {
  // An unknown id's answer names the id asked for; only that part may differ between two ids.
  return {
    code: error.code,
    message: error.message.replace(taskId, '<id>'),
    data: JSON.parse(JSON.stringify(error.data ?? null).replace(taskId, '<id>')),
  };
}

const alice = ctxOf('alice');
const bob = ctxOf('bob');
const aliceElsewhere = ctxOf('alice', 'acme');

describe('task owners', () => {
  it('the same id under two principals, and under one principal in two tenants, are independent tasks', async () => {
    const { agent, started } = blockingAgent();
    const task = createTask('x');
    const runs = [agent.runTask(task, alice), agent.runTask(task, bob), agent.runTask(task, aliceElsewhere)];
    await started(3);
    expect(agent.activeTaskIds).toEqual([task.id, task.id, task.id]);
    const canceled = await agent.cancelTask(task.id, 'bob stops his own', bob);
    expect(canceled).toMatchObject({ id: task.id, state: 'canceled' });
    expect(agent.activeTaskIds).toEqual([task.id, task.id]);
    expect(await agent.getTask(task.id, alice)).toMatchObject({ state: 'working' });
    expect(await agent.getTask(task.id, aliceElsewhere)).toMatchObject({ state: 'working' });
    await agent.cancelTask(task.id, 'done', alice);
    await agent.cancelTask(task.id, 'done', aliceElsewhere);
    const finished = await Promise.all(runs);
    expect(finished.map((entry) => entry.metadata.cancel_reason)).toEqual([
      'done',
      'bob stops his own',
      'done',
    ]);
  });

  it("another owner's cancel is answered exactly as an unknown id, and the task keeps running", async () => {
    const { agent, started } = blockingAgent();
    const task = createTask('x');
    const run = agent.runTask(task, alice);
    await started(1);
    const unknownId = createTask('never sent').id;
    const unknown = await rejection(agent.cancelTask(unknownId, 'probe', bob));
    expect(unknown).toBeInstanceOf(TaskNotFoundError);
    for (const stranger of [bob, aliceElsewhere, ctxOf(null), undefined]) {
      const refused = await rejection(agent.cancelTask(task.id, 'probe', stranger));
      expect(refused).toBeInstanceOf(TaskNotFoundError);
      expect(answer(refused, task.id)).toEqual(answer(unknown, unknownId));
    }
    expect(agent.getCancellationToken(task.id, alice)?.isCancelled).toBe(false);
    expect(await agent.getTask(task.id, alice)).toMatchObject({ state: 'working' });
    const canceled = await agent.cancelTask(task.id, 'mine', alice);
    expect(canceled).toMatchObject({ state: 'canceled', metadata: { cancel_reason: 'mine' } });
    expect(await run).toEqual(canceled);
  });

  it("another owner's resubmission runs as its own task; the owner's own resubmission is refused", async () => {
    const { agent, started } = blockingAgent();
    const task = createTask('x');
    const first = agent.runTask(task, alice);
    await started(1);
    await expect(agent.runTask(task, alice)).rejects.toBeInstanceOf(TaskAlreadyRunningError);
    const second = agent.runTask(task, bob);
    await started(2);
    expect(await agent.getTask(task.id, bob)).toMatchObject({ state: 'working' });
    await agent.cancelTask(task.id, 'bob', bob);
    expect(await second).toMatchObject({ state: 'canceled' });
    expect(await agent.getTask(task.id, alice)).toMatchObject({ state: 'working' });
    await agent.cancelTask(task.id, 'alice', alice);
    expect(await first).toMatchObject({ state: 'canceled', metadata: { cancel_reason: 'alice' } });
  });

  it("getTask of another owner's task is null, running or finished, with and without a run store", async () => {
    for (const runStore of [undefined, new InMemoryRunStore()]) {
      const { agent, started } = blockingAgent({ runStore });
      const task = createTask('x');
      const run = agent.runTask(task, alice);
      await started(1);
      expect(await agent.getTask(task.id, bob)).toBeNull();
      expect(await agent.getTask(task.id, aliceElsewhere)).toBeNull();
      expect(await agent.getTask(task.id)).toBeNull();
      await agent.cancelTask(task.id, 'x', alice);
      await run;
      expect(await agent.getTask(task.id, alice)).toMatchObject({ state: 'canceled' });
      expect(await agent.getTask(task.id, bob)).toBeNull();
      expect(await agent.getTask(task.id, aliceElsewhere)).toBeNull();
    }
  });

  it('snapshots are stored under the owner and listTasks reads only the caller’s', async () => {
    const store = new InMemoryRunStore();
    const agent = new Agent({ card: { name: 'owners' }, runStore: store, execute: () => undefined });
    const a = await agent.runTask(createTask('a'), alice);
    const b = await agent.runTask(createTask('b'), bob);
    const shared = createTask('shared');
    await agent.runTask(shared, alice);
    await agent.runTask(shared, aliceElsewhere);
    expect(await store.getTaskRecord(a.id, { tenant: '', principal_id: 'alice' })).toMatchObject({
      tenant: '',
      principal_id: 'alice',
      state: 'completed',
    });
    expect(await store.getTaskRecord(a.id, DEFAULT_OWNER)).toBeNull();
    expect(await store.getTaskRecord(shared.id, { tenant: 'acme', principal_id: 'alice' })).not.toBeNull();
    const ids = async (ctx?: CallContext) => (await agent.listTasks({}, ctx)).map((task) => task.id).sort();
    expect(await ids(alice)).toEqual([a.id, shared.id].sort());
    expect(await ids(bob)).toEqual([b.id]);
    expect(await ids(aliceElsewhere)).toEqual([shared.id]);
    expect(await ids(undefined)).toEqual([]);
  });

  it('listTasks without a run store lists only the caller’s running tasks', async () => {
    const { agent, started } = blockingAgent();
    const mine = createTask('a');
    const theirs = createTask('b');
    const runs = [agent.runTask(mine, alice), agent.runTask(theirs, bob)];
    await started(2);
    expect((await agent.listTasks({}, alice)).map((task) => task.id)).toEqual([mine.id]);
    expect((await agent.listTasks({}, bob)).map((task) => task.id)).toEqual([theirs.id]);
    expect(await agent.listTasks({}, aliceElsewhere)).toEqual([]);
    await agent.stop();
    expect((await Promise.all(runs)).map((task) => task.state)).toEqual(['canceled', 'canceled']);
  });

  it('a finished task answers its owner’s cancel with TASK_NOT_CANCELABLE and a stranger’s with TASK_NOT_FOUND', async () => {
    const agent = new Agent({ card: { name: 'owners' }, execute: () => undefined });
    const task = createTask('x');
    await agent.runTask(task, alice);
    await expect(agent.cancelTask(task.id, 'late', alice)).rejects.toBeInstanceOf(TaskNotCancelableError);
    const unknownId = createTask('never sent').id;
    const unknown = await rejection(agent.cancelTask(unknownId, 'late', bob));
    const refused = await rejection(agent.cancelTask(task.id, 'late', bob));
    expect(refused).toBeInstanceOf(TaskNotFoundError);
    expect(answer(refused, task.id)).toEqual(answer(unknown, unknownId));
    await expect(agent.cancelTask(task.id, 'late', aliceElsewhere)).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('calls without a context act for the default owner, as do calls naming no tenant and no principal', async () => {
    const { agent, started } = blockingAgent({ runStore: new InMemoryRunStore() });
    const task = createTask('x');
    const run: Promise<Task> = agent.runTask(task);
    await started(1);
    expect(agent.getCancellationToken(task.id)).toBeDefined();
    expect(agent.getCancellationToken(task.id, ctxOf(null))).toBe(agent.getCancellationToken(task.id));
    expect(await agent.getTask(task.id, ctxOf(null))).toMatchObject({ state: 'working' });
    expect(await agent.getTask(task.id, alice)).toBeNull();
    await expect(agent.runTask(task, ctxOf(null))).rejects.toBeInstanceOf(TaskAlreadyRunningError);
    await agent.cancelTask(task.id, 'anonymous', ctxOf(null));
    expect(await run).toMatchObject({ state: 'canceled', metadata: { cancel_reason: 'anonymous' } });
    await expect(agent.cancelTask(task.id)).rejects.toBeInstanceOf(TaskNotCancelableError);
    expect(await agent.runStore?.getTaskRecord(task.id, DEFAULT_OWNER)).toMatchObject({ state: 'canceled' });
  });
});
