/**
 * The pipeline's admission limits as options: `maxConcurrentTasks` (a number, or a
 * `ConcurrencyLimit` several transports share) and `rateLimit` (`{ perSecond, burst? }`, or a
 * `RateLimiter` several transports share).
 */
import { ConcurrencyLimit, ValueError } from '@agent/core';
import { RateLimiter, type RateLimitOptions } from './rate-limit.js';

/** The name the overload error gives this limit (`data.limit`). */
export const TASKS_LIMIT_NAME = 'tasks';

/** Reads `maxConcurrentTasks`: `undefined` (no limit), a whole number from 1, or a shared ConcurrencyLimit. */
export function concurrencyLimitOption(value: unknown): ConcurrencyLimit | undefined {
  if (value === undefined) return undefined;
  if (value instanceof ConcurrencyLimit) return value;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new ValueError(
      `maxConcurrentTasks must be a whole number from 1 or a ConcurrencyLimit, got ${String(value)}`,
      { data: { option: 'maxConcurrentTasks' } },
    );
  }
  return new ConcurrencyLimit(value, { name: TASKS_LIMIT_NAME });
}

/** Reads `rateLimit`: `undefined` (no limit), `{ perSecond, burst? }`, or a shared RateLimiter. */
export function rateLimiterOption(value: unknown): RateLimiter | undefined {
  if (value === undefined) return undefined;
  if (value instanceof RateLimiter) return value;
  return new RateLimiter(value as RateLimitOptions);
}
