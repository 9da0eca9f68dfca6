import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanAttributeValue,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type TimeInput,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { completedRun } from '../test-support/fixtures.js';
import { LocalTraceTelemetry } from './local-trace-telemetry.js';
import { OpenTelemetryBridge } from './opentelemetry-bridge.js';
import { markTracedRun, unmarkTracedRun } from './traced-runs.js';

/** A minimal recording TracerProvider: no OpenTelemetry SDK is installed here. */
class RecordingSpan implements Span {
  readonly attributes: Attributes = {};
  readonly events: { name: string; attributes?: Attributes; time?: TimeInput }[] = [];
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  ended = false;
  endTime: TimeInput | undefined;
  readonly #context: SpanContext;

  constructor(
    public name: string,
    readonly kind: SpanKind,
    readonly startTime: TimeInput | undefined,
    readonly parent: RecordingSpan | undefined,
    traceId: string,
    spanId: string,
  ) {
    this.#context = { traceId, spanId, traceFlags: 1 };
  }
  spanContext(): SpanContext {
    return this.#context;
  }
  setAttribute(key: string, value: SpanAttributeValue): this {
    this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    Object.assign(this.attributes, attributes);
    return this;
  }
  addEvent(name: string, attributes?: Attributes | TimeInput, time?: TimeInput): this {
    this.events.push({ name, attributes: attributes as Attributes, time });
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.status = status;
    return this;
  }
  updateName(name: string): this {
    this.name = name;
    return this;
  }
  end(endTime?: TimeInput): void {
    this.ended = true;
    this.endTime = endTime;
  }
  isRecording(): boolean {
    return !this.ended;
  }
  recordException(): void {}
}

class RecordingTracer implements Tracer {
  readonly spans: RecordingSpan[] = [];
  #n = 0;
  startSpan(name: string, options: SpanOptions = {}, context: Context = ROOT_CONTEXT): Span {
    const parent = trace.getSpan(context) as RecordingSpan | undefined;
    this.#n += 1;
    const span = new RecordingSpan(
      name,
      options.kind ?? SpanKind.INTERNAL,
      options.startTime,
      parent,
      parent?.spanContext().traceId ?? this.#n.toString(16).padStart(32, '0'),
      this.#n.toString(16).padStart(16, '0'),
    );
    span.setAttributes(options.attributes ?? {});
    this.spans.push(span);
    return span;
  }
  startActiveSpan(): never {
    throw new Error('not used by the bridge');
  }
}

function runThrough(bridge: OpenTelemetryBridge): void {
  const { events, context } = completedRun();
  const telemetry = new LocalTraceTelemetry({ listeners: [bridge] });
  for (const event of events) telemetry.emitTaskEvent(event, { context });
}

describe('OpenTelemetryBridge', () => {
  it('leaves alone the runs an Agent in this process traces itself', () => {
    const tracer = new RecordingTracer();
    const bridge = new OpenTelemetryBridge({ tracer });
    const runId = completedRun().context.run_id;
    markTracedRun(runId);
    try {
      runThrough(bridge);
    } finally {
      unmarkTracedRun(runId);
    }
    expect(tracer.spans).toHaveLength(0);
    runThrough(bridge);
    expect(tracer.spans.length).toBeGreaterThan(0);
  });

  it('emits the same spans with GenAI names, kinds, parents, attributes, events and times', () => {
    const tracer = new RecordingTracer();
    const bridge = new OpenTelemetryBridge({ tracer });
    runThrough(bridge);
    expect(bridge.openSpanCount).toBe(0);
    const byName = new Map(tracer.spans.map((s) => [s.name, s]));
    expect([...byName.keys()].sort()).toEqual([
      'chat test-model',
      'execute_tool delete_record',
      'invoke_agent writer',
    ]);
    const root = byName.get('invoke_agent writer')!;
    const chat = byName.get('chat test-model')!;
    const tool = byName.get('execute_tool delete_record')!;
    expect(root.parent).toBeUndefined();
    expect(chat.parent).toBe(root);
    expect(tool.parent).toBe(root);
    expect(chat.spanContext().traceId).toBe(root.spanContext().traceId);
    expect(chat.kind).toBe(SpanKind.CLIENT);
    expect(tool.kind).toBe(SpanKind.INTERNAL);
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'test-model',
      'gen_ai.usage.input_tokens': 35,
      'gen_ai.usage.output_tokens': 12,
    });
    expect(root.attributes).toMatchObject({
      'gen_ai.agent.name': 'writer',
      'agent_tasks.run_id': 'run-1',
      'gen_ai.conversation.id': 'session-1',
    });
    expect(tool.events.map((e) => e.name)).toEqual([
      'action.policy',
      'approval.required',
      'approval.decided',
    ]);
    for (const span of tracer.spans) {
      expect(span.ended).toBe(true);
      expect(span.startTime).toBeInstanceOf(Date);
      expect((span.endTime as Date).getTime()).toBeGreaterThanOrEqual((span.startTime as Date).getTime());
    }
  });

  it('sets ERROR status with the message on failed spans', () => {
    const tracer = new RecordingTracer();
    const telemetry = new LocalTraceTelemetry({ listeners: [new OpenTelemetryBridge({ tracer })] });
    telemetry.emitTaskEvent({
      type: 'action.failed',
      task_id: 't',
      timestamp: '2026-01-01T00:00:00.000Z',
      action: { action_id: 'a', kind: 'tool.call', name: 'x', payload: {}, capabilities: [], artifacts: [] },
      error: { code: 'INTERNAL', message: 'io' },
    } as never);
    expect(tracer.spans.find((s) => s.name === 'execute_tool x')!.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'io',
    });
  });

  it('uses the global tracer provider by default', () => {
    const tracer = new RecordingTracer();
    const provider: TracerProvider = { getTracer: () => tracer };
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    try {
      runThrough(new OpenTelemetryBridge());
      expect(tracer.spans).toHaveLength(3);
    } finally {
      trace.disable();
    }
  });

  it('ends the oldest span rather than growing without bound', () => {
    const tracer = new RecordingTracer();
    const bridge = new OpenTelemetryBridge({ tracer, maxOpenSpans: 1 });
    const telemetry = new LocalTraceTelemetry({ listeners: [bridge] });
    telemetry.emitTaskEvent({
      type: 'llm.call.started',
      task_id: 't',
      timestamp: '2026-01-01T00:00:00.000Z',
      model: 'm',
    } as never);
    expect(bridge.openSpanCount).toBe(1);
    expect(tracer.spans[0].ended).toBe(true);
  });
});
