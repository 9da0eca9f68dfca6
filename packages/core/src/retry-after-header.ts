import type { AgentError } from './errors.js';
import { isRecord } from './operations.js';
import { retryAfterMsOf } from './concurrency-limit.js';

/** The three HTTP-date forms (RFC 9110 §5.6.7) start with a day name and carry a clock time. */
const HTTP_DATE = /^[A-Za-z]{3,9},? .*\d{1,2}:\d{2}:\d{2}/;

/**
 * An HTTP `Retry-After` header in ms: delta-seconds (`120` → 120000) or an HTTP-date (the wait until
 * then; 0 once it is past). `undefined` for no header or anything else. An array (a repeated
 * header) is read by its first value.
 */
export function parseRetryAfterHeader(value: unknown, now: number = Date.now()): number | undefined {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (typeof first !== 'string') return undefined;
  const text = first.trim();
  if (/^\d+$/.test(text)) {
    const ms = Number(text) * 1000;
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  if (!HTTP_DATE.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil(date - now));
}

/**
 * Puts an HTTP `Retry-After` into `error.data.retry_after_ms` (what clients' retries read) when the
 * error does not carry one already: a proxy's or load balancer's bare 429 / 503 says it only in the
 * header. Data that is not an object (or absent) is left as it is, except absent data, which becomes
 * `{ retry_after_ms }`. Returns the same error.
 */
export function withRetryAfterHeader<E extends AgentError>(error: E, header: unknown, now?: number): E {
  if (retryAfterMsOf(error) !== undefined) return error;
  const ms = parseRetryAfterHeader(header, now);
  if (ms === undefined) return error;
  const data: unknown = error.data;
  if (data !== undefined && !isRecord(data)) return error;
  (error as { data?: unknown }).data = { ...(data ?? {}), retry_after_ms: ms };
  return error;
}
