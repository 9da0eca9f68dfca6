/**
 * The OpenTelemetry side of the pipeline's metrics: `@opentelemetry/api` is an optional peer, read
 * only when metrics are created, and used only when the application registered a meter provider.
 */
import { createRequire } from 'node:module';

export type MetricAttributes = Record<string, string>;

/** The part of an OpenTelemetry `Meter` the pipeline's metrics use. */
export interface MeterLike {
  createCounter(
    name: string,
    options?: InstrumentOptions,
  ): { add(value: number, attributes?: MetricAttributes): void };
  createUpDownCounter(
    name: string,
    options?: InstrumentOptions,
  ): { add(value: number, attributes?: MetricAttributes): void };
  createHistogram(
    name: string,
    options?: InstrumentOptions,
  ): { record(value: number, attributes?: MetricAttributes): void };
  createObservableGauge(
    name: string,
    options?: InstrumentOptions,
  ): {
    addCallback(
      callback: (result: { observe(value: number, attributes?: MetricAttributes): void }) => void,
    ): void;
  };
}

export interface InstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

interface OtelMetricsApi {
  metrics: { getMeter(name: string, version?: string): MeterLike };
  createNoopMeter(): MeterLike;
}

const load = createRequire(__filename);

/**
 * The meter of the globally registered provider, or `undefined` when `@opentelemetry/api` is not
 * installed or no provider is registered (its no-op meter is not worth a single call per request).
 */
export function registeredMeter(name: string, version?: string): MeterLike | undefined {
  let api: OtelMetricsApi;
  try {
    api = load('@opentelemetry/api') as OtelMetricsApi;
  } catch {
    // Not installed (or not loadable): metrics stay in the in-process registry only.
    return undefined;
  }
  const meter = api.metrics.getMeter(name, version);
  return meter === api.createNoopMeter() ? undefined : meter;
}
