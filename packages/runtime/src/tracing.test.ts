/**
 * One trace across every hop, exported by a real OpenTelemetry SDK: a client span → agent A (over
 * HTTP) → A's model call, tool and delegated call → agent B (over gRPC) → B's model call. Parents,
 * kinds, GenAI attributes and the GenAI client metrics are read back from in-memory exporters.
 */
import { context, metrics, trace, SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  type HistogramMetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { CLIENT_OPERATIONS, createMessage, createTask, messageText, type Task } from '@agent/core';
import { GRPCTransport } from '@agent/transport-grpc';
import { HTTPTransport } from '@agent/transport-http';
import { Agent } from './agent.js';
import { ScriptedLLM } from './testing/index.js';

class TestMetricReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager().enable();
const reader = new TestMetricReader();
const meterProvider = new MeterProvider({ readers: [reader] });

beforeAll(() => {
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
});

afterAll(async () => {
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  trace.disable();
  metrics.disable();
  context.disable();
});

beforeEach(() => exporter.reset());

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

function byName(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  expect(found).toHaveLength(1);
  return found[0];
}

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan): string => span.spanContext().spanId;

describe('one trace across client → agent A (HTTP) → agent B (gRPC)', () => {
  let agentA: Agent;
  let agentB: Agent;
  let client: HTTPTransport;

  beforeAll(async () => {
    agentB = new Agent({
      card: { name: 'agent-b' },
      transport: new GRPCTransport({ url: 'grpc://127.0.0.1:0' }),
      llm: new ScriptedLLM([{ content: 'from b', toolCalls: [], usage: usage(11, 3) }], { model: 'model-b' }),
    });
    await agentB.start();
    agentA = new Agent({
      card: { name: 'agent-a' },
      transport: new HTTPTransport({ url: 'http://127.0.0.1:0' }),
      outbound: new GRPCTransport({ url: agentB.card.url }),
      llm: new ScriptedLLM(
        [
          {
            content: '',
            toolCalls: [{ id: 'call-1', name: 'lookup', arguments: { word: 'x' } }],
            usage: usage(20, 5),
          },
          { content: 'looked up', toolCalls: [], usage: usage(30, 7) },
        ],
        { provider: 'openai', model: 'model-a' },
      ),
      tools: [
        {
          name: 'lookup',
          description: 'Looks a word up',
          handler: async ({ word }) => ({ word, found: true }),
        },
      ],
      execute: async (task, run) => {
        const answer = await run.infer();
        const child = await run.sendTaskTo(agentB.card.url, createTask(createMessage('help')));
        await run.addMessage(createMessage(`${answer.content} + ${messageText(child)}`, { role: 'agent' }));
      },
    });
    await agentA.start();
    client = new HTTPTransport({ url: agentA.card.url });
  });

  afterAll(async () => {
    await client.stop();
    await agentA.stop();
    await agentB.stop();
  });

  it("links every span into the caller's trace, each under the span that caused it", async () => {
    const tracer = trace.getTracer('test-client');
    const done = await tracer.startActiveSpan('client call', async (span) => {
      try {
        return await client.send<Task>(CLIENT_OPERATIONS.send_task, agentA.card.url, createTask('hello'));
      } finally {
        span.end();
      }
    });
    expect(done.state).toBe('completed');
    expect(messageText(done)).toBe('looked up + from b');

    const spans = exporter.getFinishedSpans();
    const clientSpan = byName(spans, 'client call');
    const traceId = clientSpan.spanContext().traceId;
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([traceId]));
    // The task's record names the same trace.
    expect((done.metadata.run_context as { trace_id: string }).trace_id).toBe(traceId);

    const taskA = byName(spans, 'invoke_agent agent-a');
    expect(taskA.kind).toBe(SpanKind.SERVER);
    expect(parentOf(taskA)).toBe(idOf(clientSpan));
    expect(taskA.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'agent-a',
      'agent_tasks.task_id': done.id,
      'agent_tasks.trace_id': traceId,
      'agent_tasks.task.state': 'completed',
    });

    const chatsA = spans.filter((span) => span.name === 'chat model-a');
    expect(chatsA).toHaveLength(2);
    for (const chat of chatsA) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(parentOf(chat)).toBe(idOf(taskA));
    }
    expect(chatsA[0].attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'model-a',
      'gen_ai.response.model': 'model-a',
      'gen_ai.usage.input_tokens': 20,
      'gen_ai.usage.output_tokens': 5,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });

    const tool = byName(spans, 'execute_tool lookup');
    expect(parentOf(tool)).toBe(idOf(taskA));
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call-1',
    });

    const delegation = byName(spans, 'invoke_agent');
    expect(delegation.kind).toBe(SpanKind.CLIENT);
    expect(parentOf(delegation)).toBe(idOf(taskA));
    expect(delegation.attributes['agent_tasks.delegation.target']).toBe(agentB.card.url);

    const taskB = byName(spans, 'invoke_agent agent-b');
    expect(taskB.kind).toBe(SpanKind.SERVER);
    expect(parentOf(taskB)).toBe(idOf(delegation));
    const chatB = byName(spans, 'chat model-b');
    expect(parentOf(chatB)).toBe(idOf(taskB));
    expect(chatB.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 3,
    });
  });

  it('records gen_ai.client.operation.duration and gen_ai.client.token.usage per model call', async () => {
    const { resourceMetrics } = await reader.collect();
    const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const duration = all.find((metric) => metric.descriptor.name === 'gen_ai.client.operation.duration') as
      HistogramMetricData | undefined;
    const tokens = all.find((metric) => metric.descriptor.name === 'gen_ai.client.token.usage') as
      HistogramMetricData | undefined;
    expect(duration?.descriptor.unit).toBe('s');
    expect(tokens?.descriptor.unit).toBe('{token}');
    const point = (data: HistogramMetricData | undefined, attributes: Attributes) =>
      data?.dataPoints.find((p) =>
        Object.entries(attributes).every(([key, value]) => p.attributes[key] === value),
      );
    expect(
      point(duration, { 'gen_ai.request.model': 'model-a', 'gen_ai.provider.name': 'openai' })?.value.count,
    ).toBe(2);
    expect(point(duration, { 'gen_ai.request.model': 'model-b' })?.value.count).toBe(1);
    expect(
      point(tokens, { 'gen_ai.request.model': 'model-a', 'gen_ai.token.type': 'input' })?.value.sum,
    ).toBe(50);
    expect(
      point(tokens, { 'gen_ai.request.model': 'model-a', 'gen_ai.token.type': 'output' })?.value.sum,
    ).toBe(12);
    expect(
      point(tokens, { 'gen_ai.request.model': 'model-b', 'gen_ai.token.type': 'input' })?.value.sum,
    ).toBe(11);
  });
});

