import { ResourceExhaustedError, ValueError } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';

export interface RateLimitOptions {
  /** Tokens each principal gets back per second (a sustained rate of calls). */
  perSecond: number;
  /** Most tokens a principal can save up: the calls it may make at once after a quiet spell. Default: `perSecond` rounded up. */
  burst?: number;
  /**
   * Most principals whose buckets are kept; the least recently seen goes first past it. Default
   * 100,000, so callers with ever new names cannot grow the server's memory.
   */
  maxPrincipals?: number;
  /** The clock, in ms (tests). Default `performance.now`. */
  now?: () => number;
}

const OPTION_NAMES = optionNames<RateLimitOptions>({
  perSecond: true,
  burst: true,
  maxPrincipals: true,
  now: true,
});

const DEFAULT_MAX_PRINCIPALS = 100_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per principal: `burst` calls at once, then `perSecond` on average. A call without
 * a token is refused at once with RESOURCE_EXHAUSTED (429) whose `data.retry_after_ms` is when the
 * next token comes; nothing waits in a queue. One instance shared by several transports limits a
 * principal across all of them.
 */
export class RateLimiter {
  readonly perSecond: number;
  readonly burst: number;
  private readonly maxPrincipals: number;
  private readonly now: () => number;
  // Insertion order is recency order: a bucket is re-inserted whenever it is used.
  private readonly buckets = new Map<string, Bucket>();

  constructor(options: RateLimitOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ValueError('rateLimit needs an object { perSecond, burst? }', {
        data: { option: 'rateLimit' },
      });
    }
    checkOptionNames('rateLimit', options, OPTION_NAMES);
    const { perSecond } = options;
    if (typeof perSecond !== 'number' || !Number.isFinite(perSecond) || perSecond <= 0) {
      throw rateLimitError(`perSecond must be a number above 0, got ${String(perSecond)}`);
    }
    const burst = options.burst ?? Math.ceil(perSecond);
    if (!Number.isSafeInteger(burst) || burst < 1) {
      throw rateLimitError(`burst must be a whole number from 1, got ${String(burst)}`);
    }
    const maxPrincipals = options.maxPrincipals ?? DEFAULT_MAX_PRINCIPALS;
    if (!Number.isSafeInteger(maxPrincipals) || maxPrincipals < 1) {
      throw rateLimitError(`maxPrincipals must be a whole number from 1, got ${String(maxPrincipals)}`);
    }
    this.perSecond = perSecond;
    this.burst = burst;
    this.maxPrincipals = maxPrincipals;
    this.now = options.now ?? (() => performance.now());
  }

  /** Principals with a bucket now. */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes one token of `key`'s: 0 when there was one, else the ms until the next one comes. */
  take(key: string): number {
    const now = this.now();
    const found = this.buckets.get(key);
    let bucket: Bucket;
    if (found) {
      this.buckets.delete(key);
      const refilled = found.tokens + ((now - found.at) / 1000) * this.perSecond;
      bucket = { tokens: Math.min(this.burst, refilled), at: now };
    } else {
      bucket = { tokens: this.burst, at: now };
      if (this.buckets.size >= this.maxPrincipals) {
        // A forgotten principal starts full again: only ever more lenient, never a false refusal.
        const oldest = this.buckets.keys().next().value as string;
        this.buckets.delete(oldest);
      }
    }
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) / this.perSecond) * 1000);
  }

  /** Takes one token of `key`'s, or throws RESOURCE_EXHAUSTED with `data.retry_after_ms`. */
  admit(key: string): void {
    const wait = this.take(key);
    if (wait > 0) {
      throw new ResourceExhaustedError('Rate limit exceeded; retry later', {
        data: { retry_after_ms: wait, limit: 'rate' },
      });
    }
  }
}

function rateLimitError(message: string): ValueError {
  return new ValueError(`rateLimit: ${message}`, { data: { option: 'rateLimit' } });
}
