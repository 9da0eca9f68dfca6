import { UnavailableError, ValueError, type TaskEvent } from '@agent/core';
import type { RunEvent } from './run-event.js';
import { StreamingEventSink } from './streaming-event-sink.js';

const progress = (n: number): TaskEvent =>
  ({
    type: 'task.progress',
    task_id: 't',
    timestamp: new Date(0).toISOString(),
    message: `m${n}`,
  }) as unknown as TaskEvent;
const final: TaskEvent = {
  type: 'task.status',
  task_id: 't',
  state: 'completed',
  final: true,
  timestamp: new Date(0).toISOString(),
};

async function collect(iterable: AsyncIterable<RunEvent>): Promise<number[]> {
  const seen: number[] = [];
  for await (const event of iterable) seen.push(event.sequence);
  return seen;
}

describe('StreamingEventSink', () => {
  it('streams live events in order and ends on close', async () => {
    const sink = new StreamingEventSink();
    const reading = collect(sink.subscribe());
    for (let n = 0; n < 5; n += 1) sink.emitTaskEvent(progress(n));
    await new Promise((resolve) => setImmediate(resolve));
    sink.emitTaskEvent(progress(5));
    sink.close();
    expect(await reading).toEqual([1, 2, 3, 4, 5, 6]);
    expect(() => sink.emitTaskEvent(progress(9))).toThrow(UnavailableError);
    expect(await collect(sink.subscribe())).toEqual([]);
  });

  it('replays buffered events after `since`, then continues live, until the final event', async () => {
    const sink = new StreamingEventSink({ bufferSize: 10 });
    for (let n = 0; n < 4; n += 1) sink.emitTaskEvent(progress(n));
    const reading = collect(sink.subscribe({ since: 2, untilFinal: true }));
    sink.emitTaskEvent(progress(4));
    sink.emitTaskEvent(final);
    sink.emitTaskEvent(progress(6));
    expect(await reading).toEqual([3, 4, 5, 6]);
    expect(sink.subscriberCount).toBe(0);
  });

  it('fails a resume older than the buffer with the oldest sequence', async () => {
    const sink = new StreamingEventSink({ bufferSize: 2 });
    for (let n = 0; n < 5; n += 1) sink.emitTaskEvent(progress(n));
    await expect(collect(sink.subscribe({ since: 1 }))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      data: { oldest_sequence: 4 },
    });
    const reading = collect(sink.subscribe({ since: 3 }));
    sink.close();
    expect(await reading).toEqual([4, 5]);
  });

  it('fails a consumer that falls behind instead of buffering without bound', async () => {
    const sink = new StreamingEventSink();
    const iterator = sink.subscribe({ maxQueue: 3 })[Symbol.asyncIterator]();
    for (let n = 0; n < 4; n += 1) sink.emitTaskEvent(progress(n));
    await expect(iterator.next()).rejects.toMatchObject({ code: 'UNAVAILABLE', data: { resume_after: 0 } });
    expect(sink.subscriberCount).toBe(0);
  });

  it('ends quietly on abort and when the consumer breaks', async () => {
    const sink = new StreamingEventSink();
    const controller = new AbortController();
    const reading = collect(sink.subscribe({ signal: controller.signal }));
    sink.emitTaskEvent(progress(0));
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    expect(await reading).toEqual([1]);

    const iterable = sink.subscribe();
    sink.emitTaskEvent(progress(1));
    for await (const event of iterable) {
      expect(event.sequence).toBe(2);
      break;
    }
    expect(sink.subscriberCount).toBe(0);
  });

  it('rejects bad options', () => {
    expect(() => new StreamingEventSink({ bufferSize: 0 })).toThrow(ValueError);
    const sink = new StreamingEventSink();
    expect(() => sink.subscribe({ since: -1 })).toThrow(ValueError);
    expect(() => sink.subscribe({ maxQueue: 1.5 })).toThrow(ValueError);
  });
});
