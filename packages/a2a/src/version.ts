/**
 * A2A-Version negotiation. This server speaks A2A 1.0 only. The version travels as the `A2A-Version`
 * header or the `?A2A-Version=` query parameter, Major.Minor only.
 *
 * The spec reads a missing version as 0.3; this server accepts a request without one when its method
 * is a 1.0 method (the two method grammars are disjoint: PascalCase vs `ns/verb`), so a 1.0 client
 * that forgets the header still works. A 0.3 method name is refused with VERSION_NOT_SUPPORTED whatever
 * the header says, and so is any version other than 1.0.
 */
import type { IncomingMessage } from 'node:http';
import type { AgentError } from '@agent/core';
import { a2aError } from './a2a-errors.js';
import { A2A_PROTOCOL_VERSION } from './protojson.js';

export const A2A_VERSION_HEADER = 'a2a-version';
export const A2A_VERSION_QUERY = 'A2A-Version';

/** The JSON-RPC method names of A2A 0.3 (`message/send`, `tasks/get`, ...). */
export function isLegacyMethod(method: string): boolean {
  return method.includes('/');
}

/** The version a request names (header first, then query), trimmed; undefined when it names none. */
export function requestedVersion(
  headers: IncomingMessage['headers'],
  query?: URLSearchParams,
): string | undefined {
  const header = headers[A2A_VERSION_HEADER];
  const value = Array.isArray(header) ? header[0] : header;
  const named = value ?? query?.get(A2A_VERSION_QUERY) ?? undefined;
  const trimmed = named?.trim();
  return trimmed === '' ? undefined : trimmed;
}

/**
 * The refusal for a request's version, or undefined when it is served. `method`: the JSON-RPC method
 * (absent on HTTP+JSON, whose paths exist only in 1.0).
 */
export function checkVersion(version: string | undefined, method?: string): AgentError | undefined {
  if (method !== undefined && isLegacyMethod(method)) {
    return a2aError(
      'VERSION_NOT_SUPPORTED',
      `A2A 0.3 is not served (method ${method.slice(0, 60)}); use the A2A ${A2A_PROTOCOL_VERSION} method names`,
      { supported: A2A_PROTOCOL_VERSION },
    );
  }
  if (version === undefined || version === A2A_PROTOCOL_VERSION) return undefined;
  return a2aError(
    'VERSION_NOT_SUPPORTED',
    `A2A version ${JSON.stringify(version).slice(0, 40)} is not supported; this server speaks ${A2A_PROTOCOL_VERSION}`,
    { supported: A2A_PROTOCOL_VERSION },
  );
}
