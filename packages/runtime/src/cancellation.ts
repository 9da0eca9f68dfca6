import { TaskCanceledError } from '@agent/core';

/**
 * The live cancel switch of one task: an AbortController whose reason is a TaskCanceledError.
 * Pass `signal` to anything that can be aborted; call `raiseIfCancelled()` inside long loops.
 */
export class CancellationToken {
  private readonly controller = new AbortController();
  private cancelReason: string | null = null;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get isCancelled(): boolean {
    return this.controller.signal.aborted;
  }

  /** The reason given to `cancel`, or null while not canceled. */
  get reason(): string | null {
    return this.cancelReason;
  }

  /** Aborts the signal once; later calls keep the first reason. */
  cancel(reason = 'canceled'): void {
    if (this.isCancelled) return;
    this.cancelReason = reason;
    this.controller.abort(new TaskCanceledError(`Task canceled: ${reason}`, { data: { reason } }));
  }

  /** Throws the TaskCanceledError when canceled. */
  raiseIfCancelled(): void {
    if (this.isCancelled) throw this.error();
  }

  /** The error a canceled operation rejects with. */
  error(): TaskCanceledError {
    const reason = this.controller.signal.reason as unknown;
    return reason instanceof TaskCanceledError
      ? reason
      : new TaskCanceledError(`Task canceled: ${this.cancelReason ?? 'canceled'}`);
  }

  /** Runs `callback` on cancel (at once when already canceled); returns the unsubscribe function. */
  onCancel(callback: () => void): () => void {
    if (this.isCancelled) {
      callback();
      return () => undefined;
    }
    const listener = (): void => callback();
    this.signal.addEventListener('abort', listener, { once: true });
    return () => this.signal.removeEventListener('abort', listener);
  }
}

/**
 * The TaskCanceledError a signal was aborted with, or a new one for a foreign reason. The runtime
 * passes it to core's `raceAbort` and `sleep` (`@agent/core/internal`), so a waiter always rejects
 * with an Error: the reason when it is one, else a TaskCanceledError (naming a string reason).
 */
export function abortError(signal: AbortSignal): Error {
  const reason = signal.reason as unknown;
  if (reason instanceof Error) return reason;
  return new TaskCanceledError(typeof reason === 'string' ? `Task canceled: ${reason}` : undefined);
}
