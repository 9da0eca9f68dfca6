/**
 * The `genAiMetrics` option: each model call's GenAI metrics reach the sink with the values and
 * attributes the OpenTelemetry instruments record (read back here from an in-memory reader).
 */
import { metrics, type Attributes } from '@opentelemetry/api';
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  type HistogramMetricData,
} from '@opentelemetry/sdk-metrics';
import { createTask, type GenAiCallAttributes, type GenAiMetricsSink } from '@agent/core';
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

const reader = new TestMetricReader();
const meterProvider = new MeterProvider({ readers: [reader] });

beforeAll(() => {
  metrics.setGlobalMeterProvider(meterProvider);
});

afterAll(async () => {
  await meterProvider.shutdown();
  metrics.disable();
});

type Recorded =
  | { kind: 'tokens'; value: number; tokenType: 'input' | 'output'; call: GenAiCallAttributes }
  | { kind: 'duration'; value: number; call: GenAiCallAttributes };

class FakeSink implements GenAiMetricsSink {
  readonly records: Recorded[] = [];
  recordTokenUsage(value: number, tokenType: 'input' | 'output', call: GenAiCallAttributes): void {
    this.records.push({ kind: 'tokens', value, tokenType, call });
  }
  recordOperationDuration(value: number, call: GenAiCallAttributes): void {
    this.records.push({ kind: 'duration', value, call });
  }
  tokens(tokenType: 'input' | 'output'): number[] {
    return this.records.flatMap((r) => (r.kind === 'tokens' && r.tokenType === tokenType ? [r.value] : []));
  }
  durations(): Array<Extract<Recorded, { kind: 'duration' }>> {
    return this.records.filter((r): r is Extract<Recorded, { kind: 'duration' }> => r.kind === 'duration');
  }
}

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

async function otelPoints(
  model: string,
): Promise<{ duration?: HistogramMetricData; tokens?: HistogramMetricData }> {
  const { resourceMetrics } = await reader.collect();
  const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics) as HistogramMetricData[];
  const only = (name: string): HistogramMetricData | undefined => {
    const metric = all.find((m) => m.descriptor.name === name);
    if (!metric) return undefined;
    return {
      ...metric,
      dataPoints: metric.dataPoints.filter((p) => p.attributes['gen_ai.request.model'] === model),
    };
  };
  return { duration: only('gen_ai.client.operation.duration'), tokens: only('gen_ai.client.token.usage') };
}

const pointOf = (data: HistogramMetricData | undefined, attributes: Attributes) =>
  data?.dataPoints.find((p) =>
    Object.entries(attributes).every(([key, value]) => p.attributes[key] === value),
  );

