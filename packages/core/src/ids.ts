import { randomUUID } from 'node:crypto';

/** A new random identifier (UUID v4). */
export function newId(): string {
  return randomUUID();
}

/** The current time as a UTC ISO 8601 string. */
export function nowIso(): string {
  return new Date().toISOString();
}

const OFFSET_SUFFIX = /(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Parses an ISO 8601 timestamp that must carry a zone designator.
 * Returns `undefined` for an unparsable string and `null` for a timezone-naive one,
 * so that callers can raise the error their contract names.
 */
export function parseIsoTimestamp(value: string): Date | null | undefined {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) return undefined;
  if (!value.includes('T') || !OFFSET_SUFFIX.test(value.trim())) return null;
  return new Date(ms);
}
