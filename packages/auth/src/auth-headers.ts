import { ValueError, type SecurityContextLike } from '@agent/core';
import { HTTP_SCHEME_NAMES, type SecurityScheme } from './security-scheme.js';

// RFC 9110 field-value characters: visible ASCII, space, tab and obs-text. CR/LF would split headers.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Outgoing headers for an authenticated client (client-side lazy authentication, see the README's
 * "Client headers"):
 * bearer → `Authorization: Bearer <token>`; basic → `Authorization: Basic <token>` (token unchanged);
 * apiKey → `X-API-Key: <token>` and `Authorization: ApiKey <token>`; the other HTTP schemes →
 * `Authorization: <Scheme> <token>`; oauth2, openIdConnect and mutualTLS → `Authorization: Bearer <token>`.
 * @throws ValueError when the token could not travel in a header (CR, LF or other control characters).
 */
export function buildAuthHeaders(
  scheme: SecurityScheme,
  context: SecurityContextLike,
): Record<string, string> {
  const token = context.token;
  if (typeof token !== 'string' || !HEADER_VALUE.test(token)) {
    throw new ValueError('The security context token cannot be sent in an HTTP header');
  }
  if (scheme.authType === 'apiKey') return { 'X-API-Key': token, Authorization: `ApiKey ${token}` };
  if (scheme.authType === 'http' && scheme.authScheme !== null) {
    return { Authorization: `${HTTP_SCHEME_NAMES[scheme.authScheme]} ${token}` };
  }
  return { Authorization: `Bearer ${token}` };
}

/** The same headers as lowercase names, for gRPC metadata and HTTP/2. */
export function buildAuthMetadata(
  scheme: SecurityScheme,
  context: SecurityContextLike,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(buildAuthHeaders(scheme, context)).map(([key, value]) => [key.toLowerCase(), value]),
  );
}
