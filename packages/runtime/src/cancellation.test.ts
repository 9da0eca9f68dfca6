import { getEventListeners } from 'node:events';
import * as net from 'node:net';
import {
  createArtifact,
  createTask,
  TaskCanceledError,
  TaskNotCancelableError,
  TaskNotFoundError,
  type JsonObject,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { InMemoryEventSink, InMemoryRunStore } from '@agent/events';
import type { TaskRegistry } from './task-registry.js';
import { Agent } from './agent.js';
import { approve } from './approvals.js';
import { raceAbort, sleep } from '@agent/core/internal';
import { abortError, CancellationToken, raceCancel, sleepUnlessCanceled } from './cancellation.js';
import { aborted, deferred, finalStatuses, types } from './test-support/helpers.js';
import { InProcessNetwork } from './test-support/in-process-transport.js';
import { ScriptedLLM } from './testing/index.js';

/** Reads a stream until `predicate` matches, and hands back the iterator to continue. */
async function readUntil(stream: AsyncIterable<TaskEvent>, predicate: (event: TaskEvent) => boolean) {
  const iterator = stream[Symbol.asyncIterator]();
  const seen: TaskEvent[] = [];
  for (;;) {
    const next = await iterator.next();
    if (next.done) throw new Error(`stream ended before the awaited event; saw ${types(seen).join(',')}`);
    seen.push(next.value);
    if (predicate(next.value)) break;
  }
  const rest = async (): Promise<TaskEvent[]> => {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return seen;
      seen.push(next.value);
    }
  };
  return { seen, rest };
}

function expectCanceled(events: TaskEvent[], task: Task, reason: string): void {
  expect(finalStatuses(events)).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ type: 'task.status', final: true, state: 'canceled' });
  expect(types(events)).not.toContain('task.error');
  expect(task.state).toBe('canceled');
  expect(task.metadata.cancel_reason).toBe(reason);
  expect(task.metadata.run_context).toMatchObject({ canceled: true, metadata: { cancel_reason: reason } });
  expect(task.metadata.error).toBeUndefined();
}

/** Listeners a token keeps before its signal exists (read from its private fields). */
function earlyListeners(token: CancellationToken): number {
  const fields = token as unknown as { first: unknown; others: Set<unknown> | null };
  return (fields.first === null ? 0 : 1) + (fields.others?.size ?? 0);
}

