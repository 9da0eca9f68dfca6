import { UnavailableError, ValueError, type ReleaseSlot } from '@agent/core';
import { retryAfterMsOption } from '@agent/core/internal';

/** The name the per-caller overload error gives this limit (`data.limit`). */
export const CALLER_TASKS_LIMIT_NAME = 'tasks_per_caller';

export interface CallerTaskLimitOptions {
  /** What the overload error tells a refused caller to wait, in ms (`data.retry_after_ms`). Default 1000. */
  retryAfterMs?: number;
}

/**
 * At most `max` task runs at once per caller, so that one caller (a principal, or an address when
 * anonymous) cannot hold every slot of `maxConcurrentTasks` and starve the others. Like the shared
 * limit it never queues: a caller over its share is refused at once with UNAVAILABLE (503) and
 * `data.retry_after_ms`. Memory is one counter per caller with a run in progress, nothing more.
 * One instance shared by several pipelines counts a caller's runs across all of them.
 */
export class CallerTaskLimit {
  readonly max: number;
  readonly retryAfterMs: number;
  private readonly running = new Map<string, number>();

  constructor(max: number, options: CallerTaskLimitOptions = {}) {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new ValueError(`maxConcurrentTasksPerCaller must be a whole number from 1, got ${String(max)}`, {
        data: { option: 'maxConcurrentTasksPerCaller' },
      });
    }
    this.max = max;
    this.retryAfterMs = retryAfterMsOption('CallerTaskLimit', options.retryAfterMs);
  }

  /** Runs `caller` has in progress now. */
  active(caller: string): number {
    return this.running.get(caller) ?? 0;
  }

  /** Callers with a run in progress now. */
  get callers(): number {
    return this.running.size;
  }

  /** True when `caller` has used its share. */
  full(caller: string): boolean {
    return this.active(caller) >= this.max;
  }

  /** A slot of `caller`'s share, or throws the overload error ({@link overloaded}). */
  acquire(caller: string): ReleaseSlot {
    const count = this.active(caller);
    if (count >= this.max) throw this.overloaded();
    this.running.set(caller, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.active(caller) - 1;
      if (left > 0) this.running.set(caller, left);
      else this.running.delete(caller);
    };
  }

  /** What a caller over its share gets: UNAVAILABLE with `data: { retry_after_ms, limit }`. */
  overloaded(): UnavailableError {
    return new UnavailableError(
      `Too many concurrent tasks of this caller (at most ${this.max}); retry later`,
      { data: { retry_after_ms: this.retryAfterMs, limit: CALLER_TASKS_LIMIT_NAME } },
    );
  }
}

/** Reads `maxConcurrentTasksPerCaller`: `undefined` (no limit), a whole number from 1, or a shared CallerTaskLimit. */
export function callerLimitOption(value: unknown): CallerTaskLimit | undefined {
  if (value === undefined) return undefined;
  if (value instanceof CallerTaskLimit) return value;
  if (typeof value !== 'number') {
    throw new ValueError(
      `maxConcurrentTasksPerCaller must be a whole number from 1 or a CallerTaskLimit, got ${String(value)}`,
      { data: { option: 'maxConcurrentTasksPerCaller' } },
    );
  }
  return new CallerTaskLimit(value);
}
