/**
 * The abort side of one request (or of a run the pipeline drives). The AbortController is made only
 * when someone asks for the signal: most requests and runs finish without anyone listening, and the
 * fast path should not pay for one (with its listener map, some 400 bytes each).
 *
 * A wire adapter that only needs to hear of the abort (a stream racing its next event against the
 * caller leaving) listens with {@link RequestScope.onAbort} instead: an AbortController, with the
 * listener added and removed again, cost a few microseconds per stream or gRPC call, and a listener
 * per streamed event as much again per event.
 */
export class RequestScope {
  private controller: AbortController | undefined;
  private why: unknown;
  private aborted = false;
  private listeners: AbortListener[] | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  get isAborted(): boolean {
    return this.aborted;
  }

  /** Why the scope was aborted; `undefined` while it has not been. */
  get reason(): unknown {
    return this.why;
  }

  /**
   * Calls `listener` once, with the reason, when the scope aborts; not at all if it already has
   * (check {@link isAborted} first). Stop listening with {@link offAbort}.
   */
  onAbort(listener: AbortListener): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  offAbort(listener: AbortListener): void {
    const listeners = this.listeners;
    if (!listeners) return;
    const index = listeners.lastIndexOf(listener);
    if (index !== -1) listeners.splice(index, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.why = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    // A listener that throws keeps neither the others nor the signal from hearing of the abort; the
    // first such error is thrown once all of them have run.
    let failure: { error: unknown } | undefined;
    if (listeners) {
      for (const listener of listeners) {
        try {
          listener(reason);
        } catch (error) {
          failure ??= { error };
        }
      }
    }
    this.controller?.abort(reason);
    if (failure) throw failure.error;
  }
}

/** What {@link RequestScope.onAbort} calls. */
export type AbortListener = (reason: unknown) => void;

/** What {@link AbortWatch.race} gives when the scope aborted first. */
export const ABORTED: unique symbol = Symbol('aborted');

/**
 * Races each step of a stream (each `next()`) against the scope with one abort listener for the
 * whole stream. A step left pending when the scope aborts settles on its own, and its failure is
 * handled: nobody waits for it any more.
 */
export class AbortWatch {
  private wake: ((value: typeof ABORTED) => void) | undefined;
  private readonly onAbort = (): void => this.wake?.(ABORTED);

  constructor(private readonly scope: RequestScope) {
    scope.onAbort(this.onAbort);
  }

  race<T>(promise: Promise<T>): Promise<T | typeof ABORTED> {
    if (this.scope.isAborted) {
      promise.catch(() => undefined);
      return Promise.resolve(ABORTED);
    }
    return new Promise((resolve, reject) => {
      this.wake = resolve;
      // A failure after the abort settled the race lands on a settled promise: handled, ignored.
      promise.then(resolve, reject);
    });
  }

  dispose(): void {
    this.wake = undefined;
    this.scope.offAbort(this.onAbort);
  }
}
