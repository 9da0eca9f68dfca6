/**
 * Bounds on the shape of a JSON request, checked on its text before it is parsed: nothing that
 * walks, validates or copies a value afterwards can then meet nesting deep enough to exhaust the
 * stack, or an array long enough to stall the event loop. One scan, no allocation; string contents
 * are skipped with `indexOf`, so a large text part costs little more than its copy.
 */
import { InvalidRequestError } from './errors.js';

export interface JsonLimits {
  /** Most nested objects and arrays, the outermost one included. */
  maxDepth: number;
  /** Most elements of one array. */
  maxArrayLength: number;
}

export const DEFAULT_JSON_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxDepth: 64,
  maxArrayLength: 10_000,
});

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * The first limit `text` passes, as the INVALID_REQUEST to answer (its message names the limit),
 * or undefined. Malformed text is not judged here: the parser that follows reports it.
 */
export function jsonLimitError(
  text: string,
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): InvalidRequestError | undefined {
  const { maxDepth, maxArrayLength } = limits;
  // Per open container: -1 for an object, else the elements of an array counted so far.
  const counts: number[] = [];
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i);
      if (i < 0) return undefined;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (counts.length >= maxDepth) return limitError('nesting depth', maxDepth, 'max_depth');
      const top = counts.length - 1;
      if (top >= 0 && counts[top] === 0) counts[top] = 1;
      counts.push(c === OPEN_BRACE ? -1 : 0);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      counts.pop();
    } else if (c === COMMA) {
      const top = counts.length - 1;
      if (top >= 0 && counts[top]! >= 0 && ++counts[top]! > maxArrayLength) {
        return limitError('array length', maxArrayLength, 'max_array_length');
      }
    } else if (c > 0x20) {
      // A scalar element starts an array's first element.
      const top = counts.length - 1;
      if (top >= 0 && counts[top] === 0) counts[top] = 1;
    }
  }
  return undefined;
}

/** The index of the quote that closes the string opened at `start`, or -1 when it never closes. */
function endOfString(text: string, start: number): number {
  let i = start;
  for (;;) {
    i = text.indexOf('"', i + 1);
    if (i < 0) return -1;
    // Escaped when preceded by an odd number of backslashes.
    let slashes = 0;
    for (let j = i - 1; text.charCodeAt(j) === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return i;
  }
}

function limitError(what: string, limit: number, key: string): InvalidRequestError {
  return new InvalidRequestError(`Invalid request: JSON ${what} exceeds ${limit}`, {
    data: { [key]: limit },
  });
}
