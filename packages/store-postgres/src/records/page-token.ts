/**
 * Opaque keyset page tokens: the last row's sort key plus a fingerprint of the query that produced
 * it. The same format as the other backends of `@agent/events` (which publishes no internal entry
 * point to share it from), so a token means the same thing whichever store made it.
 */
import { createHash } from 'node:crypto';
import { ValueError } from '@agent/core';

/** The token format; a token of another format is refused like a forged one. */
const TOKEN_VERSION = 1;

/**
 * A short hash of what a token is bound to (owner or tenant, filters). The values themselves stay
 * out of the token, and a token replayed with other ones no longer matches.
 */
export function queryFingerprint(parts: readonly (string | null)[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
}

function badToken(): ValueError {
  return new ValueError('pageToken is not a token of this query', { data: { field: 'pageToken' } });
}

/** The token of the page after the row whose sort key is `key` (base64url JSON). */
export function encodePageToken(fingerprint: string, key: readonly string[]): string {
  return Buffer.from(JSON.stringify([TOKEN_VERSION, fingerprint, ...key]), 'utf8').toString('base64url');
}

/**
 * The sort key in `token`, which must be bound to `fingerprint` and hold `length` non-empty strings.
 * @throws ValueError for a malformed token or one of another query.
 */
export function decodePageToken(token: string, fingerprint: string, length: number): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badToken();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== length + 2 ||
    parsed[0] !== TOKEN_VERSION ||
    parsed[1] !== fingerprint
  )
    throw badToken();
  const key = parsed.slice(2) as unknown[];
  if (!key.every((part): part is string => typeof part === 'string' && part !== '')) throw badToken();
  return key;
}
