import { UnavailableError, ValueError } from './errors.js';

/** Gives one slot back; calling it again does nothing. */
export type ReleaseSlot = () => void;

export interface ConcurrencyLimitOptions {
  /**
   * What the overload error tells a refused caller to wait before trying again, in ms
   * (`data.retry_after_ms`; an HTTP `Retry-After`, a gRPC `retry-after-ms` trailer). Default 1000.
   */
  retryAfterMs?: number;
  /** Names the limit in the overload error's `data.limit` and message. Default `concurrency`. */
  name?: string;
}

export const DEFAULT_RETRY_AFTER_MS = 1000;

/** Reads a limit's `retryAfterMs` option: a whole number of ms from 0, DEFAULT_RETRY_AFTER_MS when absent. */
export function retryAfterMsOption(owner: string, value: number | undefined): number {
  const retryAfterMs = value ?? DEFAULT_RETRY_AFTER_MS;
  if (!Number.isSafeInteger(retryAfterMs) || retryAfterMs < 0) {
    throw new ValueError(`${owner} retryAfterMs must be a whole number of ms, got ${String(retryAfterMs)}`);
  }
  return retryAfterMs;
}

/**
 * At most `max` things at once, and never a queue: a caller over the limit is refused at once with
 * UNAVAILABLE (503) carrying `data.retry_after_ms`. A queue in front of a saturated server only
 * grows memory and latency until something times out; refusing lets the caller (or its load
 * balancer) retry elsewhere or later. One instance shared by several servers, or by every outbound
 * call of one kind (delegations, token exchanges, push deliveries), bounds them together.
 */
export class ConcurrencyLimit {
  readonly max: number;
  readonly retryAfterMs: number;
  readonly name: string;
  private inUse = 0;

  constructor(max: number, options: ConcurrencyLimitOptions = {}) {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new ValueError(`ConcurrencyLimit needs a whole number max from 1, got ${String(max)}`);
    }
    this.max = max;
    this.retryAfterMs = retryAfterMsOption('ConcurrencyLimit', options.retryAfterMs);
    this.name = options.name ?? 'concurrency';
  }

  /** Slots taken now. */
  get active(): number {
    return this.inUse;
  }

  /** Slots free now. */
  get available(): number {
    return this.max - this.inUse;
  }

  /** A slot, or `undefined` when all are taken. */
  tryAcquire(): ReleaseSlot | undefined {
    if (this.inUse >= this.max) return undefined;
    this.inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
    };
  }

  /** A slot, or throws the overload error ({@link overloaded}). */
  acquire(): ReleaseSlot {
    const release = this.tryAcquire();
    if (!release) throw this.overloaded();
    return release;
  }

  /** Runs `work` in a slot, given back however it ends; rejects at once with the overload error when full. */
  async run<T>(work: () => Promise<T> | T): Promise<T> {
    const release = this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** What a caller over the limit gets: UNAVAILABLE with `data: { retry_after_ms, limit }`. */
  overloaded(): UnavailableError {
    return new UnavailableError(`Too many concurrent ${this.name}; retry later`, {
      data: { retry_after_ms: this.retryAfterMs, limit: this.name },
    });
  }
}

/**
 * How long an error asks its caller to wait before retrying (`data.retry_after_ms`), for the wires
 * that also carry it in their own form (HTTP `Retry-After`, the gRPC `retry-after-ms` trailer).
 */
export function retryAfterMsOf(error: { data?: unknown }): number | undefined {
  const data = error.data;
  if (typeof data !== 'object' || data === null) return undefined;
  const value = (data as { retry_after_ms?: unknown }).retry_after_ms;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.ceil(value) : undefined;
}
