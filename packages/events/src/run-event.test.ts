import { createTask, RUNTIME_EVENT_TYPES, ValueError, type TaskEvent } from '@agent/core';
import { envelopeOf, isEnvelopeOf, RunEvent, RUN_EVENT_TYPES, type RunEventType } from './run-event.js';
import { action, completedRun, runContext } from './test-support/fixtures.js';

const SEVERITY: Record<RunEventType, 'info' | 'warning' | 'error'> = {
  'task.status': 'info',
  'task.artifact': 'info',
  'llm.stream': 'info',
  'task.progress': 'info',
  'task.error': 'error',
  'context.prepared': 'info',
  'llm.call.started': 'info',
  'llm.call.completed': 'info',
  'budget.warning': 'warning',
  'budget.exceeded': 'warning',
  'action.requested': 'info',
  'action.policy': 'info',
  'approval.required': 'info',
  'approval.decided': 'info',
  'action.started': 'info',
  'action.completed': 'info',
  'action.denied': 'warning',
  'action.failed': 'error',
};

function eventOf(type: RunEventType, extra: Record<string, unknown> = {}): TaskEvent {
  return { type, task_id: 'task-1', timestamp: '2026-01-01T00:00:00.000Z', ...extra } as unknown as TaskEvent;
}

describe('RunEvent.fromTaskEvent', () => {
  it('covers every event type, with its severity', () => {
    expect([...RUN_EVENT_TYPES].sort()).toEqual(Object.keys(SEVERITY).sort());
    for (const type of RUNTIME_EVENT_TYPES) expect(RUN_EVENT_TYPES).toContain(type);
    for (const type of RUN_EVENT_TYPES) {
      const event = RunEvent.fromTaskEvent(eventOf(type, { state: 'working', final: false }));
      expect({ type: event.type, severity: event.severity }).toEqual({ type, severity: SEVERITY[type] });
      expect(event.version).toBe('1.0');
      expect(event.sequence).toBe(0);
      expect(event.payload.type).toBe(type);
    }
  });

  it('normalizes each event of a complete run', () => {
    const { events, context } = completedRun();
    const runEvents = events.map((e) => RunEvent.fromTaskEvent(e, { context }));
    expect(runEvents.map((e) => e.type)).toEqual(events.map((e) => e.type));
    for (const event of runEvents) {
      expect(event.run_id).toBe('run-1');
      expect(event.task_id).toBe('task-1');
      expect(event.session_id).toBe('session-1');
      expect(event.trace_id).toBe(context.trace_id);
    }
    const [
      status,
      prepared,
      started,
      completed,
      requested,
      policy,
      required,
      decided,
      actStarted,
      actDone,
      progress,
      artifact,
      final,
    ] = runEvents;
    expect(status.agent_name).toBe('writer'); // last agent_chain entry
    expect(status.summary).toBe('task working');
    expect(prepared.payload).toMatchObject({ manifest: { total_estimated_tokens: 35 } });
    expect(prepared.step).toBe(1);
    expect(started.span_id).toBe('span-llm-1');
    expect(completed.payload).toMatchObject({
      usage: { input_tokens: 35, output_tokens: 12 },
      latency_ms: 40,
    });
    expect(completed.summary).toBe('test-model call completed');
    for (const e of [requested, policy, required, decided, actStarted, actDone]) {
      expect(e.action_id).toBe('act-1');
      expect(e.payload.action_id).toBe('act-1');
    }
    expect(policy.summary).toBe('delete_record: require_approval');
    // approval events carry the action inside `request`; it is promoted into the payload.
    expect(required.payload).toMatchObject({
      request: { request_id: 'req-1' },
      action: { action_id: 'act-1' },
    });
    expect(required).toMatchObject({ request: { request_id: 'req-1' }, action: { action_id: 'act-1' } });
    expect(prepared.manifest?.total_estimated_tokens).toBe(35);
    expect(decided.decision).toMatchObject({ approved: true });
    expect(policy.decision).toMatchObject({ outcome: 'require_approval' });
    expect(status.manifest).toBeUndefined();
    expect(decided.payload).toMatchObject({ decision: { approved: true, decided_by: 'alice' } });
    expect(decided.summary).toBe('delete_record: approved');
    expect(actDone.payload).toMatchObject({ result: { deleted: 7 } });
    expect(progress.summary).toBe('almost there');
    expect(artifact.payload).toMatchObject({ artifact: { id: 'art-1' } });
    expect(final.final).toBe(true);
    expect(events.slice(0, -1).map((e) => RunEvent.fromTaskEvent(e).final)).not.toContain(true);
  });

  it('recovers ids from the serialized final task when nothing else names them', () => {
    const context = runContext({ run_id: 'run-from-task', agent_chain: ['a', 'b', 'final-agent'] });
    const task = createTask('x', { id: 'task-9', state: 'completed', metadata: { run_context: context } });
    const event = RunEvent.fromTaskEvent({
      type: 'task.status',
      task_id: 'task-9',
      state: 'completed',
      final: true,
      timestamp: task.created_at,
      task,
    });
    expect(event).toMatchObject({
      run_id: 'run-from-task',
      agent_name: 'final-agent',
      session_id: 'session-1',
      final: true,
    });
    expect(event.payload.run_id).toBe('run-from-task');
  });

  it('reads the legacy session_id of a final task', () => {
    const task = createTask('x', { id: 't', state: 'completed', metadata: { session_id: 'legacy' } });
    const event = RunEvent.fromTaskEvent({
      type: 'task.status',
      task_id: 't',
      state: 'completed',
      final: true,
      timestamp: task.created_at,
      task,
    });
    expect(event.session_id).toBe('legacy');
    expect(event.run_id).toBeNull();
  });

  it('prefers ids on the event, then the context, then agentName over the agent chain', () => {
    const context = runContext();
    expect(
      RunEvent.fromTaskEvent(eventOf('task.progress', { run_id: 'own', agent_name: 'own-agent' }), {
        context,
      }),
    ).toMatchObject({
      run_id: 'own',
      agent_name: 'own-agent',
    });
    expect(RunEvent.fromTaskEvent(eventOf('task.progress'), { context, agentName: 'named' }).agent_name).toBe(
      'named',
    );
    const classLike = { toDict: () => runContext({ run_id: 'from-class' }) };
    expect(RunEvent.fromTaskEvent(eventOf('task.progress'), { context: classLike }).run_id).toBe(
      'from-class',
    );
    expect(RunEvent.fromTaskEvent(eventOf('task.progress'), { context: null }).run_id).toBeNull();
  });

  it('promotes the id values of the contract into the envelope and the payload', () => {
    const ids = {
      step: 3,
      span_id: 's',
      parent_span_id: 'p',
      action_id: 'a',
      parent_action_id: 'pa',
      delegation_id: 'd',
    };
    const event = RunEvent.fromTaskEvent(
      eventOf('action.started', { ...ids, action: action({ action_id: 'a' }) }),
    );
    expect(event).toMatchObject(ids);
    expect(event.payload).toMatchObject(ids);
  });

  it('takes the action id from the action when the event does not name it', () => {
    expect(
      RunEvent.fromTaskEvent(eventOf('action.requested', { action: action({ action_id: 'inner' }) }))
        .action_id,
    ).toBe('inner');
  });

  it('keeps the whole original event and never mutates it', () => {
    const source = eventOf('task.error', {
      error: { code: 'INTERNAL', message: 'boom' },
      custom: { nested: [1] },
    });
    const frozen = JSON.stringify(source);
    const event = RunEvent.fromTaskEvent(source, { context: runContext() });
    expect(JSON.stringify(source)).toBe(frozen);
    expect(event.payload).toMatchObject({ ...JSON.parse(frozen), run_id: 'run-1' });
    (source as unknown as { custom: { nested: number[] } }).custom.nested.push(2);
    expect(event.payload.custom).toEqual({ nested: [1] });
    expect(event.summary).toBe('boom');
  });

  it('uses the summary the event carries and shortens long ones', () => {
    expect(
      RunEvent.fromTaskEvent(eventOf('task.progress', { summary: 'mine', message: 'other' })).summary,
    ).toBe('mine');
    expect(
      RunEvent.fromTaskEvent(eventOf('task.progress', { message: 'x'.repeat(500) })).summary,
    ).toHaveLength(200);
  });

  it('fills a missing timestamp', () => {
    const event = RunEvent.fromTaskEvent({
      type: 'llm.stream',
      task_id: 't',
      delta: 'hi',
    } as unknown as TaskEvent);
    expect(Number.isNaN(Date.parse(event.timestamp))).toBe(false);
  });

  it('rejects what is not a task event with a ValueError', () => {
    expect(() => RunEvent.fromTaskEvent(null as unknown as TaskEvent)).toThrow(ValueError);
    expect(() => RunEvent.fromTaskEvent(eventOf('made.up' as RunEventType))).toThrow(
      /Unknown task event type "made.up"/,
    );
    expect(() =>
      RunEvent.fromTaskEvent({ type: 'task.progress', timestamp: 'x' } as unknown as TaskEvent),
    ).toThrow(/has no task_id/);
  });
});

