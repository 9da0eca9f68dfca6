/**
 * A streamed run keeps pace with the caller that started it: a caller that stops reading stops the
 * run STREAM_WINDOW events ahead of it, one that reads again lets it go on, and one that reads
 * nothing for `streamStallMs` is cut off with RESOURCE_EXHAUSTED while the run goes on.
 */
import {
  ANONYMOUS_PRINCIPAL,
  AgentError,
  TaskNotFoundError,
  createArtifact,
  createMessage,
  createTask,
  type Task,
  type TaskEvent,
  type TaskHandler,
} from '@agent/core';
import { finalStatusEvent, type EventReceiver } from '@agent/core/internal';
import { InMemoryRunStore } from '@agent/events';
import { ResourceExhaustedError, silentLogger } from '@agent/core';
import { ServerPipeline } from './pipeline.js';
import type { RequestInfo } from './request.js';
import { LIVE_TAIL, STREAM_WINDOW } from './task-ledger.js';
import { pushOnlyStream } from './test-support/push-only-stream.js';

const OWNER = { tenant: '', principal_id: ANONYMOUS_PRINCIPAL };
const CHUNKS = Math.max(STREAM_WINDOW, LIVE_TAIL) * 8;

async function until(condition: () => boolean, what: string): Promise<void> {
  // Bounded at 10 s at least: far above what each wait takes on a busy machine.
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`gave up waiting: ${what}`);
}

/** Lets every pending turn of the event loop run, so a run that could go on would. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Chunk `i` of `CHUNKS` of one artifact of task `t`. */
function chunk(t: Task, i: number): TaskEvent {
  return {
    type: 'task.artifact',
    task_id: t.id,
    artifact: createArtifact(`chunk ${i}`, { id: 'a1' }),
    append: i > 1,
    last_chunk: i === CHUNKS,
    timestamp: new Date().toISOString(),
  } as TaskEvent;
}

/** A stream that only pushes: the pipeline attaches a receiver, which `produce` drives. */
function pushing(produce: (receiver: EventReceiver<TaskEvent>) => Promise<void>): AsyncIterable<TaskEvent> {
  return pushOnlyStream((receiver) => void produce(receiver));
}

/** How the handler's stream reaches the pipeline: pulled like a generator, or pushed by its producer. */
type Mode = 'pull' | 'push';

/**
 * A handler that streams `CHUNKS` artifact chunks as fast as it is let, counting them: a generator
 * asked for each one, or (`push`) a producer pushing each into the receiver that attached and
 * waiting whenever the receiver asks it to, as the runtime's `Agent` does.
 */
function chunky(mode: Mode = 'pull'): { handler: TaskHandler; produced: () => number } {
  let produced = 0;
  const canceled = new Map<string, string | undefined>();
  async function* generate(t: Task): AsyncGenerator<TaskEvent> {
    for (let i = 1; i <= CHUNKS; i++) {
      if (canceled.has(t.id)) {
        yield finalStatusEvent({ ...t, state: 'canceled' });
        return;
      }
      produced = i;
      yield chunk(t, i);
    }
    yield finalStatusEvent({ ...t, state: 'completed' });
  }
  async function produce(t: Task, receiver: EventReceiver<TaskEvent>): Promise<void> {
    for (let i = 1; i <= CHUNKS; i++) {
      if (canceled.has(t.id)) {
        void receiver.push(finalStatusEvent({ ...t, state: 'canceled' }));
        receiver.end();
        return;
      }
      produced = i;
      await receiver.push(chunk(t, i));
    }
    void receiver.push(finalStatusEvent({ ...t, state: 'completed' }));
    receiver.end();
  }
  const handler: TaskHandler = {
    handleTask: async (t) => ({ ...t, state: 'completed' }),
    handleTaskStreaming: (t) => (mode === 'push' ? pushing((receiver) => produce(t, receiver)) : generate(t)),
    cancelTask: async (id, reason) => {
      // Also canceled while its producer waits for room: a cancel ends that wait in the runtime.
      if (produced === 0 || produced === CHUNKS) throw new TaskNotFoundError(`Task ${id} is not active`);
      canceled.set(id, reason);
      return { ...task(), id, state: 'canceled' };
    },
    getAgentCard: () => ({ name: 'a', description: '', url: '' }),
  };
  return { handler, produced: () => produced };
}

function task(): Task {
  return createTask(createMessage('go', { role: 'user' }));
}

/** A pipeline over {@link chunky} and a memory store, with one task started streaming. */
async function streamed(mode: Mode) {
  const { handler, produced } = chunky(mode);
  const store = new InMemoryRunStore();
  const pipeline = new ServerPipeline({ transport: 'http', handler, store });
  const call = await pipeline.open({ headers: {}, signal: new AbortController().signal });
  const t = task();
  return { pipeline, store, call, t, feed: pipeline.stream(call, t), produced };
}

