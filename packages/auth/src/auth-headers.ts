import type { SecurityContextLike } from '@agent/core';
import type { SecurityScheme } from './security-scheme.js';

/**
 * Outgoing headers for an authenticated client (SPEC.md "Client-side lazy authentication"):
 * Bearer → `Authorization: Bearer <token>`; Basic → `Authorization: Basic <token>` (token unchanged);
 * apiKey → `X-API-Key` and `Authorization: ApiKey`. Other schemes send the token as a Bearer token.
 */
export function buildAuthHeaders(scheme: SecurityScheme, context: SecurityContextLike): Record<string, string> {
  const token = context.token;
  if (scheme.authType === 'apiKey') return { 'X-API-Key': token, Authorization: `ApiKey ${token}` };
  if (scheme.authType === 'http' && scheme.authScheme === 'basic') return { Authorization: `Basic ${token}` };
  return { Authorization: `Bearer ${token}` };
}

/** The same headers as lowercase names, for gRPC metadata and HTTP/2. */
export function buildAuthMetadata(scheme: SecurityScheme, context: SecurityContextLike): Record<string, string> {
  return Object.fromEntries(Object.entries(buildAuthHeaders(scheme, context)).map(([key, value]) => [key.toLowerCase(), value]));
}
