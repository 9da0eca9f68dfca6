import { TaskCanceledError } from '@agent/core';
import { wakeSoon } from './wake-queue.js';

/** What {@link CancellationToken.listen} calls on cancel: an object, so a waiter needs no closure for it. */
interface CancelListener {
  handleEvent(): void;
}

/** Set by CancellationToken's static block: a sleep reads and sets its token's spare through them. */
let spareSleepOf: (token: CancellationToken) => Sleep | null;
let setSpareSleep: (token: CancellationToken, sleep: Sleep | null) => void;

/**
 * The live cancel switch of one task: an AbortController whose reason is a TaskCanceledError.
 * Pass `signal` to anything that can be aborted; call `raiseIfCancelled()` inside long loops.
 * The controller is made on the first read of `signal`: a run that never hands its signal to
 * anything (most runs) costs no AbortController, AbortSignal or event listener.
 */
export class CancellationToken {
  private controller: AbortController | null = null;
  private cancelReason: string | null = null;
  private cancelError: TaskCanceledError | null = null;
  /**
   * Listeners registered before the controller existed, in registration order: the first in a
   * field of its own, any others after it in a set. A run that sleeps in a loop adds and removes
   * one listener per wait; a set alone rebuilt its table every few waits, garbage that lived as
   * long as the run's token.
   */
  private first: CancelListener | null = null;
  private others: Set<CancelListener> | null = null;
  /** The last woken wait of {@link sleepUnlessCanceled}, for the next one to reuse. */
  #spareSleep: Sleep | null = null;

  static {
    spareSleepOf = (token) => token.#spareSleep;
    setSpareSleep = (token, sleep) => {
      token.#spareSleep = sleep;
    };
  }

