import { normalizeHeaders, outgoingTraceHeaders, type TraceOptions } from '@agent/core/internal';
import { Metadata } from '@grpc/grpc-js';

/** Invocation metadata as the lowercase header map CallContext carries; binary (`-bin`) entries are left out. */
export function metadataToHeaders(metadata: Metadata): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string') headers[key] = value;
  }
  return normalizeHeaders(headers);
}

/**
 * A call's metadata: `headers` (credentials, tenant), then the trace context as `traceparent` and
 * `tracestate` keys (the call's own, else the active OpenTelemetry span's), which the server side
 * reads back into the handler's headers like any other key.
 */
export function headersToMetadata(headers: Record<string, string>, trace?: TraceOptions): Metadata {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(headers)) metadata.set(key.toLowerCase(), value);
  const context = outgoingTraceHeaders(trace);
  if (context) {
    metadata.set('traceparent', context.traceparent);
    if (context.tracestate !== undefined) metadata.set('tracestate', context.tracestate);
  }
  return metadata;
}
