import { AssertionError } from 'node:assert';
import { ValueError, type TaskEvent } from '@agent/core';
import { assertBudgetUnder, assertNoDeniedActions, assertRunEvents } from './assertions.js';
import { InMemoryEventSink } from './event-sink.js';
import { RunRecorder } from './run-recorder.js';
import { RunReplay } from './run-replay.js';
import { action, completedRun, tick } from './test-support/fixtures.js';

function report() {
  const { events, context } = completedRun();
  const recorder = new RunRecorder({ context });
  for (const event of events) recorder.recordTaskEvent(event);
  return recorder.toReport();
}

function thrown(fn: () => void): AssertionError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AssertionError) return error;
    throw error;
  }
  throw new Error('expected an AssertionError');
}

describe('RunReplay', () => {
  it('lists types and finds events by type', () => {
    const replay = new RunReplay(report());
    expect(replay.eventTypes).toEqual(completedRun().events.map((e) => e.type));
    const calls = replay.findEvents('llm.call.completed');
    expect(calls).toHaveLength(1);
    expect(calls[0].payload.usage?.output_tokens).toBe(12);
    expect(replay.findEvents('task.status').map((e) => e.payload.state)).toEqual(['working', 'completed']);
    expect(replay.findEvents('budget.exceeded')).toEqual([]);
    expect(replay.findEvent('approval.decided')?.payload.decision?.approved).toBe(true);
    expect(replay.finalEvent?.payload.task?.state).toBe('completed');
    expect(replay.actionEvents('act-1').map((e) => e.type)).toEqual([
      'action.requested',
      'action.policy',
      'approval.required',
      'approval.decided',
      'action.started',
      'action.completed',
    ]);
    expect(() => replay.findEvents('nope' as 'task.status')).toThrow(ValueError);
  });

  it('iterates in sequence order and is read-only', () => {
    const sink = new InMemoryEventSink();
    for (const event of completedRun().events) sink.emitTaskEvent(event);
    const replay = new RunReplay([...sink.toList()].reverse());
    expect([...replay.iterEvents()].map((e) => e.sequence)).toEqual(sink.toList().map((e) => e.sequence));
    expect([...replay].length).toBe(replay.length);
    const first = replay.iterEvents().next().value!;
    expect(() => {
      (first as { type: string }).type = 'task.error';
    }).toThrow(TypeError);
    expect(sink.toList()[0].type).toBe('task.status');
  });

  it('reads a stored report dict and rejects other input', () => {
    expect(new RunReplay(report().toDict()).length).toBe(13);
    expect(() => new RunReplay('x' as unknown as [])).toThrow(ValueError);
  });
});

describe('assertRunEvents', () => {
  const r = report();

  it('passes in each mode when the run matches', () => {
    assertRunEvents(r, ['context.prepared', 'llm.call.started', 'llm.call.completed']);
    assertRunEvents(r, ['task.artifact', 'context.prepared'], { mode: 'present' });
    assertRunEvents(r, ['task.status', 'task.status'], { mode: 'present' });
    assertRunEvents(new RunReplay(r), new RunReplay(r).eventTypes, { mode: 'exact' });
    assertRunEvents(r.events, ['action.requested', 'action.completed', 'task.status'], {
      mode: 'subsequence',
    });
  });

  it('fails with expected vs actual in the message', () => {
    const exact = thrown(() => assertRunEvents(r, ['task.status', 'task.error'], { mode: 'exact' }));
    expect(exact.message).toContain('Run events differ at index 1');
    expect(exact.message).toContain('expected [task.status, task.error]');
    expect(exact.message).toContain('actual   [task.status, context.prepared,');
    expect(exact.expected).toEqual(['task.status', 'task.error']);

    const present = thrown(() =>
      assertRunEvents(r, ['budget.warning', 'task.status', 'task.status', 'task.status'], {
        mode: 'present',
      }),
    );
    expect(present.message).toContain('missing [budget.warning, task.status]');

    const order = thrown(() => assertRunEvents(r, ['llm.call.completed', 'context.prepared']));
    expect(order.message).toContain('matched [llm.call.completed], then no context.prepared');
    expect(order.message).toContain('actual   [');
  });

  it('rejects unknown types and modes', () => {
    expect(() => assertRunEvents(r, ['task.nope' as 'task.status'])).toThrow(ValueError);
    expect(() => assertRunEvents(r, [], { mode: 'some' as 'exact' })).toThrow(ValueError);
  });
});

describe('assertNoDeniedActions', () => {
  it('passes for a run with only approved actions', () => {
    expect(() => assertNoDeniedActions(report())).not.toThrow();
  });

  it('names each denied action', () => {
    const sink = new InMemoryEventSink();
    const ev = (type: string, extra: Record<string, unknown>): TaskEvent =>
      ({ type, task_id: 't', timestamp: tick(), ...extra }) as unknown as TaskEvent;
    const denied = action({ action_id: 'a1', name: 'drop_table' });
    const rejected = action({ action_id: 'a2', name: 'send_email' });
    sink.emitTaskEvent(
      ev('action.denied', { action: denied, error: { code: 'ACTION_DENIED', message: 'no' } }),
    );
    sink.emitTaskEvent(
      ev('approval.decided', {
        request: { request_id: 'r', action: rejected, created_at: tick() },
        decision: { request_id: 'r', approved: false, decided_by: 'bob' },
      }),
    );
    const error = thrown(() => assertNoDeniedActions(sink.toList()));
    expect(error.message).toContain('found 2');
    expect(error.message).toContain('action.denied drop_table (action_id a1, sequence 1)');
    expect(error.message).toContain('approval.decided send_email (action_id a2, sequence 2)');
  });
});

describe('assertBudgetUnder', () => {
  const r = report();

  it('passes at or under the limits', () => {
    assertBudgetUnder(r, { maxInputTokens: 35, maxOutputTokens: 100, maxRuntimeSeconds: 3600 });
  });

  it('fails listing used vs allowed for each exceeded limit', () => {
    const error = thrown(() =>
      assertBudgetUnder(r, { maxInputTokens: 10, maxOutputTokens: 11, maxRuntimeSeconds: 1000 }),
    );
    expect(error.message).toContain('maxInputTokens: used 35, allowed 10');
    expect(error.message).toContain('maxOutputTokens: used 12, allowed 11');
    expect(error.message).not.toContain('maxRuntimeSeconds');
    expect(error.actual).toMatchObject({ maxInputTokens: 35, maxOutputTokens: 12 });
    const slow = thrown(() => assertBudgetUnder(r, { maxRuntimeSeconds: 0.001 }));
    expect(slow.message).toMatch(/maxRuntimeSeconds: used \d/);
  });

  it('rejects bad limits', () => {
    expect(() => assertBudgetUnder(r, {})).toThrow(ValueError);
    expect(() => assertBudgetUnder(r, { maxInputTokens: -1 })).toThrow(ValueError);
    expect(() => assertBudgetUnder({} as never, { maxInputTokens: 1 })).toThrow(ValueError);
  });
});
