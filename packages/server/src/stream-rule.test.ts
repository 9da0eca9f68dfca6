/**
 * TaskEventStream.deliver: the stream rule for a reader that takes events by callback, whether the
 * handler's stream is pulled or pushes its events itself.
 */
import {
  AgentError,
  createArtifact,
  createMessage,
  createTask,
  InternalError,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { finalStatusEvent, type EventReceiver } from '@agent/core/internal';
import { MISSING_FINAL_MESSAGE, TaskEventStream } from './stream-rule.js';
import { pushOnlyStream } from './test-support/push-only-stream.js';

const TASK: Task = createTask(createMessage('go', { role: 'user' }));

function chunk(i: number): TaskEvent {
  return {
    type: 'task.artifact',
    task_id: TASK.id,
    artifact: createArtifact(`chunk ${i}`, { id: 'a1' }),
    append: i > 1,
    last_chunk: false,
    timestamp: new Date().toISOString(),
  } as TaskEvent;
}

const COMPLETED = (): TaskEvent => finalStatusEvent({ ...TASK, state: 'completed' });

/** A stream over `events` that only pulls. */
function pulled(events: TaskEvent[]): () => AsyncIterable<TaskEvent> {
  return async function* () {
    for (const event of events) yield event;
  };
}

/**
 * A stream that pushes: `produce` runs once a receiver attaches and drives it (awaiting each wait,
 * as a producer honouring back-pressure does). Its iterator must never be pulled.
 */
function pushing(produce: (receiver: EventReceiver<TaskEvent>) => Promise<void>): {
  open: () => AsyncIterable<TaskEvent>;
  done: () => Promise<void>;
} {
  let run: Promise<void> = Promise.resolve();
  const iterator = pushOnlyStream((receiver) => {
    run = produce(receiver);
  });
  return { open: () => iterator, done: () => run };
}

/** Pushes chunks 1 to 3, each noted in `produced` as it goes, awaiting every wait it is given. */
async function pushChunks(receiver: EventReceiver<TaskEvent>, produced: number[]): Promise<void> {
  for (let i = 1; i <= 3; i++) {
    produced.push(i);
    await receiver.push(chunk(i));
  }
}

function stream(open: () => AsyncIterable<TaskEvent>, onEnd = (): void => undefined): TaskEventStream {
  return new TaskEventStream(TASK, open, {
    toWire: (error) => (error instanceof AgentError ? error : new InternalError(String(error))),
    onEnd,
  });
}

describe('TaskEventStream.deliver', () => {
  it('pulls a plain stream to its final status, awaiting each wait before the next event', async () => {
    const got: string[] = [];
    let waits = 0;
    const events = stream(pulled([chunk(1), chunk(2), COMPLETED(), chunk(3)]));
    await events.deliver((event) => {
      got.push(event.type);
      return new Promise<void>((resolve) =>
        setImmediate(() => {
          waits++;
          resolve();
        }),
      );
    });
    // Nothing after the final status, and each wait was over before the next event came.
    expect(got).toEqual(['task.artifact', 'task.artifact', 'task.status']);
    expect(waits).toBe(3);
    expect(events.count).toBe(3);
  });

  it('takes pushed events as they come, drops any after the final status, and settles after its wait', async () => {
    const produced: number[] = [];
    let releaseFinal!: () => void;
    const source = pushing(async (receiver) => {
      await pushChunks(receiver, produced);
      void receiver.push(COMPLETED());
      expect(receiver.push(chunk(4))).toBeUndefined();
      receiver.end();
    });
    let ended = 0;
    const events = stream(source.open, () => ended++);
    const got: TaskEvent[] = [];
    let settled = false;
    const delivered = events
      .deliver((event) => {
        got.push(event);
        if (event.type !== 'task.status') return undefined;
        return new Promise<void>((resolve) => (releaseFinal = resolve));
      })
      .then(() => (settled = true));
    await source.done();
    expect(produced).toEqual([1, 2, 3]);
    expect(got.map((event) => event.type)).toEqual([
      'task.artifact',
      'task.artifact',
      'task.artifact',
      'task.status',
    ]);
    expect(ended).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    releaseFinal();
    await delivered;
    expect(events.count).toBe(4);
  });

  it('holds a pushing producer for as long as the wait it was given', async () => {
    const produced: number[] = [];
    let release!: () => void;
    const source = pushing(async (receiver) => {
      await pushChunks(receiver, produced);
      void receiver.push(COMPLETED());
    });
    const delivered = stream(source.open).deliver((event) =>
      event.type === 'task.artifact' && produced.length === 1
        ? new Promise<void>((resolve) => (release = resolve))
        : undefined,
    );
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(produced).toEqual([1]);
    release();
    await delivered;
    expect(produced).toEqual([1, 2, 3]);
  });

  it('finishes a pushed stream that ends without a final status as failed, with one task.error', async () => {
    const source = pushing(async (receiver) => {
      void receiver.push(chunk(1));
      receiver.end();
      receiver.end();
    });
    const got: TaskEvent[] = [];
    const events = stream(source.open);
    await events.deliver((event) => void got.push(event));
    expect(got.map((event) => event.type)).toEqual(['task.artifact', 'task.error', 'task.status']);
    expect(got[1]).toMatchObject({ error: { code: 'INTERNAL', message: MISSING_FINAL_MESSAGE } });
    expect(got[2]).toMatchObject({ final: true, state: 'failed' });
    expect(events.count).toBe(3);
  });

  it("sends the final status of a pushed stream that ended early only after the error event's wait", async () => {
    const source = pushing(async (receiver) => {
      void receiver.push(chunk(1));
      receiver.end();
    });
    const got: string[] = [];
    let release!: () => void;
    let settled = false;
    const delivered = stream(source.open)
      .deliver((event) => {
        got.push(event.type);
        return event.type === 'task.error' ? new Promise<void>((resolve) => (release = resolve)) : undefined;
      })
      .then(() => (settled = true));
    await source.done();
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(got).toEqual(['task.artifact', 'task.error']);
    expect(settled).toBe(false);
    release();
    await delivered;
    expect(got).toEqual(['task.artifact', 'task.error', 'task.status']);
  });

  it('rejects with the wire error when the stream cannot start, pushed or pulled, and delivers nothing', async () => {
    const refusal = new AgentError('TASK_ALREADY_RUNNING', 'already running');
    const iterator = pushOnlyStream(() => {
      throw refusal;
    });
    const got: TaskEvent[] = [];
    await expect(stream(() => iterator).deliver((event) => void got.push(event))).rejects.toBe(refusal);
    const failing = stream(async function* () {
      yield* [];
      throw refusal;
    });
    await expect(failing.deliver((event) => void got.push(event))).rejects.toBe(refusal);
    expect(got).toEqual([]);
  });

  it("rejects with the reader's own error and takes nothing more of a pushed stream", async () => {
    const broken = new Error('reader broke');
    const pushed: (Promise<void> | undefined)[] = [];
    const source = pushing(async (receiver) => {
      pushed.push(receiver.push(chunk(1)), receiver.push(chunk(2)), receiver.push(COMPLETED()));
      receiver.end();
    });
    const got: TaskEvent[] = [];
    const delivered = stream(source.open).deliver((event) => {
      got.push(event);
      throw broken;
    });
    await expect(delivered).rejects.toBe(broken);
    await source.done();
    expect(got).toHaveLength(1);
    expect(pushed).toEqual([undefined, undefined, undefined]);
  });
});