describe.each<Mode>(['pull', 'push'])('a streamed run (%sed) and the caller that started it', (mode) => {
  it('stops STREAM_WINDOW events ahead of a caller that stops reading, and goes on when it reads', async () => {
    const { handler, produced } = chunky(mode);
    const pipeline = new ServerPipeline({ transport: 'http', handler, store: new InMemoryRunStore() });
    const feed = pipeline.stream(
      await pipeline.open({ headers: {}, signal: new AbortController().signal }),
      task(),
    );
    const read: TaskEvent[] = [];
    for (let i = 0; i < 10; i++) read.push((await feed.next()).value as TaskEvent);

    await until(() => produced() >= 10 + STREAM_WINDOW - 1, 'the run fills its window');
    await settle();
    // The producer is a generator or waits on each push, so "stopped" is exact: one event past the window at most.
    expect(produced()).toBeLessThanOrEqual(10 + STREAM_WINDOW + 1);
    expect(pipeline.tasks.size).toBe(1);

    for (;;) {
      const step = await feed.next();
      if (step.done) break;
      read.push(step.value);
    }
    expect(produced()).toBe(CHUNKS);
    expect(read).toHaveLength(CHUNKS + 1);
    expect(read.map((e) => e.sequence)).toEqual(read.map((_, i) => i + 1));
    expect(read.at(-1)).toMatchObject({ type: 'task.status', state: 'completed', final: true });
  });

  it('goes on at its own pace once the caller leaves; a later subscription reads the rest', async () => {
    const { pipeline, store, call, t, feed, produced } = await streamed(mode);
    const first = (await feed.next()).value as TaskEvent;
    await until(() => produced() >= STREAM_WINDOW, 'the run fills its window');
    await feed.return();
    await until(() => pipeline.tasks.size === 0, 'the run ends');
    expect(produced()).toBe(CHUNKS);
    const rest: TaskEvent[] = [];
    for await (const event of pipeline.subscribe(call, { task_id: t.id, after: first.sequence }))
      rest.push(event);
    expect(rest).toHaveLength(CHUNKS);
    expect((await store.getTaskRecord(t.id, OWNER))?.state).toBe('completed');
  });

  it('cuts off a caller that reads nothing for streamStallMs with RESOURCE_EXHAUSTED; the run completes', async () => {
    const { handler, produced } = chunky(mode);
    const store = new InMemoryRunStore();
    const pipeline = new ServerPipeline({ transport: 'http', handler, store, streamStallMs: 50 });
    const aborted: unknown[] = [];
    const request: RequestInfo = {
      headers: {},
      signal: new AbortController().signal,
      abort: (reason) => aborted.push(reason),
    };
    const t = task();
    const feed = pipeline.stream(await pipeline.open(request), t);
    expect((await feed.next()).done).toBe(false);

    await until(() => aborted.length === 1, 'the stalled caller is cut off');
    expect(aborted[0]).toBeInstanceOf(AgentError);
    expect(aborted[0]).toMatchObject({
      code: 'RESOURCE_EXHAUSTED',
      data: { task_id: t.id, limit: 'stream_stall', window: STREAM_WINDOW },
    });
    // Its next read gets the same error, however late it comes.
    await expect(feed.next()).rejects.toMatchObject({ code: 'RESOURCE_EXHAUSTED' });
    await until(() => pipeline.tasks.size === 0, 'the run ends without its caller');
    expect(produced()).toBe(CHUNKS);
    expect(await store.listTaskEvents(OWNER, t.id)).toHaveLength(CHUNKS + 1);
    expect((await store.getTaskRecord(t.id, OWNER))?.state).toBe('completed');
  });

  it('is not held back by a subscriber that reads nothing', async () => {
    const { handler, produced } = chunky(mode);
    const pipeline = new ServerPipeline({ transport: 'http', handler, store: new InMemoryRunStore() });
    const call = await pipeline.open({ headers: {}, signal: new AbortController().signal });
    const t = task();
    const feed = pipeline.stream(call, t);
    expect((await feed.next()).done).toBe(false);
    const subscriber = pipeline.subscribe(call, { task_id: t.id });
    expect((await subscriber.next()).done).toBe(false);
    let read = 1;
    while (!(await feed.next()).done) read++;
    expect(read).toBe(CHUNKS + 1);
    expect(produced()).toBe(CHUNKS);
    await subscriber.return();
  });

  it('keeps only the latest events of a long run in memory; a follower far behind reads the rest from the store', async () => {
    const { handler } = chunky(mode);
    const store = new InMemoryRunStore();
    const pipeline = new ServerPipeline({ transport: 'http', handler, store });
    const call = await pipeline.open({ headers: {}, signal: new AbortController().signal });
    const t = task();
    const feed = pipeline.stream(call, t);
    let step = await feed.next();
    const subscriber = pipeline.subscribe(call, { task_id: t.id });
    const seen: TaskEvent[] = [(await subscriber.next()).value as TaskEvent];
    let held = 0;
    for (; !step.done; step = await feed.next()) {
      const live = pipeline.tasks.live(OWNER, t.id);
      if (live) held = Math.max(held, live.recorded - live.droppedCount);
    }
    // Bounded by the tail plus one batch not yet trimmed, not by the run's length.
    expect(held).toBeLessThanOrEqual(LIVE_TAIL * 2 + STREAM_WINDOW);
    for (let next = await subscriber.next(); !next.done; next = await subscriber.next())
      seen.push(next.value);
    expect(seen.map((e) => e.sequence)).toEqual(Array.from({ length: CHUNKS + 1 }, (_, i) => i + 1));
    expect(seen.at(-1)).toMatchObject({ type: 'task.status', state: 'completed' });
  });

  it('lets a cancel through to a run held back by a caller that stopped reading', async () => {
    const { pipeline, store, call, t, feed, produced } = await streamed(mode);
    expect((await feed.next()).done).toBe(false);
    await until(() => produced() >= STREAM_WINDOW, 'the run fills its window');
    await settle();
    expect(produced()).toBeLessThan(CHUNKS);
    await pipeline.cancel(call, { task_id: t.id });
    await until(() => pipeline.tasks.size === 0, 'the canceled run ends while its caller reads nothing');
    expect((await store.getTaskRecord(t.id, OWNER))?.state).toBe('canceled');
    let last: TaskEvent | undefined;
    for (let step = await feed.next(); !step.done; step = await feed.next()) last = step.value;
    expect(last).toMatchObject({ type: 'task.status', state: 'canceled', final: true });
  });

  it('cancels a run whose events the store refuses for good; its caller gets UNAVAILABLE', async () => {
    const { handler, produced } = chunky(mode);
    // A store that takes the first appends, then is full.
    let appends = 0;
    const store = new (class extends InMemoryRunStore {
      override async appendTaskEvents(...args: Parameters<InMemoryRunStore['appendTaskEvents']>) {
        if (++appends > 3) throw new ResourceExhaustedError('The task store is full');
        return super.appendTaskEvents(...args);
      }

      // Writes that waited together come in one call: its appends count the same.
      override async writeTask(...args: Parameters<InMemoryRunStore['writeTask']>) {
        if (args[2].some((write) => 'events' in write) && ++appends > 3)
          throw new ResourceExhaustedError('The task store is full');
        return super.writeTask(...args);
      }
    })();
    const pipeline = new ServerPipeline({ transport: 'http', handler, store, logger: silentLogger });
    const t = task();
    const feed = pipeline.stream(
      await pipeline.open({ headers: {}, signal: new AbortController().signal }),
      t,
    );
    const outcome = (async () => {
      for (let step = await feed.next(); !step.done; step = await feed.next());
    })();
    await expect(outcome).rejects.toMatchObject({ code: 'UNAVAILABLE', data: { task_id: t.id } });
    await until(() => pipeline.tasks.size === 0, 'the run ends');
    expect(produced()).toBeLessThan(CHUNKS);
  });
});

