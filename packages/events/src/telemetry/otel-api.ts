/**
 * The part of `@opentelemetry/api` the task tracing uses, loaded once on first use. Unlike the
 * bridge, which exists only to talk to OpenTelemetry and so fails without it, tracing is something
 * every run does: without the package it quietly does nothing.
 */
import { createRequire } from 'node:module';
import type { SpanAttributes, SpanAttributeValue } from './span-data.js';

export interface OtelSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: OtelTraceState;
}

export interface OtelTraceState {
  serialize(): string;
}

export interface OtelSpan {
  spanContext(): OtelSpanContext;
  isRecording(): boolean;
  setAttribute(key: string, value: SpanAttributeValue): unknown;
  setAttributes(attributes: SpanAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(endTime?: Date): void;
}

export interface OtelTracer {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: SpanAttributes },
    context?: unknown,
  ): OtelSpan;
}

export interface OtelHistogram {
  record(value: number, attributes?: SpanAttributes): void;
}

export interface OtelMeter {
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): OtelHistogram;
}

export interface OtelApi {
  trace: {
    getTracer(name: string, version?: string): OtelTracer;
    getSpanContext(context: unknown): OtelSpanContext | undefined;
    setSpan(context: unknown, span: OtelSpan): unknown;
    setSpanContext(context: unknown, spanContext: OtelSpanContext): unknown;
    isSpanContextValid(spanContext: OtelSpanContext): boolean;
  };
  context: {
    active(): unknown;
    with<T>(context: unknown, fn: () => T): T;
  };
  metrics: {
    getMeterProvider(): object;
    getMeter(name: string, version?: string): OtelMeter;
  };
  createTraceState(raw?: string): OtelTraceState;
  ROOT_CONTEXT: unknown;
  SpanKind: { INTERNAL: number; SERVER: number; CLIENT: number };
  SpanStatusCode: { UNSET: number; OK: number; ERROR: number };
}

// `undefined`: not looked for yet; `null`: not installed (looked for once, never again).
let api: OtelApi | null | undefined;

/** `@opentelemetry/api` when it is installed, else `null`. */
export function otelApi(): OtelApi | null {
  if (api === undefined) {
    try {
      api = createRequire(__filename)('@opentelemetry/api') as OtelApi;
    } catch {
      api = null;
    }
  }
  return api;
}
