import { normalizeHeaders } from '@agent/core/internal';
import { Metadata } from '@grpc/grpc-js';

/** Invocation metadata as the lowercase header map CallContext carries; binary (`-bin`) entries are left out. */
export function metadataToHeaders(metadata: Metadata): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string') headers[key] = value;
  }
  return normalizeHeaders(headers);
}

export function headersToMetadata(headers: Record<string, string>): Metadata {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(headers)) metadata.set(key.toLowerCase(), value);
  return metadata;
}
