/**
 * W3C Trace Context (`traceparent` / `tracestate`), as every transport carries it: one trace spans a
 * client, the agent it calls and the agents that one delegates to.
 */

/** A parsed `traceparent`: version 00, lowercase hex ids, the sampled flag. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** The caller's span: 16 lowercase hex digits, not all zero. */
  spanId: string;
  /** The trace-flags byte (bit 0: sampled). */
  flags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * Reads a `traceparent` header value; `undefined` for anything invalid (which the W3C rules say to
 * ignore, starting a new trace). A future version's extra fields are accepted, version `ff` is not.
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string' || value.length > 512) return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  if (version === '00' && rest !== undefined) return undefined;
  return { traceId, spanId, flags: parseInt(flags, 16) };
}

/** The `traceparent` header value for a span of a trace (version 00). */
export function formatTraceparent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${(parent.flags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The trace id a request carries in its `traceparent` header (headers as the pipeline normalizes
 * them: lowercase names), or `undefined`.
 */
export function traceIdOf(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): string | undefined {
  const raw = headers.traceparent;
  return parseTraceparent(Array.isArray(raw) ? raw[0] : raw)?.traceId;
}