describe('a streamed run whose producer pushes without waiting', () => {
  it('holds every event pushed while it waits for its starter on that one wait, and cuts off no reader', async () => {
    const t = task();
    const waits = new Set<Promise<void>>();
    const produce = async (receiver: EventReceiver<TaskEvent>): Promise<void> => {
      for (let i = 1; i <= CHUNKS; i++) {
        const wait = receiver.push(chunk(t, i));
        // Past the window it waits for its starter; from then on it no longer waits, as a run does
        // once a cancel ended its wait, or whose emits overlap.
        if (i <= STREAM_WINDOW) await wait;
        else if (wait) waits.add(wait);
      }
      void receiver.push(finalStatusEvent({ ...t, state: 'completed' }));
      receiver.end();
    };
    const handler: TaskHandler = {
      handleTask: async (x) => ({ ...x, state: 'completed' }),
      handleTaskStreaming: () => pushing(produce),
      cancelTask: async () => {
        throw new TaskNotFoundError('not active');
      },
      getAgentCard: () => ({ name: 'a', description: '', url: '' }),
    };
    const store = new InMemoryRunStore();
    const pipeline = new ServerPipeline({ transport: 'http', handler, store, streamStallMs: 500 });
    const aborted: unknown[] = [];
    const feed = pipeline.stream(
      await pipeline.open({
        headers: {},
        signal: new AbortController().signal,
        abort: (reason) => aborted.push(reason),
      }),
      t,
    );
    let read = 1;
    expect((await feed.next()).done).toBe(false);
    await until(() => waits.size > 0, 'the run goes past its window');
    await settle();
    for (let step = await feed.next(); !step.done; step = await feed.next()) read++;
    expect(read).toBe(CHUNKS + 1);
    expect(waits.size).toBe(1);
    await until(() => pipeline.tasks.size === 0, 'the run ends');
    // Past the stall limit: a wait left behind would cut off the reader that read everything.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(aborted).toEqual([]);
    expect(await store.listTaskEvents(OWNER, t.id)).toHaveLength(CHUNKS + 1);
  });
});