describe('RunEvent.parse / is', () => {
  it('accepts a built event and rejects a foreign version', () => {
    const event = RunEvent.fromTaskEvent(eventOf('task.progress'));
    expect(RunEvent.is(event)).toBe(true);
    expect(RunEvent.parse(JSON.parse(JSON.stringify(event)))).toEqual(event);
    expect(() => RunEvent.parse({ ...event, version: '2.0' })).toThrow(/Unsupported RunEvent version "2.0"/);
    expect(() => RunEvent.parse({ ...event, sequence: -1 })).toThrow(ValueError);
    expect(RunEvent.is({ ...event, payload: null })).toBe(false);
  });
});

describe('envelopeOf / isEnvelopeOf', () => {
  const sources = (): TaskEvent[] => [
    ...completedRun().events,
    eventOf('task.progress', { message: 'x'.repeat(300), step: Number.NaN, run_id: '' }),
    eventOf('approval.required', {
      request: { request_id: 'r', action: action({ action_id: 'from-request' }) },
    }),
    eventOf('action.failed', { action: action(), error: { code: 'E', message: 'it broke' } }),
    eventOf('task.status', { state: 'working', final: true, summary: 'my own words' }),
  ];

  it('derives from its payload the very event fromTaskEvent built, for every kind of event', () => {
    const { context } = completedRun();
    for (const source of sources()) {
      const event = RunEvent.fromTaskEvent(source, { context, agentName: 'fallback' });
      const derived = envelopeOf(event.payload, 7);
      expect(derived).toEqual({ ...event, sequence: 7 });
      expect(Object.keys(derived)).toEqual(Object.keys(event));
      expect(isEnvelopeOf({ ...event, sequence: 3 })).toBe(true);
      // A copy of it (the promoted objects no longer the payload's own) still is.
      expect(isEnvelopeOf(JSON.parse(JSON.stringify(event)) as RunEvent)).toBe(true);
    }
  });

  it('is false for an event changed after it was built, or one that carries a field of its own', () => {
    const event = RunEvent.fromTaskEvent(eventOf('action.requested', { action: action() }));
    const changed: Record<string, unknown>[] = [
      { ...event, summary: 'changed' },
      { ...event, agent_name: 'someone else' },
      { ...event, severity: 'error' },
      { ...event, final: true },
      { ...event, timestamp: '2030-01-01T00:00:00.000Z' },
      { ...event, action: { ...event.action, name: 'another' } },
      { ...event, decision: { outcome: 'allow' } },
      { ...event, extra: 1 },
      { ...event, payload: { ...event.payload, timestamp: 5 } },
    ];
    for (const value of changed) expect(isEnvelopeOf(value as unknown as RunEvent)).toBe(false);
    const withoutAction: Record<string, unknown> = { ...event };
    delete withoutAction.action;
    expect(isEnvelopeOf(withoutAction as unknown as RunEvent)).toBe(false);
  });

  it('is false once any one field of the envelope differs from what its payload gives', () => {
    const { context } = completedRun();
    for (const source of sources()) {
      const event = RunEvent.fromTaskEvent(source, { context, agentName: 'fallback' });
      for (const [field, value] of Object.entries(event)) {
        if (field === 'payload' || field === 'sequence') continue;
        const other =
          typeof value === 'boolean'
            ? !value
            : typeof value === 'number'
              ? value + 1
              : typeof value === 'string' || value === null
                ? 'something else'
                : { changed: true };
        expect([field, isEnvelopeOf({ ...event, [field]: other } as RunEvent)]).toEqual([field, false]);
        const without: Record<string, unknown> = { ...event };
        delete without[field];
        expect([field, isEnvelopeOf(without as unknown as RunEvent)]).toEqual([field, false]);
      }
    }
  });

  it("counts the event's own enumerable fields only, whatever Object.prototype lists", () => {
    const event = RunEvent.fromTaskEvent(eventOf('action.requested', { action: action() }));
    const hidden = { ...event };
    Object.defineProperty(hidden, 'note', { value: 'not listed', enumerable: false });
    expect(isEnvelopeOf(hidden)).toBe(true);
    Object.defineProperty(Object.prototype, 'polluted', { value: 1, enumerable: true, configurable: true });
    try {
      expect(isEnvelopeOf(event)).toBe(true);
      expect(isEnvelopeOf({ ...event, extra: 1 } as unknown as RunEvent)).toBe(false);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });
});
