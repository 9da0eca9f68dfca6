import type { TaskEvent } from '@agent/core';
import { FanOutEventSink } from '../event-sink.js';
import { REDACTED } from '../redaction.js';
import { RunEvent } from '../run-event.js';
import { RunRecorder } from '../run-recorder.js';
import { action, completedRun, runContext, tick } from '../test-support/fixtures.js';
import { LocalTraceTelemetry } from './local-trace-telemetry.js';
import type { SpanData } from './span-data.js';

function ids(): () => string {
  let n = 0;
  return () => `gen-${(n += 1)}`;
}

function byName(spans: SpanData[], prefix: string): SpanData {
  const span = spans.find((s) => s.name.startsWith(prefix));
  if (!span) throw new Error(`no span ${prefix} in ${spans.map((s) => s.name).join(', ')}`);
  return span;
}

describe('LocalTraceTelemetry', () => {
  it('builds run, model-call and action spans that share ids with the events', () => {
    const { events, context } = completedRun();
    const telemetry = new LocalTraceTelemetry({ newSpanId: ids() });
    for (const event of events) telemetry.emitTaskEvent(event, { context });
    const spans = telemetry.spans();
    expect(spans.map((s) => s.name).sort()).toEqual([
      'chat test-model',
      'execute_tool delete_record',
      'invoke_agent writer',
    ]);
    for (const span of spans) {
      expect(span).toMatchObject({
        trace_id: context.trace_id,
        run_id: 'run-1',
        task_id: 'task-1',
        session_id: 'session-1',
        agent_name: 'writer',
      });
      expect(span.end_time).not.toBeNull();
    }
    const root = byName(spans, 'invoke_agent');
    expect(root.parent_span_id).toBeNull();
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'writer',
      'gen_ai.conversation.id': 'session-1',
      'agent_tasks.run_id': 'run-1',
      'agent_tasks.task_id': 'task-1',
      'agent_tasks.task.state': 'completed',
    });
    expect(root.status).toBe('unset');
    expect(root.events.map((e) => e.name)).toEqual(['context.prepared']);
    expect(root.events[0].attributes['agent_tasks.context.total_estimated_tokens']).toBe(35);

    const llm = byName(spans, 'chat');
    expect(llm).toMatchObject({ span_id: 'span-llm-1', parent_span_id: root.span_id, kind: 'client' });
    expect(llm.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'test-model',
      'gen_ai.response.model': 'test-model',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.input_tokens': 35,
      'gen_ai.usage.output_tokens': 12,
      'agent_tasks.step': 1,
    });

    const tool = byName(spans, 'execute_tool');
    expect(tool).toMatchObject({ parent_span_id: root.span_id, kind: 'internal', status: 'unset' });
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'delete_record',
      'gen_ai.tool.call.id': 'act-1',
      'gen_ai.tool.type': 'function',
      'agent_tasks.action.capabilities': ['records.delete'],
    });
    expect(tool.events.map((e) => e.name)).toEqual([
      'action.policy',
      'approval.required',
      'approval.decided',
    ]);
    expect(tool.events[2].attributes['agent_tasks.approval.approved']).toBe(true);
    expect(Date.parse(tool.start_time)).toBeLessThan(Date.parse(tool.end_time!));
  });

  it('marks failures, denials and cancellation', () => {
    const telemetry = new LocalTraceTelemetry();
    const ev = (type: string, extra: Record<string, unknown> = {}): TaskEvent =>
      ({ type, task_id: 't', run_id: 'r', timestamp: tick(), ...extra }) as unknown as TaskEvent;
    telemetry.emitTaskEvent(
      ev('action.denied', {
        action: action({ action_id: 'd' }),
        error: { code: 'ACTION_DENIED', message: 'policy' },
      }),
    );
    telemetry.emitTaskEvent(ev('action.started', { action: action({ action_id: 'f', name: 'read_file' }) }));
    telemetry.emitTaskEvent(
      ev('action.failed', {
        action: action({ action_id: 'f', name: 'read_file' }),
        error: { code: 'INTERNAL', message: 'io' },
      }),
    );
    telemetry.emitTaskEvent(ev('llm.call.started', { model: 'm' }));
    telemetry.emitTaskEvent(ev('task.status', { state: 'canceled', final: true }));
    const spans = telemetry.spans();
    const denied = spans.find((s) => s.attributes['gen_ai.tool.call.id'] === 'd')!;
    expect(denied).toMatchObject({ status: 'error', status_message: 'policy' });
    expect(denied.attributes['error.type']).toBe('ACTION_DENIED');
    expect(spans.find((s) => s.attributes['gen_ai.tool.call.id'] === 'f')!.attributes['error.type']).toBe(
      'INTERNAL',
    );
    const unfinished = byName(spans, 'chat');
    expect(unfinished.attributes['agent_tasks.unfinished']).toBe(true);
    const root = byName(spans, 'invoke_agent');
    expect(root.status).toBe('unset');
    expect(root.attributes['error.type']).toBe('cancelled');
  });

  it('marks a failed run with its error code and back-dates a lone completion', () => {
    const telemetry = new LocalTraceTelemetry();
    const at = '2026-03-01T00:00:01.000Z';
    telemetry.observe(
      RunEvent.fromTaskEvent({
        type: 'llm.call.completed',
        task_id: 't',
        timestamp: at,
        model: 'm',
        latency_ms: 500,
      } as unknown as TaskEvent),
    );
    telemetry.observe(
      RunEvent.fromTaskEvent({
        type: 'task.status',
        task_id: 't',
        state: 'failed',
        final: true,
        timestamp: at,
        task: {
          id: 't',
          state: 'failed',
          messages: [],
          artifacts: [],
          created_at: at,
          metadata: { error: { code: 'BUDGET_EXCEEDED', message: 'over' } },
        },
      }),
    );
    const spans = telemetry.spans();
    expect(byName(spans, 'chat').start_time).toBe('2026-03-01T00:00:00.500Z');
    expect(byName(spans, 'invoke_agent')).toMatchObject({ status: 'error', status_message: 'over' });
    expect(byName(spans, 'invoke_agent').attributes['error.type']).toBe('BUDGET_EXCEEDED');
  });

  it('nests delegated actions under their parent action', () => {
    const telemetry = new LocalTraceTelemetry();
    const ev = (extra: Record<string, unknown>): TaskEvent =>
      ({
        type: 'action.started',
        task_id: 't',
        run_id: 'r',
        timestamp: tick(),
        ...extra,
      }) as unknown as TaskEvent;
    telemetry.emitTaskEvent(
      ev({ action: action({ action_id: 'parent', name: 'ask_agent', kind: 'agent.call' }) }),
    );
    telemetry.emitTaskEvent(
      ev({ action: action({ action_id: 'child', name: 'lookup' }), parent_action_id: 'parent' }),
    );
    const [parent, child] = telemetry.spans().filter((s) => s.name.startsWith('execute_tool'));
    expect(child.parent_span_id).toBe(parent.span_id);
    expect(parent.attributes['gen_ai.tool.type']).toBe('extension');
    expect(child.end_time).toBeNull();
  });

  it('exports redacted JSON and streams spans to listeners, isolating failures', () => {
    const seen: string[] = [];
    const telemetry = new LocalTraceTelemetry({
      listeners: [
        { onStart: (s) => seen.push(`start ${s.name}`), onEnd: (s) => seen.push(`end ${s.name}`) },
        {
          onEnd: () => {
            throw new Error('exporter down');
          },
        },
      ],
    });
    const ev = (type: string, extra: Record<string, unknown>): TaskEvent =>
      ({ type, task_id: 't', timestamp: tick(), ...extra }) as unknown as TaskEvent;
    telemetry.emitTaskEvent(
      ev('budget.warning', { limit: 'max_steps', used: 8, max: 10, summary: 'Bearer abcdefgh12345' }),
    );
    telemetry.emitTaskEvent(ev('task.status', { state: 'completed', final: true }));
    expect(seen).toEqual(['start invoke_agent', 'end invoke_agent']);
    expect(telemetry.listenerErrors.map((e) => e.message)).toEqual(['exporter down']);
    const exported = JSON.parse(telemetry.exportJson()) as { version: string; spans: SpanData[] };
    expect(exported.version).toBe('1.0');
    expect(exported.spans[0].events[0].attributes['agent_tasks.summary']).toBe(REDACTED);
    expect(exported.spans[0].events[0].attributes['agent_tasks.budget.limit']).toBe('max_steps');
    expect(telemetry.spans()[0].events[0].attributes['agent_tasks.summary']).toBe('Bearer abcdefgh12345');
  });

  it('sits beside a recorder behind one sink, so spans and events share ids', () => {
    const telemetry = new LocalTraceTelemetry();
    const recorder = new RunRecorder();
    const sink = new FanOutEventSink([recorder, (event) => telemetry.observe(event)]);
    const context = runContext({ run_id: 'shared-run' });
    for (const event of completedRun('shared-task', context).events) sink.emitTaskEvent(event, { context });
    const report = recorder.toReport();
    const spans = telemetry.spansForRun('shared-run');
    expect(spans).toHaveLength(3);
    expect(new Set(spans.map((s) => s.trace_id))).toEqual(new Set([report.traceId]));
    expect(new Set(spans.map((s) => s.task_id))).toEqual(new Set([report.taskId]));
    telemetry.clear();
    expect(telemetry.spans()).toEqual([]);
  });

  it('bounds the spans it keeps', () => {
    const telemetry = new LocalTraceTelemetry({ maxSpans: 2 });
    for (let n = 0; n < 5; n += 1) {
      telemetry.emitTaskEvent({
        type: 'task.status',
        task_id: `t${n}`,
        state: 'completed',
        final: true,
        timestamp: tick(),
      });
    }
    expect(telemetry.spans().map((s) => s.task_id)).toEqual(['t3', 't4']);
    expect(() => new LocalTraceTelemetry({ maxSpans: 0 })).toThrow(/maxSpans/);
  });
});