describe('trace context without a caller span', () => {
  it("starts a trace of its own and names it in the task's run_context", async () => {
    const agent = new Agent({ card: { name: 'solo' }, execute: async () => undefined });
    const done = await agent.handleTask(createTask('hi'));
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('invoke_agent solo');
    expect(span.kind).toBe(SpanKind.INTERNAL);
    expect(span.parentSpanContext).toBeUndefined();
    expect((done.metadata.run_context as { trace_id: string }).trace_id).toBe(span.spanContext().traceId);
  });

  it("keeps the trace id the task's run_context names, under the caller's span", async () => {
    const agent = new Agent({ card: { name: 'named' }, execute: async () => undefined });
    const task = createTask('hi');
    task.metadata.run_context = { trace_id: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' };
    const parent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const ctx = {
      headers: { traceparent: parent },
      signal: new AbortController().signal,
      transport: 'http' as const,
    };
    const done = await agent.handleTask(task, ctx);
    expect((done.metadata.run_context as { trace_id: string }).trace_id).toBe(
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    );
    const [span] = exporter.getFinishedSpans();
    expect(span.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(parentOf(span)).toBe('00f067aa0ba902b7');
    expect(span.attributes['agent_tasks.trace_id']).toBe('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
  });

  it("marks a failed run's span with the error code and status", async () => {
    const agent = new Agent({
      card: { name: 'failing' },
      llm: new ScriptedLLM([]),
      logger: {
        error: () => undefined,
        warn: () => undefined,
        info: () => undefined,
        debug: () => undefined,
      },
    });
    const done = await agent.handleTask(createTask('hi'));
    expect(done.state).toBe('failed');
    const spans = exporter.getFinishedSpans();
    const task = byName(spans, 'invoke_agent failing');
    expect(task.status.code).toBe(SpanStatusCode.ERROR);
    expect(task.attributes['error.type']).toBe('INTERNAL');
    const chat = byName(spans, 'chat scripted-1');
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    expect(parentOf(chat)).toBe(idOf(task));
  });

  it('starts no spans with tracing: false', async () => {
    const agent = new Agent({ card: { name: 'quiet' }, tracing: false, execute: async () => undefined });
    await agent.handleTask(createTask('hi'));
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });
});
