/**
 * The trace context an outgoing call carries: what every transport client writes as `traceparent`
 * (and `tracestate`) on its wire, so one trace spans a client, the agent it calls and the agents
 * that one delegates to.
 */
import { createRequire } from 'node:module';
import { formatTraceparent, parseTraceparent } from './trace-context.js';

/** The headers of an outgoing call's trace context (lowercase names, as on every wire). */
export interface TraceHeaders {
  traceparent: string;
  tracestate?: string;
}

/** What a call may say about its trace (the `SendOptions` fields). */
export interface TraceOptions {
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

/** The part of `@opentelemetry/api` read here. */
interface OtelPropagationApi {
  context: { active(): unknown };
  trace: {
    getSpanContext(
      context: unknown,
    ):
      | { traceId: string; spanId: string; traceFlags: number; traceState?: { serialize(): string } }
      | undefined;
  };
}

// `undefined`: not looked for yet; `null`: not installed (looked for once, never again).
let otel: OtelPropagationApi | null | undefined;

function otelApi(): OtelPropagationApi | null {
  if (otel === undefined) {
    try {
      otel = createRequire(__filename)('@opentelemetry/api') as OtelPropagationApi;
    } catch {
      otel = null;
    }
  }
  return otel;
}

/**
 * The trace headers for one outgoing call, or `undefined` when there is no trace to continue:
 * the call's own valid `traceparent` first (a caller that names its span means it), else the span
 * active in OpenTelemetry's context when `@opentelemetry/api` is installed. Nothing is allocated
 * when neither is there.
 */
export function outgoingTraceHeaders(options?: TraceOptions): TraceHeaders | undefined {
  const explicit = options?.traceparent;
  if (explicit !== undefined && parseTraceparent(explicit) !== undefined) {
    const state = options?.tracestate;
    return state ? { traceparent: explicit.trim(), tracestate: state } : { traceparent: explicit.trim() };
  }
  const api = otelApi();
  if (api === null) return undefined;
  const span = api.trace.getSpanContext(api.context.active());
  if (span === undefined) return undefined;
  // Checked with the same rules as an incoming header: a no-op or invalid span context sends nothing.
  const parent = parseTraceparent(`00-${span.traceId}-${span.spanId}-00`);
  if (parent === undefined) return undefined;
  const traceparent = formatTraceparent({ ...parent, flags: span.traceFlags });
  const state = span.traceState?.serialize();
  return state ? { traceparent, tracestate: state } : { traceparent };
}

/** `headers` with the call's trace headers added (the same object when there are none). */
export function withTraceHeaders(
  headers: Record<string, string>,
  options?: TraceOptions,
): Record<string, string> {
  const trace = outgoingTraceHeaders(options);
  return trace === undefined ? headers : { ...headers, ...trace };
}
