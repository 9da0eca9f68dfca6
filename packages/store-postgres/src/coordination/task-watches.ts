import { UnavailableError } from '@agent/core';
import type { TaskWatch } from '@agent/events';

/**
 * Every open task watch of this replica, by task: one LISTEN connection serves them all, and a
 * notification wakes the watches of its task only.
 */
export class TaskWatches {
  readonly #byKey = new Map<string, Set<Watch>>();

  constructor(private readonly pollIntervalMs: number) {}

  open(key: string): TaskWatch {
    let watches = this.#byKey.get(key);
    if (!watches) this.#byKey.set(key, (watches = new Set()));
    const watch = new Watch(this.pollIntervalMs, () => {
      watches.delete(watch);
      if (watches.size === 0 && this.#byKey.get(key) === watches) this.#byKey.delete(key);
    });
    watches.add(watch);
    return watch;
  }

  /** A change of the task was announced. */
  wake(key: string): void {
    const watches = this.#byKey.get(key);
    if (watches) for (const watch of [...watches]) watch.wake();
  }

  /** Announcements may have been missed (the LISTEN connection was down): every watch rereads. */
  wakeAll(): void {
    for (const watches of [...this.#byKey.values()]) for (const watch of [...watches]) watch.wake();
  }

  closeAll(): void {
    for (const watches of [...this.#byKey.values()]) for (const watch of [...watches]) watch.close();
  }
}

class Watch implements TaskWatch {
  // A change announced while nobody waits in next(): the next call resolves at once, so a change
  // between two next() calls is never lost.
  #pending = false;
  readonly #waiters = new Set<() => void>();
  #closed = false;

  constructor(
    private readonly pollIntervalMs: number,
    private readonly unregister: () => void,
  ) {}

  wake(): void {
    if (this.#waiters.size === 0) {
      this.#pending = true;
      return;
    }
    for (const resolve of [...this.#waiters]) resolve();
  }

  next(signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(new UnavailableError('The task watch is closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#waiters.delete(done);
      };
      const done = (): void => {
        settle();
        resolve();
      };
      const onAbort = (): void => {
        settle();
        reject(signal?.reason);
      };
      // Without any announcement the caller rereads anyway: a lost notification only delays.
      const timer = setTimeout(done, this.pollIntervalMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(done);
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.unregister();
    // Whoever still waits rereads once and then finds the watch closed.
    for (const resolve of [...this.#waiters]) resolve();
  }
}
