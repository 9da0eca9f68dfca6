/**
 * Re-emits LocalTraceTelemetry spans through `@opentelemetry/api` (optional peer, loaded when the
 * bridge is built), so any OTel SDK or exporter the application registered receives them.
 */
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { requireOptionalPeer } from '../optional-peer.js';
import type { SpanAttributes, SpanData, SpanListener } from './span-data.js';
import { isTracedRun } from './traced-runs.js';

/** The part of an OpenTelemetry `Span` the bridge uses. */
export interface OtelSpanLike {
  setAttributes(attributes: SpanAttributes): unknown;
  addEvent(name: string, attributes?: SpanAttributes, time?: Date): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(endTime?: Date): void;
}

/** The part of an OpenTelemetry `Tracer` the bridge uses. */
export interface OtelTracerLike {
  startSpan(
    name: string,
    options?: { kind?: number; startTime?: Date; attributes?: SpanAttributes },
    context?: unknown,
  ): OtelSpanLike;
}

export interface OpenTelemetryBridgeOptions {
  /** The tracer to emit through. Default: `trace.getTracer(tracerName)` from the global provider. */
  tracer?: OtelTracerLike;
  /** Default `"@agent/events"`. */
  tracerName?: string;
  /** Most spans kept open waiting for their end. Default `10000`; the oldest is ended first. */
  maxOpenSpans?: number;
}

const OPTION_NAMES = optionNames<OpenTelemetryBridgeOptions>({
  tracer: true,
  tracerName: true,
  maxOpenSpans: true,
});

interface OtelApi {
  trace: {
    getTracer(name: string, version?: string): OtelTracerLike;
    setSpan(context: unknown, span: OtelSpanLike): unknown;
  };
  ROOT_CONTEXT: unknown;
  SpanKind: { INTERNAL: number; CLIENT: number };
  SpanStatusCode: { UNSET: number; OK: number; ERROR: number };
}

/** A SpanListener for `new LocalTraceTelemetry({ listeners: [bridge] })`. */
export class OpenTelemetryBridge implements SpanListener {
  readonly #api: OtelApi;
  readonly #tracer: OtelTracerLike;
  readonly #open = new Map<string, OtelSpanLike>();
  readonly #max: number;

  /** @throws UnavailableError when `@opentelemetry/api` is not installed. */
  constructor(options: OpenTelemetryBridgeOptions = {}) {
    checkOptionNames('OpenTelemetryBridge', options, OPTION_NAMES);
    this.#api = requireOptionalPeer<OtelApi>('@opentelemetry/api', 'OpenTelemetryBridge', '^1.9.0');
    this.#tracer = options.tracer ?? this.#api.trace.getTracer(options.tracerName ?? '@agent/events');
    this.#max = options.maxOpenSpans ?? 10_000;
  }

  onStart(span: SpanData): void {
    // An Agent in this process exports this run's spans itself, live (see TaskTracing).
    if (isTracedRun(span.run_id)) return;
    this.#startSpan(span);
  }

  onEnd(span: SpanData): void {
    if (isTracedRun(span.run_id) && !this.#open.has(span.span_id)) return;
    const otel = this.#open.get(span.span_id) ?? this.#startSpan(span);
    this.#open.delete(span.span_id);
    otel.setAttributes(span.attributes);
    for (const event of span.events) otel.addEvent(event.name, event.attributes, new Date(event.time));
    const { SpanStatusCode } = this.#api;
    if (span.status === 'error')
      otel.setStatus({
        code: SpanStatusCode.ERROR,
        ...(span.status_message ? { message: span.status_message } : {}),
      });
    else if (span.status === 'ok') otel.setStatus({ code: SpanStatusCode.OK });
    otel.end(span.end_time === null ? undefined : new Date(span.end_time));
  }

  #startSpan(span: SpanData): OtelSpanLike {
    const existing = this.#open.get(span.span_id);
    if (existing) return existing;
    const parent = span.parent_span_id === null ? undefined : this.#open.get(span.parent_span_id);
    const context =
      parent === undefined ? this.#api.ROOT_CONTEXT : this.#api.trace.setSpan(this.#api.ROOT_CONTEXT, parent);
    const kind = span.kind === 'client' ? this.#api.SpanKind.CLIENT : this.#api.SpanKind.INTERNAL;
    const otel = this.#tracer.startSpan(
      span.name,
      { kind, startTime: new Date(span.start_time), attributes: span.attributes },
      context,
    );
    this.#open.set(span.span_id, otel);
    if (this.#open.size > this.#max) {
      // Never grow without bound when ends go missing: end the oldest as it is.
      const [oldestId, oldest] = this.#open.entries().next().value as [string, OtelSpanLike];
      this.#open.delete(oldestId);
      oldest.end();
    }
    return otel;
  }

  /** Spans started and not yet ended. */
  get openSpanCount(): number {
    return this.#open.size;
  }
}
