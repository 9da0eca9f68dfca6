import { ValueError } from './errors.js';

export interface NumberRule {
  /** Smallest accepted value (inclusive). Default 0. */
  min?: number;
  /** Accept only values strictly greater than `min`. Default false. */
  exclusive?: boolean;
  /** Accept only whole numbers. Default false. */
  integer?: boolean;
}

function describe(rule: NumberRule): string {
  const min = rule.min ?? 0;
  const kind = rule.integer ? 'integer' : 'finite number';
  if (rule.exclusive)
    return min === 0 ? `a positive ${kind}` : `${rule.integer ? 'an' : 'a'} ${kind} > ${min}`;
  if (min === 0) return `a non-negative ${kind}`;
  if (min === 1 && rule.integer) return 'a positive integer';
  return `${rule.integer ? 'an' : 'a'} ${kind} >= ${min}`;
}

/**
 * Reads a numeric option: `fallback` when it is undefined, else the value when it satisfies `rule`
 * (finite, at or above `min`, whole when `integer`). Anything else is a ValueError naming the option.
 */
export function numberOption(
  name: string,
  value: number | undefined,
  fallback: number,
  rule: NumberRule = {},
): number {
  if (value === undefined) return fallback;
  const min = rule.min ?? 0;
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (rule.exclusive ? value > min : value >= min) &&
    (!rule.integer || Number.isInteger(value));
  if (!ok) throw new ValueError(`${name} must be ${describe(rule)}, got ${String(value)}`);
  return value;
}