  get signal(): AbortSignal {
    if (this.controller === null) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.cancelError !== null) controller.abort(this.cancelError);
      // Registered first on the new signal, so the early callbacks keep running before any later one.
      else if (this.first !== null || (this.others !== null && this.others.size > 0))
        controller.signal.addEventListener('abort', () => this.runEarly(), { once: true });
    }
    return this.controller.signal;
  }

  get isCancelled(): boolean {
    return this.cancelError !== null;
  }

  /** The reason given to `cancel`, or null while not canceled. */
  get reason(): string | null {
    return this.cancelReason;
  }

  /** Aborts the signal once; later calls keep the first reason. */
  cancel(reason = 'canceled'): void {
    if (this.cancelError !== null) return;
    this.cancelReason = reason;
    this.cancelError = cancelErrorOf(reason);
    if (this.controller !== null) this.controller.abort(this.cancelError);
    else this.runEarly();
  }

  /** Throws the TaskCanceledError when canceled. */
  raiseIfCancelled(): void {
    if (this.cancelError !== null) throw this.cancelError;
  }

  /** The error a canceled operation rejects with. */
  error(): TaskCanceledError {
    return this.cancelError ?? new TaskCanceledError(`Task canceled: ${this.cancelReason ?? 'canceled'}`);
  }

  /** Runs `callback` on cancel (at once when already canceled); returns the unsubscribe function. */
  onCancel(callback: () => void): () => void {
    if (this.isCancelled) {
      callback();
      return () => undefined;
    }
    // A listener object of its own: the same callback given twice is two registrations.
    const listener: CancelListener = { handleEvent: () => callback() };
    this.listen(listener);
    return () => this.unlisten(listener);
  }

  /**
   * @internal Runs `listener.handleEvent()` on cancel (at once when already canceled), with no
   * closure of its own: the object is its own handle, which {@link unlisten} takes away again.
   * `onCancel` registers through it too.
   */
  listen(listener: CancelListener): void {
    if (this.isCancelled) listener.handleEvent();
    else if (this.controller === null) this.addEarly(listener);
    else this.controller.signal.addEventListener('abort', listener, { once: true });
  }

  /** @internal Takes away a listener given to {@link listen}. */
  unlisten(listener: CancelListener): void {
    // Added before the controller existed, it is still among the early ones the controller runs.
    if (this.first === listener) this.first = null;
    else if (this.others === null || !this.others.delete(listener))
      this.controller?.signal.removeEventListener('abort', listener);
  }

  /** Keeps a listener to run on cancel; one given twice runs once. */
  private addEarly(listener: CancelListener): void {
    if (listener === this.first) return;
    // The field holds the first only while no other waits, so it always runs before them.
    if (this.first === null && (this.others === null || this.others.size === 0)) this.first = listener;
    else (this.others ??= new Set()).add(listener);
  }

  private runEarly(): void {
    const listeners = this.first === null ? [] : [this.first];
    if (this.others !== null) for (const listener of this.others) listeners.push(listener);
    this.first = null;
    this.others = null;
    for (const listener of listeners) {
      try {
        listener.handleEvent();
      } catch (error) {
        // As from an abort listener: reported as uncaught, without stopping the other listeners.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

/**
 * `work`, or a rejection with the token's TaskCanceledError as soon as the token is canceled (the
 * work's own later rejection is then ignored). The token-based twin of core's `raceAbort`.
 */
export function raceCancel<T>(work: Promise<T>, token: CancellationToken): Promise<T> {
  if (token.isCancelled) {
    work.catch(() => undefined);
    return Promise.reject(token.error());
  }
  return new Promise<T>((resolve, reject) => {
    const off = token.onCancel(() => {
      work.catch(() => undefined);
      reject(token.error());
    });
    work.then(
      (value) => {
        off();
        resolve(value);
      },
      (error: unknown) => {
        off();
        reject(error);
      },
    );
  });
}

/**
 * Waits `ms` milliseconds; rejects with the token's TaskCanceledError as soon as it is canceled. The
 * wait is a timer and one entry in the token's own callback list: a run that only sleeps (a poll, a
 * progress tick) never makes the token's AbortController, whose listeners cost more to add and
 * remove per wait than the wait itself. A due wait resumes through the wake queue, a few per
 * event-loop turn, so many tasks waking together never hold I/O for the whole batch.
 */
export function sleepUnlessCanceled(ms: number, token: CancellationToken): Promise<void> {
  if (token.isCancelled) return Promise.reject(token.error());
  return new Promise<void>((resolve, reject) => startSleep(ms, token, resolve, reject));
}

function startSleep(
  ms: number,
  token: CancellationToken,
  resolve: () => void,
  reject: (error: unknown) => void,
): void {
  const delay = Math.max(0, ms);
  const spare = spareSleepOf(token);
  let sleep: Sleep;
  if (spare !== null && spare.delay === delay) {
    // The run's last wait, woken and of the same length (a progress tick): its object and its
    // timer serve again. `refresh()` re-arms a timer that has fired, as a new one would be.
    setSpareSleep(token, null);
    sleep = spare;
    sleep.arm(resolve, reject);
    sleep.timer.refresh();
  } else {
    sleep = new Sleep(token, delay, resolve, reject);
  }
  token.listen(sleep);
}

/**
 * One wait of {@link sleepUnlessCanceled}. Its wake and its cancel are this one object's methods,
 * and its timer hands the object to the wake queue, not a closure each: a thousand tasks sleeping
 * between progress ticks made them at every tick, ~0.3 KB of garbage per wait. Once woken, it is
 * its token's spare: a run that sleeps in a loop reuses one object and one timer for every wait
 * (each lived through the wait, and was copied by every young collection meanwhile).
 */
class Sleep {
  private settled = false;
  readonly timer: NodeJS.Timeout;

  constructor(
    private readonly token: CancellationToken,
    readonly delay: number,
    private resolve: (() => void) | undefined,
    private reject: ((error: unknown) => void) | undefined,
  ) {
    // Due, the sleep is queued to wake: the timer calls wakeSoon(sleep) itself, with no closure.
    this.timer = setTimeout(wakeSoon, delay, this);
  }

  /** Starts another wait with this object (and its timer, which the caller re-arms). */
  arm(resolve: () => void, reject: (error: unknown) => void): void {
    this.settled = false;
    this.resolve = resolve;
    this.reject = reject;
  }

  /** Due: the wake waits its turn in the wake queue; a cancel meanwhile still rejects it. */
  wake(): void {
    if (this.settled) return;
    this.settled = true;
    this.token.unlisten(this);
    const resolve = this.resolve;
    this.resolve = undefined;
    this.reject = undefined;
    // Only a woken sleep is reused: it is out of the wake queue and its timer has fired. A
    // canceled one may still be queued, and its token takes no further wait anyway.
    setSpareSleep(this.token, this);
    resolve?.();
  }

  /** The token was canceled. */
  handleEvent(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const reject = this.reject;
    this.resolve = undefined;
    this.reject = undefined;
    reject?.(this.token.error());
  }
}

/**
 * The error a token's cancel rejects every waiter of its run with, made without stack frames: they
 * would be the canceller's (a cancel route's handler, a deadline's timer), which say nothing about
 * the run code that meets the error, and capturing them was the largest single cost of a cancel
 * (about a twentieth of the server's work when a thousand come at once). The message and `reason`
 * say why the run stopped. A runtime whose `Error.stackTraceLimit` cannot be set still gets the
 * error, with frames.
 */
function cancelErrorOf(reason: string): TaskCanceledError {
  const limit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 0;
  } catch {
    // Frozen (a hardened runtime): the error captures its frames as any other.
  }
  try {
    return new TaskCanceledError(`Task canceled: ${reason}`, { data: { reason } });
  } finally {
    if (Error.stackTraceLimit !== limit) Error.stackTraceLimit = limit;
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
