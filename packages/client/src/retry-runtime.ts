/**
 * What a retry needs from the outside world — chance, waiting, and a deadline set on the caller's
 * behalf — kept replaceable without widening the public options: tests swap the runtime of one
 * client, and the `client.sync` worker passes the blocked caller's deadline. Neither is exported
 * from the package.
 */
import { sleep } from '@agent/core/internal';

export interface RetryRuntime {
  /** Uniform in [0, 1). */
  random(): number;
  /** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
  sleep(ms: number, signal: AbortSignal | undefined): Promise<void>;
}

const DEFAULT_RUNTIME: RetryRuntime = {
  random: Math.random,
  sleep: (ms, signal) => sleep(ms, signal),
};

const runtimes = new WeakMap<object, RetryRuntime>();

/** Replaces the randomness and the waiting of one client's retries. */
export function setRetryRuntime(client: object, runtime: RetryRuntime): void {
  runtimes.set(client, runtime);
}

export function retryRuntimeOf(client: object): RetryRuntime {
  return runtimes.get(client) ?? DEFAULT_RUNTIME;
}

const deadlines = new WeakMap<object, number>();

/**
 * Marks a call's options with a moment (epoch ms) no retry waits past. `client.sync` uses it for
 * the blocked caller's own timeout, which does not bound the transport call itself.
 */
export function withRetryDeadline<T extends object>(options: T, deadline: number): T {
  deadlines.set(options, deadline);
  return options;
}

export function retryDeadlineOf(options: object): number | undefined {
  return deadlines.get(options);
}
