import { AgentError, ValueError, type TaskEvent } from '@agent/core';
import { FanOutEventSink, InMemoryEventSink, safeEmit, type EventSink } from './event-sink.js';
import { RunEvent } from './run-event.js';
import { runContext } from './test-support/fixtures.js';

const progress = (n: number): TaskEvent =>
  ({
    type: 'task.progress',
    task_id: `task-${n % 7}`,
    timestamp: new Date(0).toISOString(),
    message: `m${n}`,
  }) as unknown as TaskEvent;

describe('InMemoryEventSink', () => {
  it('numbers from 1 and returns the stored event', () => {
    const sink = new InMemoryEventSink();
    const first = sink.emitTaskEvent(progress(1), { context: runContext() });
    const second = sink.emit(RunEvent.fromTaskEvent(progress(2)));
    expect([first.sequence, second.sequence]).toEqual([1, 2]);
    expect(first.run_id).toBe('run-1');
    expect(sink.toList()).toEqual([first, second]);
  });

  it('stays gap-free and unique under 1,000 concurrent emitters', async () => {
    const sink = new InMemoryEventSink();
    const returned = await Promise.all(
      Array.from({ length: 1000 }, async (_, n) => {
        // Interleave emitters across macrotask and microtask turns.
        await new Promise((resolve) =>
          n % 2 === 0 ? setImmediate(resolve) : queueMicrotask(() => resolve(undefined)),
        );
        return sink.emitTaskEvent(progress(n)).sequence;
      }),
    );
    expect([...returned].sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(sink.toList().map((e) => e.sequence)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(new Set(sink.toList().map((e) => e.payload.message)).size).toBe(1000);
  });

  it('does not renumber or alter the caller event', () => {
    const sink = new InMemoryEventSink();
    const event = RunEvent.fromTaskEvent(progress(1));
    const stored = sink.emit(event);
    expect(event.sequence).toBe(0);
    expect(stored).not.toBe(event);
    expect(sink.emit(event).sequence).toBe(2);
  });

  it('rejects a non-event without using a number', () => {
    const sink = new InMemoryEventSink();
    expect(() => sink.emit({ type: 'task.progress' } as unknown as RunEvent)).toThrow(ValueError);
    expect(() => sink.emitTaskEvent({ nope: true } as unknown as TaskEvent)).toThrow(ValueError);
    expect(sink.emitTaskEvent(progress(1)).sequence).toBe(1);
  });

  it('keeps at most maxEvents while numbering continues', () => {
    const sink = new InMemoryEventSink({ maxEvents: 3 });
    for (let n = 0; n < 5; n += 1) sink.emitTaskEvent(progress(n));
    expect(sink.toList().map((e) => e.sequence)).toEqual([3, 4, 5]);
    sink.clear();
    expect(sink.size).toBe(0);
    expect(sink.emitTaskEvent(progress(9)).sequence).toBe(6);
    expect(() => new InMemoryEventSink({ maxEvents: 0 })).toThrow(/maxEvents must be a positive integer/);
  });
});

describe('sink isolation', () => {
  const throwing: EventSink = {
    emit: () => {
      throw new Error('disk full');
    },
    emitTaskEvent: () => {
      throw new Error('disk full');
    },
  };

  it('FanOutEventSink delivers to healthy targets and reports a throwing one', () => {
    const healthy = new InMemoryEventSink();
    const seen: string[] = [];
    const fanOut = new FanOutEventSink([throwing, healthy, (event) => seen.push(event.type)], {
      onError: (error) => seen.push(`error:${error.message}`),
    });
    const stored = fanOut.emitTaskEvent(progress(1));
    expect(stored.sequence).toBe(1);
    expect(healthy.toList()).toHaveLength(1);
    expect(seen).toEqual(['error:disk full', 'task.progress']);
    expect(fanOut.errors).toHaveLength(1);
    expect(fanOut.errors[0].error).toBeInstanceOf(AgentError);
    expect(fanOut.errors[0].error.code).toBe('INTERNAL');
  });

  it('survives an error handler that throws too', () => {
    const fanOut = new FanOutEventSink([throwing], {
      onError: () => {
        throw new Error('handler broke');
      },
    });
    expect(fanOut.emitTaskEvent(progress(1)).sequence).toBe(1);
    expect(fanOut.emitTaskEvent(progress(2)).sequence).toBe(2);
  });

  it('safeEmit never throws and reports', () => {
    const errors: string[] = [];
    const event = RunEvent.fromTaskEvent(progress(1));
    expect(safeEmit(throwing, event, (e) => errors.push(e.message))).toBe(event);
    expect(errors).toEqual(['disk full']);
    expect(safeEmit(new InMemoryEventSink(), event).sequence).toBe(1);
  });
});
