import { fullFormats } from 'ajv-formats/dist/formats';
import { daysInMonth } from './ids.js';

type FormatDefinition = {
  validate: (text: string) => boolean;
  compare: (a: string, b: string) => number | undefined;
};

/** ajv-formats' full RFC 3339 `date-time` check: what every shape but the common one goes through. */
const full = fullFormats['date-time'] as FormatDefinition;

/** The number written by `length` digits at `from`, or -1 when one of them is not a digit. */
function digits(text: string, from: number, length: number): number {
  let value = 0;
  for (let i = from; i < from + length; i++) {
    const code = text.charCodeAt(i) - 48;
    if (code < 0 || code > 9) return -1;
    value = value * 10 + code;
  }
  return value;
}

/**
 * True for an RFC 3339 date-time, exactly as ajv-formats' full mode decides. The shape every
 * timestamp here has (`YYYY-MM-DDTHH:MM:SS[.fff]Z`, what `toISOString` writes) is checked by its
 * characters, where ajv-formats splits the text and runs two capturing regular expressions (two
 * arrays and their strings per timestamp, several timestamps per task); any other shape (an
 * offset, a lowercase `t`, a space) goes to ajv-formats itself.
 */
export function isDateTime(text: string): boolean {
  const n = text.length;
  if (
    n < 20 ||
    text.charCodeAt(n - 1) !== 90 || // Z
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 || // T
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58
  )
    return full.validate(text);
  if (n > 20 && (text.charCodeAt(19) !== 46 || n === 21 || digits(text, 20, n - 21) < 0))
    return full.validate(text);
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return full.validate(text);
  if (month < 1 || month > 12 || day < 1) return false;
  if (day > daysInMonth(year, month)) return false;
  if (hour <= 23 && minute <= 59 && second <= 59) return true;
  // A leap second: 60 seconds, only in the last minute of a UTC day.
  return second === 60 && hour === 23 && minute === 59;
}

/** The `date-time` format, checked by {@link isDateTime} and ordered as ajv-formats orders it. */
export const DATE_TIME_FORMAT: FormatDefinition = { validate: isDateTime, compare: full.compare };