describe('cancellation', () => {
  it('while the model runs: the call is aborted and the stream ends with one canceled status', async () => {
    const callAborted = deferred();
    const llm = new ScriptedLLM([
      async (_request, { signal }) => {
        await aborted(signal);
        callAborted.resolve();
        throw signal.reason;
      },
    ]);
    const agent = new Agent({ card: { name: 'a' }, llm });
    const task = createTask('think hard');
    const { rest } = await readUntil(
      agent.handleTaskStreaming(task, undefined as never),
      (event) => event.type === 'llm.call.started',
    );
    expect(agent.activeTaskIds).toEqual([task.id]);
    const canceled = await agent.cancelTask(task.id, 'user stop');
    await callAborted.promise;
    const events = await rest();
    expectCanceled(events, canceled, 'user stop');
    expect(types(events)).not.toContain('llm.call.completed');
    expect(agent.activeTaskIds).toEqual([]);
    expect(agent.getCancellationToken(task.id)).toBeUndefined();
  });

  it('while a tool runs: the tool gets the abort and no action.completed/failed follows', async () => {
    const toolSawAbort = deferred<unknown>();
    const agent = new Agent({
      card: { name: 'a' },
      execute: async (_task, run) => void (await run.callTool('slow')),
    });
    agent.registerTool({
      name: 'slow',
      handler: async (_args, { signal }) => {
        await aborted(signal);
        toolSawAbort.resolve(signal.reason);
        return 'late result';
      },
    });
    const task = createTask('go');
    const { rest } = await readUntil(
      agent.handleTaskStreaming(task, undefined as never),
      (event) => event.type === 'action.started',
    );
    const canceled = await agent.cancelTask(task.id, 'too slow');
    expect(await toolSawAbort.promise).toBeInstanceOf(TaskCanceledError);
    const events = await rest();
    expectCanceled(events, canceled, 'too slow');
    expect(types(events)).not.toContain('action.completed');
    expect(types(events)).not.toContain('action.failed');
  });

  it('while awaiting approval: the handler is released and the tool never runs', async () => {
    const handlerReleased = deferred();
    let ran = false;
    const agent = new Agent({
      card: { name: 'a' },
      policy: { 'records.delete': 'require_approval' },
      approvalHandler: async (request, { signal }) => {
        await aborted(signal);
        handlerReleased.resolve();
        return approve(request, 'too-late');
      },
      execute: async (_task, run) => void (await run.callTool('delete_record', { id: 'r' })),
    });
    agent.registerTool({
      name: 'delete_record',
      capabilities: ['records.delete'],
      handler: () => {
        ran = true;
      },
    });
    const task = createTask('go');
    const { rest } = await readUntil(
      agent.handleTaskStreaming(task, undefined as never),
      (event) => event.type === 'approval.required',
    );
    const canceled = await agent.cancelTask(task.id, 'nobody approves');
    await handlerReleased.promise;
    const events = await rest();
    expectCanceled(events, canceled, 'nobody approves');
    expect(types(events)).not.toContain('approval.decided');
    expect(ran).toBe(false);
  });

  it('of a delegated child: canceling the parent cancels the child task too', async () => {
    const network = new InProcessNetwork();
    const childStarted = deferred<string>();
    const child = new Agent({
      card: { name: 'child' },
      transport: network.transport('child'),
      execute: async (task, run) => {
        childStarted.resolve(task.id);
        await run.sleep(60_000);
      },
    });
    const parent = new Agent({
      card: { name: 'parent' },
      transport: network.transport('parent'),
      execute: async (_task, run) => void (await run.sendTaskTo('child', createTask('sub-job'))),
    });
    const parentTask = createTask('job');
    const running = parent.handleTask(parentTask);
    const childId = await childStarted.promise;
    expect(child.activeTaskIds).toEqual([childId]);
    const canceled = await parent.cancelTask(parentTask.id, 'abandon job');
    expect(canceled.state).toBe('canceled');
    expect((await running).state).toBe('canceled');
    // stop() waits for the scheduled child cancel.
    await parent.stop();
    const childTask = (await child.getTask(childId)) as Task;
    expect(childTask.state).toBe('canceled');
    expect(childTask.metadata.cancel_reason).toBe('abandon job');
    expect(child.activeTaskIds).toEqual([]);
    expect(network.log.map((entry) => `${entry.from}:${entry.operation}:${entry.target}`)).toEqual([
      'parent:send_task:child',
      'parent:cancel_task:child',
    ]);
    const childContext = childTask.metadata.run_context as JsonObject;
    expect(childContext.parent_run_id).toBe((canceled.metadata.run_context as JsonObject).run_id);
    expect(childContext.agent_chain).toEqual(['parent', 'child']);
  });

  it('with a run store, a finished task is remembered by its state only: the store has the task', async () => {
    const store = new InMemoryRunStore();
    const agent = new Agent({
      card: { name: 'a' },
      runStore: store,
      execute: async (_task, run) => {
        await run.addArtifact(createArtifact('y'.repeat(64 * 1024)));
      },
    });
    const done = await agent.handleTask(createTask('big'));
    expect(done.state).toBe('completed');
    const registry = (agent as unknown as { registry: TaskRegistry }).registry;
    expect(registry.finishedState({ tenant: '', principal_id: 'anonymous' }, done.id)).toBe('completed');
    expect(registry.finishedTask({ tenant: '', principal_id: 'anonymous' }, done.id)).toBeUndefined();
    // Still what a caller sees: a late cancel is refused as finished, and the task reads back whole.
    await expect(agent.cancelTask(done.id)).rejects.toBeInstanceOf(TaskNotCancelableError);
    expect((await agent.getTask(done.id))?.artifacts[0]?.parts[0]).toMatchObject({
      content: 'y'.repeat(64 * 1024),
    });
  });

  it('of a finished task is TaskNotCancelableError; of an unknown id TaskNotFoundError', async () => {
    const agent = new Agent({ card: { name: 'a' }, execute: () => undefined });
    const done = await agent.handleTask(createTask('quick'));
    expect(done.state).toBe('completed');
    await expect(agent.cancelTask(done.id)).rejects.toBeInstanceOf(TaskNotCancelableError);
    await expect(agent.cancelTask('never-seen')).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(agent.cancelTask('')).rejects.toMatchObject({ code: 'VALUE_ERROR' });

    const slow = new Agent({ card: { name: 'b' }, execute: (_task, run) => run.sleep(60_000) });
    const task = createTask('slow');
    const result = slow.handleTask(task);
    await slow.cancelTask(task.id);
    await expect(slow.cancelTask(task.id)).rejects.toBeInstanceOf(TaskNotCancelableError);
    expect((await result).metadata.cancel_reason).toBe('canceled');
  });

  it('1,000 tasks run and canceled concurrently leave activeTaskIds empty', async () => {
    const sink = new InMemoryEventSink();
    const agent = new Agent({
      card: { name: 'many' },
      eventSink: sink,
      execute: (_task, run) => run.sleep(60_000),
    });
    const tasks = Array.from({ length: 1000 }, (_, i) => createTask(`t${i}`));
    const results = tasks.map((task) => agent.handleTask(task));
    expect(agent.activeTaskIds).toHaveLength(1000);
    const cancels = await Promise.all(tasks.map((task, i) => agent.cancelTask(task.id, `r${i}`)));
    const finished = await Promise.all(results);
    expect(agent.activeTaskIds).toEqual([]);
    expect(
      finished.every((task, i) => task.state === 'canceled' && task.metadata.cancel_reason === `r${i}`),
    ).toBe(true);
    expect(cancels.map((task) => task.id)).toEqual(tasks.map((task) => task.id));
    const events = sink.toList();
    expect(events.filter((event) => event.type === 'task.error')).toHaveLength(0);
    expect(events.filter((event) => event.final)).toHaveLength(1000);
  });

  it('execute code that ignores the signal or swallows the cancel still ends canceled', async () => {
    const ignoring = new Agent({ card: { name: 'a' }, execute: () => new Promise<void>(() => undefined) });
    const first = createTask('hang');
    const hanging = ignoring.handleTask(first);
    await Promise.resolve();
    expect((await ignoring.cancelTask(first.id, 'stuck')).state).toBe('canceled');
    expect((await hanging).state).toBe('canceled');

    const started = deferred();
    const swallowing = new Agent({
      card: { name: 'b' },
      execute: async (task, run) => {
        started.resolve();
        await run.sleep(60_000).catch(() => undefined);
        return task;
      },
    });
    const second = createTask('swallow');
    const result = swallowing.handleTask(second);
    await started.promise;
    await swallowing.cancelTask(second.id, 'stop');
    expect((await result).state).toBe('canceled');
    expect(swallowing.activeTaskIds).toEqual([]);
  });

  it('the live token serves raiseIfCancelled in long loops', async () => {
    const progressed = deferred();
    const agent = new Agent({
      card: { name: 'a' },
      execute: async (task, run) => {
        const token = agent.getCancellationToken(task.id) as CancellationToken;
        expect(token).toBe(run.token);
        for (let i = 0; ; i += 1) {
          token.raiseIfCancelled();
          if (i === 3) progressed.resolve();
          await new Promise((resolve) => setImmediate(resolve));
        }
      },
    });
    const task = createTask('loop');
    const result = agent.handleTask(task);
    await progressed.promise;
    await agent.cancelTask(task.id, 'enough');
    expect((await result).state).toBe('canceled');
  });

  it('a consumer that stops iterating is not a cancel: the run completes', async () => {
    const sink = new InMemoryEventSink();
    const finish = deferred();
    const agent = new Agent({
      card: { name: 'a' },
      eventSink: sink,
      execute: async (_task, run) => {
        for (let i = 0; i < 50; i += 1) await run.progress(i / 50, `step ${i}`);
        finish.resolve();
      },
    });
    const task = createTask('go');
    for await (const event of agent.handleTaskStreaming(task, undefined as never)) {
      expect(event.type).toBe('task.status');
      break;
    }
    await finish.promise;
    for (let i = 0; i < 100 && agent.activeTaskIds.length > 0; i += 1)
      await new Promise((resolve) => setImmediate(resolve));
    expect(agent.activeTaskIds).toEqual([]);
    expect((await agent.getTask(task.id))?.state).toBe('completed');
    expect(sink.toList().filter((event) => event.type === 'task.progress')).toHaveLength(50);
  });

  it('a stream starts its run at the first next(), as a generator would, and one never read runs nothing', async () => {
    let runs = 0;
    const agent = new Agent({
      card: { name: 'lazy' },
      execute: async () => {
        runs++;
      },
    });
    const unread = agent.handleTaskStreaming(createTask('x', { id: 'never' }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(0);
    expect(agent.activeTaskIds).toEqual([]);
    const closed = unread[Symbol.asyncIterator]();
    await expect(closed.return!()).resolves.toEqual({ done: true, value: undefined });
    await expect(closed.next()).resolves.toEqual({ done: true, value: undefined });
    expect(runs).toBe(0);

    const events = [];
    for await (const event of agent.handleTaskStreaming(createTask('x', { id: 'read' }))) events.push(event);
    expect(runs).toBe(1);
    expect(finalStatuses(events)).toHaveLength(1);

    // A task that cannot start rejects the first next(); the stream is then over.
    const bad = agent.handleTaskStreaming({ id: '' } as unknown as Task)[Symbol.asyncIterator]();
    await expect(bad.next()).rejects.toThrow();
    await expect(bad.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it('streams with bounded buffering: a slow consumer holds the run back', async () => {
    let produced = 0;
    let maxAhead = 0;
    const agent = new Agent({
      card: { name: 'a' },
      streamBufferSize: 4,
      execute: async (_task, run) => {
        for (let i = 0; i < 100; i += 1) {
          await run.progress(null, `p${i}`);
          produced += 1;
        }
      },
    });
    let consumed = 0;
    for await (const event of agent.handleTaskStreaming(createTask('go'), undefined as never)) {
      if (event.type === 'task.progress') consumed += 1;
      maxAhead = Math.max(maxAhead, produced - consumed);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(consumed).toBe(100);
    expect(maxAhead).toBeLessThanOrEqual(5);
  });
});

describe('cancellation primitives', () => {
  it('CancellationToken keeps the first reason and notifies once', () => {
    const token = new CancellationToken();
    const calls: string[] = [];
    const off = token.onCancel(() => calls.push('a'));
    token.onCancel(() => calls.push('b'))();
    token.cancel('first');
    token.cancel('second');
    off();
    expect(calls).toEqual(['a']);
    expect(token.reason).toBe('first');
    expect(() => token.raiseIfCancelled()).toThrow(TaskCanceledError);
    expect(token.signal.reason).toBeInstanceOf(TaskCanceledError);
    token.onCancel(() => calls.push('late'));
    expect(calls).toEqual(['a', 'late']);
  });

  it("makes its cancel error without the canceller's stack frames, and leaves Error.stackTraceLimit as it was", () => {
    const limit = Error.stackTraceLimit;
    const token = new CancellationToken();
    token.cancel('client went away');
    const error = token.error();
    expect(error).toBeInstanceOf(TaskCanceledError);
    expect(error.message).toBe('Task canceled: client went away');
    expect(error.data).toEqual({ reason: 'client went away' });
    expect(error.stack).toBe('TaskCanceledError: Task canceled: client went away');
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('elsewhere').stack).toMatch(/\n\s+at /);

    // A hardened runtime whose limit cannot be set: the cancel still works, with frames.
    const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')!;
    Object.defineProperty(Error, 'stackTraceLimit', { ...descriptor, writable: false });
    try {
      const frozen = new CancellationToken();
      frozen.cancel('frozen');
      expect(frozen.error().stack).toMatch(/^TaskCanceledError: Task canceled: frozen\n\s+at /);
      expect(Error.stackTraceLimit).toBe(limit);
    } finally {
      Object.defineProperty(Error, 'stackTraceLimit', descriptor);
    }
  });

  it('makes its signal on demand: callbacks keep their order, a late signal is already aborted', async () => {
    const token = new CancellationToken();
    const calls: string[] = [];
    token.onCancel(() => calls.push(`early, signal aborted: ${token.signal.aborted}`));
    token.signal.addEventListener('abort', () => calls.push('signal listener'));
    token.onCancel(() => calls.push('after the signal'));
    const racing = raceCancel(new Promise(() => undefined), token);
    token.cancel('now');
    expect(calls).toEqual(['early, signal aborted: true', 'signal listener', 'after the signal']);
    await expect(racing).rejects.toBe(token.error());

    const unread = new CancellationToken();
    const seen: string[] = [];
    unread.onCancel(() => seen.push('early'));
    unread.cancel('before any signal');
    expect(seen).toEqual(['early']);
    expect(unread.isCancelled).toBe(true);
    expect(unread.signal.aborted).toBe(true);
    expect(unread.signal.reason).toBe(unread.error());
    await expect(raceCancel(Promise.resolve(1), unread)).rejects.toBeInstanceOf(TaskCanceledError);
    await expect(raceCancel(Promise.resolve(1), new CancellationToken())).resolves.toBe(1);
  });

  it("core's sleep and raceAbort, with abortError, reject with the TaskCanceledError", async () => {
    const token = new CancellationToken();
    const waiting = sleep(60_000, token.signal, abortError);
    const racing = raceAbort(new Promise(() => undefined), token.signal, abortError);
    token.cancel('now');
    await expect(waiting).rejects.toBeInstanceOf(TaskCanceledError);
    await expect(racing).rejects.toThrow('Task canceled: now');
    await expect(sleep(1, token.signal, abortError)).rejects.toBeInstanceOf(TaskCanceledError);
    await expect(sleep(1)).resolves.toBeUndefined();
  });

  it('sleepUnlessCanceled waits on the token itself and rejects with its TaskCanceledError', async () => {
    const token = new CancellationToken();
    await expect(sleepUnlessCanceled(1, token)).resolves.toBeUndefined();
    const waiting = sleepUnlessCanceled(60_000, token);
    token.cancel('now');
    await expect(waiting).rejects.toBe(token.error());
    await expect(sleepUnlessCanceled(1, token)).rejects.toBe(token.error());
    // Signal listeners still hear the cancel when something else made the signal.
    const withSignal = new CancellationToken();
    const heard: string[] = [];
    withSignal.signal.addEventListener('abort', () => heard.push('signal'));
    const sleeping = sleepUnlessCanceled(60_000, withSignal);
    withSignal.cancel('later');
    await expect(sleeping).rejects.toBeInstanceOf(TaskCanceledError);
    expect(heard).toEqual(['signal']);
  });

  it('runs the callbacks registered before its signal in registration order, whichever were taken away', () => {
    const token = new CancellationToken();
    const heard: string[] = [];
    const offA = token.onCancel(() => heard.push('a'));
    token.onCancel(() => heard.push('b'));
    offA();
    token.onCancel(() => heard.push('c'));
    const offD = token.onCancel(() => heard.push('d'));
    offD();
    token.onCancel(() => heard.push('e'));
    expect(earlyListeners(token)).toBe(3);
    token.cancel('now');
    expect(heard).toEqual(['b', 'c', 'e']);
    expect(earlyListeners(token)).toBe(0);
    // Through the signal's one abort listener, the order holds too.
    const later = new CancellationToken();
    const order: number[] = [];
    for (let i = 0; i < 4; i++) later.onCancel(() => order.push(i));
    const signal = later.signal;
    signal.addEventListener('abort', () => order.push(99));
    later.cancel();
    expect(order).toEqual([0, 1, 2, 3, 99]);
  });

  it('a finished sleep leaves no listener on its token, made before its signal, during or after', async () => {
    const token = new CancellationToken();
    await sleepUnlessCanceled(1, token);
    expect(earlyListeners(token)).toBe(0);
    // Waiting when the signal is made: the token's early listeners run through one abort listener.
    const waiting = sleepUnlessCanceled(5, token);
    const signal = token.signal;
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
    await waiting;
    expect(earlyListeners(token)).toBe(0);
    // Started once the signal exists: a listener of its own on the signal, taken away on waking.
    const later = sleepUnlessCanceled(1, token);
    expect(getEventListeners(signal, 'abort')).toHaveLength(2);
    await later;
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
  });

  it('sleeps that come due together wake in order, a few per turn, with I/O served between them', async () => {
    // A real socket pair: bytes written at the first wake are read by the server's next poll.
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
    const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    const peer = await accepted;
    try {
      const sleepers = 256;
      const order: number[] = [];
      let wokenWhenRead = -1;
      peer.once('data', () => {
        wokenWhenRead = order.length;
      });
      const token = new CancellationToken();
      await Promise.all(
        Array.from({ length: sleepers }, async (_, index) => {
          await sleepUnlessCanceled(5, token);
          if (order.length === 0) client.write('x');
          order.push(index);
        }),
      );
      expect(order).toEqual(Array.from({ length: sleepers }, (_, index) => index));
      // Every timer came due in one turn: run back to back, the read would wait for all 256 wakes.
      expect(wokenWhenRead).toBeGreaterThan(0);
      expect(wokenWhenRead).toBeLessThan(sleepers / 4);
    } finally {
      client.destroy();
      peer.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a run that sleeps in a loop reuses one timer; another length, a wait still pending or a cancel get their own', async () => {
    const timers = jest.spyOn(global, 'setTimeout');
    const sleepTimers = (): number =>
      timers.mock.calls.filter(([callback]) => callback.name === 'wakeSoon').length;
    try {
      const token = new CancellationToken();
      for (let i = 0; i < 5; i++) await sleepUnlessCanceled(2, token);
      expect(sleepTimers()).toBe(1);
      // Re-armed, a reused timer waits its whole length again.
      let woken = false;
      const reused = sleepUnlessCanceled(2, token).then(() => (woken = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(woken).toBe(false);
      await reused;
      expect(sleepTimers()).toBe(1);
      // Two at once: the second finds no spare. Then another length: a timer of its own.
      await Promise.all([sleepUnlessCanceled(2, token), sleepUnlessCanceled(2, token)]);
      expect(sleepTimers()).toBe(2);
      await sleepUnlessCanceled(3, token);
      expect(sleepTimers()).toBe(3);
      // A canceled wait on a reused timer rejects, and its timer never wakes anything.
      const canceled = sleepUnlessCanceled(3, token);
      expect(sleepTimers()).toBe(3);
      token.cancel('enough');
      await expect(canceled).rejects.toBe(token.error());
      await expect(sleepUnlessCanceled(3, token)).rejects.toBe(token.error());
      expect(earlyListeners(token)).toBe(0);
    } finally {
      timers.mockRestore();
    }
  });

  it('wakes burst after burst in order, a burst smaller than the last one too', async () => {
    for (const sleepers of [300, 40, 300]) {
      const order: number[] = [];
      await Promise.all(
        Array.from({ length: sleepers }, async (_, index) => {
          await sleepUnlessCanceled(1, new CancellationToken());
          order.push(index);
        }),
      );
      expect(order).toEqual(Array.from({ length: sleepers }, (_, index) => index));
    }
  });

  it('a sleep canceled after its time came but before its wake rejects, and the others still wake', async () => {
    const tokens = Array.from({ length: 64 }, () => new CancellationToken());
    const outcomes = await Promise.allSettled(
      tokens.map(async (token, index) => {
        await sleepUnlessCanceled(5, token);
        // The first to wake cancels the last, whose timer has fired by now too.
        if (index === 0) tokens[63]!.cancel('late');
      }),
    );
    expect(outcomes.slice(0, 63).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    expect(outcomes[63]).toEqual({ status: 'rejected', reason: tokens[63]!.error() });
  });

  it('a run that sleeps is canceled out of its sleep, and its sleeps leave no callback behind', async () => {
    let slept = 0;
    const agent = new Agent({
      card: { name: 'sleeper' },
      execute: async (_task, run) => {
        for (;;) {
          await run.sleep(1);
          slept++;
        }
      },
    });
    const { rest } = await readUntil(
      agent.handleTaskStreaming(createTask('x', { id: 's1' })),
      (event) => event.type === 'task.status',
    );
    while (slept < 3) await new Promise((resolve) => setTimeout(resolve, 1));
    const token = agent.getCancellationToken('s1')!;
    // Each finished sleep took its cancel callback away again: only the run's own race is listed.
    expect(earlyListeners(token)).toBeLessThanOrEqual(2);
    await agent.cancelTask('s1', 'enough');
    expect(finalStatuses(await rest()).map((event) => (event as { state?: string }).state)).toEqual([
      'canceled',
    ]);
  });

  it('abortError keeps an Error reason and turns a string reason into a TaskCanceledError', async () => {
    const foreign = new AbortController();
    foreign.abort('user left');
    await expect(raceAbort(new Promise(() => undefined), foreign.signal, abortError)).rejects.toThrow(
      new TaskCanceledError('Task canceled: user left'),
    );
    const withError = new AbortController();
    const reason = new RangeError('custom');
    withError.abort(reason);
    expect(abortError(withError.signal)).toBe(reason);
  });
});

describe('a cancel that lands while an event waits for stream space', () => {
  // With a one-event buffer and a consumer that stops reading, the emit announcing a side effect
  // blocks; the cancel arrives during that wait. Nothing announced may run afterwards.
  it('does not run the tool whose action.started was waiting', async () => {
    let sideEffects = 0;
    const agent = new Agent({
      card: { name: 'a' },
      streamBufferSize: 1,
      tools: [
        {
          name: 'touch',
          description: 'counts calls',
          parameters: { type: 'object' },
          capabilities: [],
          handler: async () => {
            sideEffects++;
            return 'ok';
          },
        },
      ],
      execute: async (_task, run) => {
        await run.callTool('touch', {});
      },
    });
    const task = createTask('go');
    const { rest } = await readUntil(agent.handleTaskStreaming(task), (e) => e.type === 'action.requested');
    await sleep(30);
    expect(sideEffects).toBe(0);
    const canceled = await agent.cancelTask(task.id, 'stop');
    const after = await rest();
    await sleep(30);
    expect(canceled.state).toBe('canceled');
    expect(sideEffects).toBe(0);
    expect(finalStatuses(after)).toEqual([expect.objectContaining({ state: 'canceled' })]);
    expect(agent.activeTaskIds).toEqual([]);
  });

  it('does not start the model call whose llm.call.started was waiting', async () => {
    let calls = 0;
    const agent = new Agent({
      card: { name: 'a' },
      streamBufferSize: 1,
      llm: {
        provider: 'test',
        model: 'counting',
        generate: async () => {
          calls++;
          return { content: 'x', toolCalls: [] };
        },
      },
    });
    const task = createTask('hi');
    const { rest } = await readUntil(agent.handleTaskStreaming(task), (e) => e.type === 'task.status');
    await sleep(30);
    expect(calls).toBe(0);
    await agent.cancelTask(task.id, 'stop');
    const after = await rest();
    await sleep(30);
    expect(calls).toBe(0);
    expect(finalStatuses(after)).toEqual([expect.objectContaining({ state: 'canceled' })]);
  });
});
