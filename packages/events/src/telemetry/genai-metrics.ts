/**
 * The GenAI client metrics of the OpenTelemetry semantic conventions (gen-ai-metrics):
 * `gen_ai.client.operation.duration` and `gen_ai.client.token.usage`, recorded per model call
 * through the global MeterProvider.
 */
import type { OtelApi, OtelHistogram } from './otel-api.js';
import { ATTR } from './span-data.js';
import type { SpanAttributes } from './span-data.js';

/** The bucket boundaries the conventions advise. */
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

export interface GenAiInstruments {
  duration: OtelHistogram;
  tokens: OtelHistogram;
}

// Per MeterProvider: the metrics API has no proxy, so instruments made before an SDK registered its
// provider stay no-ops forever; a provider registered later gets instruments of its own.
const byProvider = new WeakMap<object, GenAiInstruments>();

export function genAiInstruments(api: OtelApi, meterName: string): GenAiInstruments {
  const provider = api.metrics.getMeterProvider();
  let instruments = byProvider.get(provider);
  if (!instruments) {
    const meter = api.metrics.getMeter(meterName);
    instruments = {
      duration: meter.createHistogram('gen_ai.client.operation.duration', {
        description: 'GenAI operation duration',
        unit: 's',
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }),
      tokens: meter.createHistogram('gen_ai.client.token.usage', {
        description: 'Number of input and output tokens used',
        unit: '{token}',
        advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
      }),
    };
    byProvider.set(provider, instruments);
  }
  return instruments;
}

/** One finished model call, as the metrics record it. */
export interface ModelCallMeasure {
  attributes: SpanAttributes;
  seconds: number;
  /** Provider-reported counts only: an estimate is not a measurement. */
  inputTokens?: number;
  outputTokens?: number;
}

export function recordModelCall(instruments: GenAiInstruments, measure: ModelCallMeasure): void {
  const { attributes } = measure;
  instruments.duration.record(measure.seconds, attributes);
  if (measure.inputTokens !== undefined)
    instruments.tokens.record(measure.inputTokens, { ...attributes, [ATTR.tokenType]: 'input' });
  if (measure.outputTokens !== undefined)
    instruments.tokens.record(measure.outputTokens, { ...attributes, [ATTR.tokenType]: 'output' });
}
