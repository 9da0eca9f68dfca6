import { type JsonObject } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { base64UrlDecode, decodeUtf8 } from './base64url.js';

export interface CompactJwt {
  header: JsonObject;
  payload: JsonObject;
}

/**
 * Splits and decodes a compact JWS strictly, before any library sees it. Returns the failure
 * reason as a string (never containing token text) so the caller can prefix it.
 */
export function decodeCompactJwt(token: string): CompactJwt | string {
  const segments = token.split('.');
  if (segments.length !== 3) return `malformed token: expected 3 segments, got ${segments.length}`;
  const [headerSegment, payloadSegment, signatureSegment] = segments as [string, string, string];
  if (signatureSegment === '') return 'missing signature';
  if (base64UrlDecode(signatureSegment) === undefined) return 'malformed token: signature is not base64url';
  const header = decodeJsonSegment(headerSegment, 'header');
  if (typeof header === 'string') return header;
  const payload = decodeJsonSegment(payloadSegment, 'payload');
  if (typeof payload === 'string') return payload;
  return { header, payload };
}

function decodeJsonSegment(segment: string, name: string): JsonObject | string {
  const bytes = base64UrlDecode(segment);
  if (bytes === undefined || bytes.length === 0) return `malformed token: ${name} is not base64url`;
  const text = decodeUtf8(bytes);
  if (text === undefined) return `malformed token: ${name} is not UTF-8`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `malformed token: ${name} is not JSON`;
  }
  if (!isRecord(value)) return `malformed token: ${name} is not a JSON object`;
  return value as JsonObject;
}
