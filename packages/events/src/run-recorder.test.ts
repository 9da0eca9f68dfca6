import { ValueError, type TaskEvent } from '@agent/core';
import { InMemoryEventSink } from './event-sink.js';
import { REDACTED, RedactionPolicy } from './redaction.js';
import { RunEvent } from './run-event.js';
import { recordTaskEventOnly, RunRecorder } from './run-recorder.js';
import { RunReport, type RunReportData } from './run-report.js';
import { InMemoryRunStore } from './store/in-memory-run-store.js';
import { action, completedRun, JWT, runContext, tick } from './test-support/fixtures.js';

function recordRun(): RunReport {
  const { events, context } = completedRun();
  const recorder = new RunRecorder({ context });
  for (const event of events) recorder.recordTaskEvent(event);
  return recorder.toReport({ metadata: { suite: 'recorder', api_key: 'sk-1' } });
}

describe('RunRecorder → RunReport', () => {
  it('collects manifests, actions, approvals, artifacts, metrics and the final task', () => {
    const report = recordRun();
    expect(report).toMatchObject({
      runId: 'run-1',
      taskId: 'task-1',
      sessionId: 'session-1',
      agentName: 'writer',
      status: 'completed',
    });
    expect(report.traceId).toBe(runContext().trace_id);
    expect(report.eventCount).toBe(13);
    expect(report.events.map((e) => e.sequence)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    expect(report.contextManifests).toHaveLength(1);
    expect(report.contextManifests[0].total_estimated_tokens).toBe(35);
    expect(report.llmMetrics).toEqual({
      calls: 1,
      started_calls: 1,
      input_tokens: 35,
      output_tokens: 12,
      total_tokens: 47,
      total_latency_ms: 40,
      max_latency_ms: 40,
      by_model: {
        'scripted/test-model': {
          provider: 'scripted',
          model: 'test-model',
          calls: 1,
          input_tokens: 35,
          output_tokens: 12,
          total_latency_ms: 40,
        },
      },
    });
    expect(report.actions).toHaveLength(1);
    expect(report.actions[0]).toMatchObject({
      action_id: 'act-1',
      name: 'delete_record',
      kind: 'tool.call',
      capabilities: ['records.delete'],
      status: 'completed',
      policy: { outcome: 'require_approval' },
      approval_request_id: 'req-1',
      approved: true,
      result: { deleted: 7 },
      error: null,
    });
    expect(report.actions[0].started_at).not.toBeNull();
    expect(report.approvals).toEqual([
      expect.objectContaining({
        request_id: 'req-1',
        action_id: 'act-1',
        status: 'approved',
        decision: expect.objectContaining({ decided_by: 'alice' }),
      }),
    ]);
    expect(report.artifacts.map((a) => a.id)).toEqual(['art-1']);
    expect(report.finalTask?.state).toBe('completed');
    expect(report.durationSeconds).toBeGreaterThan(0);
    expect(report.metadata).toEqual({ suite: 'recorder', api_key: 'sk-1' });
  });

  it('records denials, failures, errors and budget events', () => {
    const recorder = new RunRecorder({ agentName: 'solo' });
    const ev = (type: string, extra: Record<string, unknown>): TaskEvent =>
      ({ type, task_id: 't', timestamp: tick(), ...extra }) as unknown as TaskEvent;
    const denied = action({ action_id: 'a-denied', name: 'drop_table' });
    const failing = action({ action_id: 'a-failed', name: 'read_file' });
    recorder.recordTaskEvent(ev('budget.warning', { limit: 'max_llm_calls', used: 4, max: 5 }));
    recorder.recordTaskEvent(
      ev('action.denied', { action: denied, error: { code: 'ACTION_DENIED', message: 'no' } }),
    );
    recorder.recordTaskEvent(ev('action.started', { action: failing }));
    recorder.recordTaskEvent(
      ev('action.failed', { action: failing, error: { code: 'INTERNAL', message: 'io' } }),
    );
    recorder.recordTaskEvent(ev('budget.exceeded', { limit: 'max_llm_calls', used: 5, max: 5 }));
    recorder.recordTaskEvent(ev('llm.call.started', { model: 'm' }));
    recorder.recordTaskEvent(ev('task.error', { error: { code: 'BUDGET_EXCEEDED', message: 'over' } }));
    recorder.recordTaskEvent(ev('task.status', { state: 'failed', final: true }));
    const report = recorder.toReport();
    expect(report.agentName).toBe('solo');
    expect(report.runId).toBeNull();
    expect(report.status).toBe('failed');
    expect(report.actions.map((a) => [a.action_id, a.status, a.error?.code])).toEqual([
      ['a-denied', 'denied', 'ACTION_DENIED'],
      ['a-failed', 'failed', 'INTERNAL'],
    ]);
    expect(report.errors.map((e) => [e.type, e.code])).toEqual([
      ['action.denied', 'ACTION_DENIED'],
      ['action.failed', 'INTERNAL'],
      ['task.error', 'BUDGET_EXCEEDED'],
    ]);
    expect(report.budgetEvents.map((b) => [b.type, b.limit, b.used, b.max])).toEqual([
      ['budget.warning', 'max_llm_calls', 4, 5],
      ['budget.exceeded', 'max_llm_calls', 5, 5],
    ]);
    expect(report.llmMetrics).toMatchObject({ calls: 0, started_calls: 1 });
    expect(report.finalTask).toBeNull();
  });

  it('merges appended artifact chunks', () => {
    const recorder = new RunRecorder();
    const chunk = (text: string, append: boolean): TaskEvent => ({
      type: 'task.artifact',
      task_id: 't',
      timestamp: tick(),
      append,
      last_chunk: false,
      artifact: { id: 'a', parts: [{ type: 'text', content: text }], metadata: {}, created_at: tick() },
    });
    for (const [text, append] of [
      ['one', false],
      ['two', true],
      ['three', true],
    ] as const)
      recorder.recordTaskEvent(chunk(text, append));
    expect(recorder.toReport().artifacts[0].parts.map((p) => p.content)).toEqual(['one', 'two', 'three']);
  });

  it('numbers every event itself, so its sequences are 1..n whatever the input carried', () => {
    const sink = new InMemoryEventSink();
    const recorder = new RunRecorder();
    for (const event of completedRun().events) recorder.recordEvent(sink.emitTaskEvent(event));
    recorder.recordEvent(RunEvent.fromTaskEvent(completedRun().events[0]));
    expect(recorder.events.map((e) => e.sequence)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
    expect(() => recorder.recordEvent({ nope: 1 } as unknown as RunEvent)).toThrow(ValueError);
  });

  it('never lets sequences go backwards or repeat when numbered and unnumbered events mix', () => {
    const sink = new InMemoryEventSink();
    const events = completedRun().events;
    for (const event of events.slice(0, 3)) sink.emitTaskEvent(event);
    const numbered = sink.toList()[2];
    const recorder = new RunRecorder();
    recorder.recordEvent(numbered);
    const fromTask = recorder.recordTaskEvent(events[3]);
    recorder.recordEvent(RunEvent.fromTaskEvent(events[4]));
    expect(recorder.events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(recorder.toReport().events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(fromTask.sequence).toBe(2);
    expect(recorder.nextSequence).toBe(4);
    // The sink's event keeps its own number: the recorder stores a copy.
    expect(numbered.sequence).toBe(3);
    expect(sink.toList().map((e) => e.sequence)).toEqual([1, 2, 3]);
  });

  it('is an EventSink', () => {
    const recorder = new RunRecorder({ context: runContext() });
    expect(recorder.emitTaskEvent(completedRun().events[0]).sequence).toBe(1);
    expect(recorder.toReport().runId).toBe('run-1');
  });
});

/**
 * completedRun with a long stream in it: after the model call, `chunks` appended chunks of artifact
 * `stream`, each followed by an `llm.stream` delta, and a progress tick every tenth chunk. The final
 * task carries the whole streamed artifact.
 */
function streamingRun(chunks: number): { events: TaskEvent[]; context: ReturnType<typeof runContext> } {
  const { events, context } = completedRun();
  const streamed: TaskEvent[] = [];
  const parts: { type: 'text'; content: string }[] = [];
  for (let i = 1; i <= chunks; i++) {
    const part = { type: 'text' as const, content: `chunk ${i}` };
    parts.push(part);
    streamed.push({
      type: 'task.artifact',
      task_id: 'task-1',
      timestamp: tick(),
      append: i > 1,
      last_chunk: i === chunks,
      artifact: { id: 'stream', parts: [part], metadata: { index: i }, created_at: tick() },
    } as TaskEvent);
    streamed.push({ type: 'llm.stream', task_id: 'task-1', timestamp: tick(), delta: `d${i}` } as TaskEvent);
    if (i % 10 === 0)
      streamed.push({
        type: 'task.progress',
        task_id: 'task-1',
        timestamp: tick(),
        progress: i / chunks,
      } as TaskEvent);
  }
  const final = events[events.length - 1] as unknown as { task: { artifacts: unknown[] } };
  final.task.artifacts.push({ id: 'stream', parts, metadata: {}, created_at: tick() });
  // After llm.call.completed, before the tool call: streamed events sit between audited ones.
  return { events: [...events.slice(0, 4), ...streamed, ...events.slice(4)], context };
}

const STREAMED = new Set(['task.artifact', 'llm.stream', 'task.progress']);

describe('RunRecorder maxStreamedEvents', () => {
  it('lists the first N streamed events and every other one, and folds in all of them', () => {
    const { events, context } = streamingRun(300);
    const bounded = new RunRecorder({ context, maxStreamedEvents: 50 });
    const unbounded = new RunRecorder({ context, maxStreamedEvents: Infinity });
    for (const event of events) {
      bounded.recordTaskEvent(event);
      unbounded.recordTaskEvent(event);
    }
    const report = bounded.toReport({ metadata: { m: 1 } });
    const full = unbounded.toReport({ metadata: { m: 1 } });
    const streamedCount = events.filter((event) => STREAMED.has(event.type)).length;
    const others = events.filter((event) => !STREAMED.has(event.type));

    const listed = report.events;
    expect(listed.filter((event) => STREAMED.has(event.type))).toEqual(
      full.events.filter((event) => STREAMED.has(event.type)).slice(0, 50),
    );
    expect(listed.filter((event) => !STREAMED.has(event.type)).map((event) => event.type)).toEqual(
      others.map((event) => event.type),
    );
    expect(listed).toHaveLength(50 + others.length);
    expect(report.eventCount).toBe(listed.length);
    expect(report.droppedEvents).toBe(streamedCount - 50);
    expect(report.toDict().dropped_events).toBe(streamedCount - 50);
    expect(full.droppedEvents).toBe(0);
    expect(full.events).toHaveLength(events.length);
    // Listed events keep the numbers the recorder gave them: the gaps are the dropped ones.
    expect(listed.map((event) => event.sequence)).toEqual(
      full.events
        .filter((event) => listed.some((kept) => kept.sequence === event.sequence))
        .map((e) => e.sequence),
    );
    expect(listed.at(-1)!.sequence).toBe(events.length);
    expect(bounded.events).toEqual(listed);
    expect(bounded.droppedEvents).toBe(streamedCount - 50);

    // Everything else is exactly what listing every event gives.
    const rest = (dict: Record<string, unknown>) => {
      const { events: _events, dropped_events: _dropped, created_at: _created, ...others } = dict;
      return others;
    };
    expect(rest({ ...report.toDict({ redactionPolicy: null }) })).toEqual(
      rest({ ...full.toDict({ redactionPolicy: null }) }),
    );
    const stream = report.artifacts.find((artifact) => artifact.id === 'stream')!;
    expect(stream.parts.map((part) => part.content)).toEqual(
      Array.from({ length: 300 }, (_, i) => `chunk ${i + 1}`),
    );
    expect(report.finalTask!.artifacts.find((artifact) => artifact.id === 'stream')!.parts).toHaveLength(300);
    expect(report.status).toBe('completed');
    expect(report.startedAt).toBe(full.startedAt);
    expect(report.endedAt).toBe(full.endedAt);
  });

  it('lists 1,000 streamed events by default, and none with 0', () => {
    const progress = (i: number): TaskEvent =>
      ({ type: 'task.progress', task_id: 't', timestamp: tick(), progress: i / 1005 }) as TaskEvent;
    const recorder = new RunRecorder();
    const none = new RunRecorder({ maxStreamedEvents: 0 });
    for (let i = 0; i < 1005; i++) {
      recorder.recordTaskEvent(progress(i));
      none.recordTaskEvent(progress(i));
    }
    recorder.recordTaskEvent({
      type: 'task.status',
      task_id: 't',
      state: 'completed',
      final: true,
    } as TaskEvent);
    none.recordTaskEvent({ type: 'task.status', task_id: 't', state: 'completed', final: true } as TaskEvent);
    const report = recorder.toReport();
    expect(report.eventCount).toBe(1001);
    expect(report.droppedEvents).toBe(5);
    expect(report.events.at(-1)!.sequence).toBe(1006);
    expect(none.toReport().events.map((event) => event.type)).toEqual(['task.status']);
    expect(none.toReport().droppedEvents).toBe(1005);
  });

  it('rejects a budget that is not a non-negative integer or Infinity', () => {
    for (const bad of [-1, 1.5, NaN, '10', null])
      expect(() => new RunRecorder({ maxStreamedEvents: bad as unknown as number })).toThrow(ValueError);
  });

  it('keeps a report built mid-run as it was while the run goes on', () => {
    const { events, context } = streamingRun(40);
    const recorder = new RunRecorder({ context, maxStreamedEvents: 10 });
    const half = events.length / 2;
    for (const event of events.slice(0, half)) recorder.recordTaskEvent(event);
    const early = recorder.toReport();
    const before = JSON.stringify(early.toDict({ redactionPolicy: null }));
    for (const event of events.slice(half)) recorder.recordTaskEvent(event);
    const late = recorder.toReport();
    expect(JSON.stringify(early.toDict({ redactionPolicy: null }))).toBe(before);
    expect(late.artifacts.find((a) => a.id === 'stream')!.parts.length).toBeGreaterThan(
      early.artifacts.find((a) => a.id === 'stream')!.parts.length,
    );
    expect(late.actions[0].status).toBe('completed');
  });

  it('shares nothing with the events it was given, listed or not', () => {
    const { events, context } = streamingRun(30);
    const recorder = new RunRecorder({ context, maxStreamedEvents: 5 });
    const returned = events.map((event) => recorder.recordTaskEvent(event));
    const report = recorder.toReport();
    const before = JSON.stringify(report.toDict({ redactionPolicy: null }));
    for (const event of [...events, ...returned] as unknown as Record<string, unknown>[]) {
      const payload = (event.payload ?? event) as Record<string, unknown>;
      const artifact = payload.artifact as { parts: { content: string }[] } | undefined;
      if (artifact) for (const part of artifact.parts) part.content = 'changed';
      if (payload.task) (payload.task as { artifacts: unknown[] }).artifacts.length = 0;
    }
    expect(JSON.stringify(report.toDict({ redactionPolicy: null }))).toBe(before);
    // Nor a report built after the changes.
    const later = recorder.toReport().toDict({ redactionPolicy: null });
    expect({ ...later, created_at: report.createdAt }).toEqual(JSON.parse(before));
  });
});

describe('RunRecorder timing', () => {
  const status = (timestamp: unknown, state = 'working'): TaskEvent =>
    ({ type: 'task.status', task_id: 't', state, final: false, timestamp }) as unknown as TaskEvent;

  it('spans the earliest to the latest timestamp, whatever order and repeats they come in', () => {
    const times = ['2026-01-01T00:00:01.500Z', '2026-01-01T00:00:00.250Z', '2026-01-01T00:00:01.500Z'];
    for (let round = 0; round < 2; round++) {
      const recorder = new RunRecorder();
      for (const time of times) recorder.recordTaskEvent(status(time));
      const report = recorder.toReport();
      expect(report.toDict().started_at).toBe(times[1]);
      expect(report.toDict().ended_at).toBe(times[0]);
      expect(report.durationSeconds).toBe(1.25);
    }
    const one = new RunRecorder();
    one.recordTaskEvent(status(times[0]));
    expect(one.toReport().durationSeconds).toBe(0);
    expect(new RunRecorder().toReport().durationSeconds).toBe(0);
  });
});

describe('recordTaskEventOnly (the runtime keeps no RunEvent)', () => {
  it('gives the report recordTaskEvent gives, listed and dropped events alike', () => {
    for (const run of [completedRun(), streamingRun(30)]) {
      const copied = new RunRecorder({ context: run.context, maxStreamedEvents: 5 });
      const handedOver = new RunRecorder({ context: run.context, maxStreamedEvents: 5 });
      for (const event of run.events) copied.recordTaskEvent(event);
      for (const event of run.events) recordTaskEventOnly(handedOver, event);
      const a = copied.toReport().toDict({ redactionPolicy: null });
      const b = handedOver.toReport().toDict({ redactionPolicy: null });
      expect({ ...b, created_at: a.created_at }).toEqual(a);
      expect(handedOver.nextSequence).toBe(run.events.length + 1);
    }
  });

  it('shares nothing with the task events it was given, or with what the recorder hands out', () => {
    const { events, context } = streamingRun(30);
    const recorder = new RunRecorder({ context, maxStreamedEvents: 5 });
    for (const event of events) recordTaskEventOnly(recorder, event);
    const report = recorder.toReport();
    const before = JSON.stringify(report.toDict({ redactionPolicy: null }));
    for (const event of events as unknown as Record<string, unknown>[]) {
      const artifact = event.artifact as { parts: { content: string }[] } | undefined;
      if (artifact) for (const part of artifact.parts) part.content = 'changed';
      if (event.task) (event.task as { artifacts: unknown[]; state: string }).artifacts.length = 0;
      if (event.action) (event.action as { name: string }).name = 'changed';
    }
    for (const event of recorder.events) {
      (event.payload as Record<string, unknown>).task_id = 'changed';
      if (event.action) (event.action as { name: string }).name = 'changed';
    }
    expect(JSON.stringify(report.toDict({ redactionPolicy: null }))).toBe(before);
    const later = recorder.toReport().toDict({ redactionPolicy: null });
    expect({ ...later, created_at: report.createdAt }).toEqual(JSON.parse(before));
  });

  it('rejects what recordTaskEvent rejects, without using a sequence number', () => {
    const recorder = new RunRecorder();
    expect(() =>
      recordTaskEventOnly(recorder, { type: 'nope', task_id: 't' } as unknown as TaskEvent),
    ).toThrow(ValueError);
    expect(recorder.nextSequence).toBe(1);
  });
});

describe('RunReport serialization', () => {
  it('round-trips through toDict / fromDict and JSON', () => {
    const report = recordRun();
    const raw = report.toDict({ redactionPolicy: null });
    const restored = RunReport.fromDict(JSON.parse(JSON.stringify(raw)));
    expect(restored.toDict({ redactionPolicy: null })).toEqual(raw);
    expect(restored.runId).toBe(report.runId);
  });

  it('redacts with the default policy unless told otherwise', () => {
    const { events, context } = completedRun();
    const recorder = new RunRecorder({ context });
    for (const event of events) recorder.recordTaskEvent(event);
    recorder.recordTaskEvent({
      type: 'task.progress',
      task_id: 'task-1',
      timestamp: tick(),
      message: `got ${JWT}`,
    } as unknown as TaskEvent);
    const report = recorder.toReport({ metadata: { api_key: 'sk-1' } });
    const dict = report.toDict();
    expect(dict.metadata).toEqual({ api_key: REDACTED });
    expect(dict.actions[0].action?.payload).toEqual({ arguments: { id: 7, api_key: REDACTED } });
    expect(dict.approvals[0].request.action.payload).toEqual({ arguments: { id: 7, api_key: REDACTED } });
    expect(JSON.stringify(dict)).not.toContain('sk-live-123');
    expect(JSON.stringify(report)).not.toContain(JWT);
    expect(dict.context_manifests[0].total_estimated_tokens).toBe(35);
    expect(report.toDict({ redactionPolicy: null }).metadata).toEqual({ api_key: 'sk-1' });
    expect(
      report.toDict({ redactionPolicy: new RedactionPolicy({ includeDefaults: false, keys: ['suite'] }) })
        .metadata,
    ).toEqual({ api_key: 'sk-1' });
  });

  it('gives copies, so a report cannot be edited through its getters', () => {
    const report = recordRun();
    report.events[0].type = 'task.error';
    report.metadata.extra = 1;
    expect(report.events[0].type).toBe('task.status');
    expect(report.metadata).not.toHaveProperty('extra');
  });

  it('keeps a report apart from the recorder: later changes to recorded events or metadata do not reach it', () => {
    const { events, context } = completedRun();
    const recorder = new RunRecorder({ context });
    const returned = events.map((event) => recorder.recordTaskEvent(event));
    const failed = recorder.recordTaskEvent({
      type: 'action.failed',
      task_id: 'task-1',
      timestamp: tick(),
      action: action({ action_id: 'a-io', capabilities: ['fs.read'] }),
      error: { code: 'INTERNAL', message: 'io', data: { path: '/a' } },
    } as unknown as TaskEvent);
    const metadata = { suite: 'apart', nested: { n: 1 } };
    const report = recorder.toReport({ metadata });
    const before = JSON.stringify(report.toDict({ redactionPolicy: null }));
    const final = returned[returned.length - 1]!.payload as Record<string, unknown>;
    (final.task as Record<string, unknown>).state = 'failed';
    ((final.task as Record<string, unknown>).artifacts as unknown[]).length = 0;
    ((failed.payload.error as Record<string, unknown>).data as Record<string, unknown>).path = '/b';
    (failed.payload.action as unknown as Record<string, unknown[]>).capabilities!.push('fs.write');
    for (const event of recorder.events) (event as unknown as Record<string, unknown>).summary = 'changed';
    metadata.nested.n = 2;
    expect(JSON.stringify(report.toDict({ redactionPolicy: null }))).toBe(before);
    expect(report.finalTask?.state).toBe('completed');
    expect(report.errors.at(-1)?.data).toEqual({ path: '/a' });
    // Nor do changes to what the report hands out.
    report.finalTask!.state = 'failed';
    report.toDict({ redactionPolicy: null }).events.at(-1)!.summary = 'x';
    expect(JSON.stringify(report.toDict({ redactionPolicy: null }))).toBe(before);
  });

  it('stores exactly the dict it gives, in every store', async () => {
    const report = recordRun();
    const store = new InMemoryRunStore();
    await store.saveRunReport(report);
    expect((await store.getRunReport(report.runId!))!.toDict()).toEqual(report.toDict());
  });

  it('loads a report stored before reports counted dropped events, as one that dropped none', () => {
    const { dropped_events: _dropped, ...old } = recordRun().toDict();
    const restored = RunReport.fromDict(JSON.parse(JSON.stringify(old)));
    expect(restored.droppedEvents).toBe(0);
    expect(restored.toDict().dropped_events).toBe(0);
    expect(restored.eventCount).toBe(13);
    expect(RunReport.fromDict({ ...old, dropped_events: null }).droppedEvents).toBe(0);
    expect(new RunReport(old as RunReportData).droppedEvents).toBe(0);
  });

  it('round-trips dropped_events and rejects one that is not a non-negative integer', () => {
    const { events, context } = streamingRun(20);
    const recorder = new RunRecorder({ context, maxStreamedEvents: 3 });
    for (const event of events) recorder.recordTaskEvent(event);
    const dict = recorder.toReport().toDict();
    expect(RunReport.fromDict(JSON.parse(JSON.stringify(dict))).droppedEvents).toBe(dict.dropped_events);
    expect(dict.dropped_events).toBeGreaterThan(0);
    for (const bad of [-1, 1.5, '3', {}]) {
      let error: unknown;
      try {
        RunReport.fromDict({ ...dict, dropped_events: bad });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ValueError);
      expect((error as ValueError).data).toEqual({ field: 'dropped_events' });
    }
  });

  it('rejects malformed dicts with a ValueError naming the field', () => {
    const dict = recordRun().toDict();
    expect(() => RunReport.fromDict(null)).toThrow(ValueError);
    expect(() => RunReport.fromDict({ ...dict, version: '9' })).toThrow(/Unsupported RunReport version/);
    expect(() => RunReport.fromDict({ ...dict, events: 'x' })).toThrow(/events must be an array/);
    expect(() => RunReport.fromDict({ ...dict, events: [{ version: '1.0' }] })).toThrow(/events\[0\]/);
    expect(() => RunReport.fromDict({ ...dict, run_id: 5 })).toThrow(/run_id must be a string/);
    expect(() => RunReport.fromDict({ ...dict, created_at: undefined })).toThrow(/created_at/);
  });
});