describe('Agent option genAiMetrics', () => {
  it('gets each model call once, with the values and attributes OpenTelemetry records', async () => {
    const sink = new FakeSink();
    const agent = new Agent({
      card: { name: 'metered' },
      llm: new ScriptedLLM(
        [
          {
            content: '',
            toolCalls: [{ id: 'c1', name: 'lookup', arguments: { word: 'x' } }],
            usage: usage(40, 9),
          },
          { content: 'done', toolCalls: [], usage: usage(55, 4) },
        ],
        { provider: 'openai', model: 'sink-model-a' },
      ),
      tools: [{ name: 'lookup', description: 'Looks up', handler: async () => ({ found: true }) }],
      genAiMetrics: sink,
    });
    const task = await agent.handleTask(createTask('go'));
    expect(task.state).toBe('completed');

    const call: GenAiCallAttributes = {
      operation: 'chat',
      provider: 'openai',
      requestModel: 'sink-model-a',
      responseModel: 'sink-model-a',
    };
    expect(sink.durations()).toHaveLength(2);
    for (const record of sink.records) expect(record.call).toEqual(call);
    expect(sink.tokens('input')).toEqual([40, 55]);
    expect(sink.tokens('output')).toEqual([9, 4]);

    const { duration, tokens } = await otelPoints('sink-model-a');
    const attributes = {
      'gen_ai.operation.name': call.operation,
      'gen_ai.provider.name': call.provider,
      'gen_ai.request.model': call.requestModel,
      'gen_ai.response.model': call.responseModel,
    };
    const otelDuration = pointOf(duration, attributes);
    expect(otelDuration?.value.count).toBe(2);
    // Each side times the same call; the sink's clock starts after the span's and stops before it.
    const sinkSeconds = sink.durations().reduce((sum, r) => sum + r.value, 0);
    expect(sinkSeconds).toBeGreaterThanOrEqual(0);
    expect(sinkSeconds).toBeLessThanOrEqual(otelDuration?.value.sum ?? -1);
    expect(pointOf(tokens, { ...attributes, 'gen_ai.token.type': 'input' })?.value.sum).toBe(95);
    expect(pointOf(tokens, { ...attributes, 'gen_ai.token.type': 'output' })?.value.sum).toBe(13);
  });

  it('records the duration but no tokens when the provider reported no usage (an estimate is no measurement)', async () => {
    const sink = new FakeSink();
    const agent = new Agent({
      card: { name: 'estimated' },
      llm: new ScriptedLLM([{ content: 'hi', toolCalls: [] }], { model: 'sink-model-b' }),
      genAiMetrics: sink,
    });
    expect((await agent.handleTask(createTask('go'))).state).toBe('completed');
    expect(sink.durations()).toHaveLength(1);
    expect(sink.records.filter((r) => r.kind === 'tokens')).toEqual([]);
    const { tokens } = await otelPoints('sink-model-b');
    expect(tokens?.dataPoints ?? []).toEqual([]);
  });

  it('records a failed call with its error type and no tokens, like OpenTelemetry', async () => {
    const sink = new FakeSink();
    const agent = new Agent({
      card: { name: 'failing' },
      llm: new ScriptedLLM(
        [
          () => {
            throw new Error('provider down');
          },
        ],
        { provider: 'openai', model: 'sink-model-c' },
      ),
      genAiMetrics: sink,
      logger: {
        error: () => undefined,
        warn: () => undefined,
        info: () => undefined,
        debug: () => undefined,
      },
    });
    expect((await agent.handleTask(createTask('go'))).state).toBe('failed');
    const [duration] = sink.durations();
    expect(sink.records).toHaveLength(1);
    expect(duration?.call.errorType).toBeDefined();
    const { duration: otel } = await otelPoints('sink-model-c');
    expect(otel?.dataPoints).toHaveLength(1);
    expect(otel?.dataPoints[0]?.attributes['error.type']).toBe(duration?.call.errorType);
  });

  it('records with tracing off too (no OpenTelemetry at all)', async () => {
    const sink = new FakeSink();
    const agent = new Agent({
      card: { name: 'untraced' },
      llm: new ScriptedLLM([{ content: 'hi', toolCalls: [], usage: usage(7, 2) }], { model: 'sink-model-d' }),
      genAiMetrics: sink,
      tracing: false,
    });
    expect((await agent.handleTask(createTask('go'))).state).toBe('completed');
    expect(sink.tokens('input')).toEqual([7]);
    expect(sink.tokens('output')).toEqual([2]);
    expect(sink.durations()).toHaveLength(1);
    const { duration } = await otelPoints('sink-model-d');
    expect(duration?.dataPoints ?? []).toEqual([]);
  });

  it('a sink that throws changes nothing: the error goes to onObserverError', async () => {
    const reported: Array<[unknown, string]> = [];
    const agent = new Agent({
      card: { name: 'broken-sink' },
      llm: new ScriptedLLM([{ content: 'still fine', toolCalls: [], usage: usage(1, 1) }]),
      genAiMetrics: {
        recordTokenUsage: () => undefined,
        recordOperationDuration: () => {
          throw new Error('registry full');
        },
      },
      onObserverError: (error, where) => reported.push([error, where]),
    });
    const task = await agent.handleTask(createTask('go'));
    expect(task.state).toBe('completed');
    expect(reported).toHaveLength(1);
    expect(reported[0]?.[1]).toBe('genAiMetrics');
  });

  it('refuses a value that is not a sink', () => {
    expect(() => new Agent({ card: { name: 'x' }, genAiMetrics: {} as unknown as GenAiMetricsSink })).toThrow(
      /genAiMetrics must be a GenAiMetricsSink/,
    );
  });
});
