import { randomFillSync } from 'node:crypto';

/** Random bytes for 256 ids, drawn from the CSPRNG at once (as `randomUUID` pools its own). */
const POOL = Buffer.allocUnsafeSlow(16 * 256);
let poolAt = POOL.length;
/** The 36 characters of the UUID being formatted: dashes in place, hex digits written over. */
const UUID_TEXT = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1');
/** Where each of a UUID's 16 bytes goes in its text. */
const UUID_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
/** The 32 characters of the plain hex id being formatted. */
const HEX_TEXT = Buffer.alloc(32);
const HEX_AT = Array.from({ length: 16 }, (_, byte) => byte * 2);
/** The two hex digits of each byte value, as character codes. */
const HEX = Buffer.from(
  Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0')).join(''),
  'latin1',
);

/** Where the next 16 random bytes of the pool start; with `millis`, their first 6 are that time. */
function nextBlock(millis?: number): number {
  if (poolAt === POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += 16;
  if (millis !== undefined) {
    // 48 bits of milliseconds, big-endian: past 2^32 a shift would lose the high part.
    const high = Math.floor(millis / 0x100000000);
    POOL[at] = (high >>> 8) & 0xff;
    POOL[at + 1] = high & 0xff;
    POOL.writeUInt32BE(millis >>> 0, at + 2);
  }
  return at;
}

/**
 * The 16 bytes at `at` as hex digits written at `positions` of `text`, read back as one flat
 * string: `randomUUID` joins two-character pieces, a rope of some twenty strings per id (a task
 * makes several ids).
 */
function formatted(at: number, text: Buffer, positions: readonly number[]): string {
  for (let i = 0; i < 16; i++) {
    const byte = POOL[at + i]!;
    const to = positions[i]!;
    text[to] = HEX[byte * 2]!;
    text[to + 1] = HEX[byte * 2 + 1]!;
  }
  return text.toString('latin1');
}

/** A UUID of `version` (RFC 9562 variant) from the next block, begun by `millis` when given. */
function uuid(version: number, millis?: number): string {
  const at = nextBlock(millis);
  POOL[at + 6] = (POOL[at + 6]! & 0x0f) | (version << 4);
  POOL[at + 8] = (POOL[at + 8]! & 0x3f) | 0x80;
  return formatted(at, UUID_TEXT, UUID_AT);
}

/** A new random identifier (UUID v4). */
export function newId(): string {
  return uuid(4);
}

/**
 * A new time-ordered identifier (UUID v7, RFC 9562): the Unix time in milliseconds, then 74 random
 * bits. Ids made later sort after earlier ones (to the millisecond), so a database index of them
 * grows at its end instead of at a random page: for ids a store keys or indexes many rows by.
 */
export function newTimeOrderedId(): string {
  return uuid(7, Date.now());
}

/**
 * 32 lowercase hex digits: the Unix time in milliseconds (6 bytes), then 10 random bytes, from the
 * same pool as the UUIDs. Never all zeros (the time is not zero).
 */
export function timeOrderedHex(): string {
  return formatted(nextBlock(Date.now()), HEX_TEXT, HEX_AT);
}

/** `000Z` … `999Z`: the end of an ISO timestamp, for each millisecond of a second. */
const MILLISECOND_ENDS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z`);

/** The largest time a Date holds, either side of 1970 (100,000,000 days). */
const MAX_DATE_MS = 8.64e15;

let lastMs = Number.NaN;
let lastIso = '';
/** The second `secondPrefix` is of: its first millisecond. */
let secondStart = Number.NaN;
/** The ISO text of that second up to its milliseconds: `2026-11-28T12:34:56.`. */
let secondPrefix = '';

/**
 * `new Date(ms).toISOString()`, formatted by V8 once per second. V8 formats a date through printf
 * (~1.4 µs a call, ~5,000 instructions); the milliseconds of the same second are the cached prefix
 * and one of a thousand endings. The last millisecond's text is kept too: a task stamps several
 * records within one.
 */
export function isoOfMs(ms: number): string {
  if (ms === lastMs) return lastIso;
  // A fraction, NaN or a time out of Date's range gets Date's own rules (and its RangeError): the
  // millisecond after the last valid one would otherwise end that cached second.
  if (!Number.isSafeInteger(ms) || ms > MAX_DATE_MS || ms < -MAX_DATE_MS) return new Date(ms).toISOString();
  const millisecond = ((ms % 1000) + 1000) % 1000;
  const start = ms - millisecond;
  let iso: string;
  if (start === secondStart) iso = secondPrefix + MILLISECOND_ENDS[millisecond]!;
  else {
    iso = new Date(ms).toISOString();
    secondStart = start;
    secondPrefix = iso.slice(0, -4);
  }
  lastMs = ms;
  lastIso = iso;
  return iso;
}

/** The current time as a UTC ISO 8601 string. */
export function nowIso(): string {
  return isoOfMs(Date.now());
}

const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1–12) of `year`, Gregorian leap years counted. */
export function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/**
 * Strict ISO 8601 parsing with Python `datetime.fromisoformat` semantics, on which the expiry rules
 * of `@agent/auth`'s `SecurityContext.isExpired()` are built: `undefined` when the text is not a
 * real timestamp (Feb 30, hour 25, trailing junk; `Date.parse` would roll those over), `null` when
 * it is valid but carries no zone.
 */
export function parseIsoTimestamp(value: string): Date | null | undefined {
  const match = ISO_TIMESTAMP.exec(value.trim());
  if (!match) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (digits.length !== 2 && digits.length !== 4) return undefined;
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  if (zone === undefined) return null;
  const millis = Math.floor(Number(`0.${fraction || '0'}`) * 1000);
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return new Date(date.getTime() - offsetMinutes * 60_000);
}
