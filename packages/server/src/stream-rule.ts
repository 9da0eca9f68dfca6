import { InternalError, isFinalEvent, type AgentError, type Task, type TaskEvent } from '@agent/core';
import { failedEnding, handsOverEvents, pushOf } from '@agent/core/internal';

export { failedEnding };

export const MISSING_FINAL_MESSAGE = 'The task handler ended the stream without a final status';

export interface StreamRuleHooks {
  /** Maps a failure to the error the caller sees (the error policy). */
  toWire(error: unknown): AgentError;
  /** Called once when the stream is over, however it ended. */
  onEnd(): void;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * Takes one event of a delivered stream: undefined when the next may follow at once, else a
 * promise (never rejecting) that the stream's producer waits for first.
 */
export type EventDelivery = (event: TaskEvent) => Promise<void> | undefined;

/**
 * The one stream rule: the caller sees the handler's events up to and including exactly one final
 * `task.status`. A handler stream that ends without one, or fails after its first event, is finished
 * here as `failed` (one `task.error` first); a failure before the first event rejects the first
 * `next()` with the wire error, so a transport can still answer it as a plain error.
 *
 * `return()` answers at once even while the handler is busy: a consumer that goes away is not a
 * cancel, so the handler's own iterator is told to finish in the background and never awaited.
 */
export class TaskEventStream implements AsyncIterableIterator<TaskEvent> {
  private source: AsyncIterator<TaskEvent> | undefined;
  private pending: TaskEvent[] = [];
  private yielded = 0;
  private finished = false;

  constructor(
    private readonly task: Task,
    private readonly open: () => AsyncIterable<TaskEvent>,
    private readonly hooks: StreamRuleHooks,
  ) {}

  /** A stream whose first `next()` rejects with `error` (a request refused before it started). */
  static rejected(error: AgentError): TaskEventStream {
    const never: Task = {
      id: '',
      state: 'failed',
      messages: [],
      artifacts: [],
      metadata: {},
      created_at: '',
    };
    return new TaskEventStream(
      never,
      () => {
        throw error;
      },
      { toWire: (e) => e as AgentError, onEnd: () => undefined },
    );
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * True when the handler's stream hands its events over ({@link handsOverEvents}): the events this
   * stream gives are then the reader's to number in place. Its own (a failed ending) always are.
   */
  get handsOver(): boolean {
    return handsOverEvents(this.source);
  }

  /** How many events the caller has been given. */
  get count(): number {
    return this.yielded;
  }

  /**
   * Not an async function: each call would make an async frame of its own, and the one of a stream
   * waiting for its next event lives (and is copied by every young-generation collection) until
   * that event comes. A step goes through two handlers made once per stream instead.
   */
  next(): Promise<IteratorResult<TaskEvent>> {
    const queued = this.pending.shift();
    if (queued) return Promise.resolve(this.give(queued));
    if (this.finished) return Promise.resolve(DONE);
    let step: Promise<IteratorResult<TaskEvent>>;
    try {
      // A hand-written iterator may answer with a plain result, as `await` would accept.
      step = Promise.resolve(this.opened().next());
    } catch (error) {
      return this.failed(error);
    }
    return step.then(this.stepped, this.failed);
  }

  private readonly stepped = (step: IteratorResult<TaskEvent>): IteratorResult<TaskEvent> => {
    if (this.finished) return DONE;
    if (step.done) return this.endWith(new InternalError(MISSING_FINAL_MESSAGE));
    this.admit(step.value);
    return { done: false, value: step.value };
  };

  /** The handler's iterator, opened at the first read. */
  private opened(): AsyncIterator<TaskEvent> {
    return (this.source ??= this.open()[Symbol.asyncIterator]());
  }

  /**
   * The rule for one event of the handler's stream, pulled or pushed: counted and taken, and the
   * stream over after a final status. False once it is over: the event is dropped.
   */
  private admit(event: TaskEvent): boolean {
    if (this.finished) return false;
    this.yielded++;
    if (isFinalEvent(event)) {
      this.finish();
      // Nobody asks the handler for more after its final status: let its cleanup (`finally`) run.
      this.releaseSource();
    }
    return true;
  }

  private readonly failed = (error: unknown): Promise<IteratorResult<TaskEvent>> => {
    try {
      if (this.finished) return Promise.resolve(DONE);
      const wire = this.hooks.toWire(error);
      if (this.yielded === 0) {
        this.finish();
        return Promise.reject(wire);
      }
      return Promise.resolve(this.endWith(wire));
    } catch (thrown) {
      return Promise.reject(thrown);
    }
  };

  async return(): Promise<IteratorResult<TaskEvent>> {
    if (!this.finished) {
      this.finish();
      this.releaseSource();
    }
    this.pending = [];
    return DONE;
  }

  /**
   * Hands the events to `receive`, in order and under the same rule as {@link next}, and settles
   * once the final status was received and the wait `receive` asked for after it is over. Rejects
   * with the wire error of a stream that failed before its first event, as the first `next()`
   * would (and with whatever `receive` throws). Used instead of `next()`, never beside it.
   *
   * A handler stream that offers to push ({@link pushOf}) calls `receive` from inside its own
   * emit, and its producer waits on what `receive` returns: no promise, iterator result or turn of
   * the microtask queue per event, and nothing pending on the reader's side while the handler is
   * idle. Any other stream is pulled, each wait awaited before the next `next()`.
   */
  deliver(receive: EventDelivery): Promise<void> {
    if (this.source !== undefined || this.finished) return this.pull(receive);
    let source: AsyncIterator<TaskEvent>;
    try {
      source = this.opened();
    } catch (error) {
      return this.failed(error).then(() => undefined);
    }
    const attach = pushOf<TaskEvent>(source);
    if (attach === undefined) return this.pull(receive);
    return new Promise<void>((resolve, reject) => {
      const last = (wait: Promise<void> | undefined): void => {
        if (wait === undefined) resolve();
        else void wait.then(resolve, resolve);
      };
      const take = (event: TaskEvent): Promise<void> | undefined => {
        if (!this.admit(event)) return undefined;
        // Admitted and over: it was the final status, and the delivery ends after its wait.
        const final = this.finished;
        const wait = receive(event);
        if (final) last(wait);
        return wait;
      };
      try {
        attach({
          push: (event) => {
            try {
              return take(event);
            } catch (error) {
              // Nothing more is taken from a delivery that failed: the rest of the stream is dropped.
              this.finish();
              reject(error);
              return undefined;
            }
          },
          end: () => {
            if (this.finished) return;
            // The failed ending is two events: the final status waits for the error's wait, as
            // every event does for the one before it.
            const sendFinal = (): void => {
              try {
                const final = this.pending.shift();
                if (final === undefined) resolve();
                else last(receive(this.give(final).value));
              } catch (thrown) {
                reject(thrown);
              }
            };
            try {
              const wait = receive(this.endWith(new InternalError(MISSING_FINAL_MESSAGE)).value);
              if (wait === undefined) sendFinal();
              else wait.then(sendFinal, reject);
            } catch (thrown) {
              reject(thrown);
            }
          },
        });
      } catch (error) {
        this.failed(error).then(() => resolve(), reject);
      }
    });
  }

  private async pull(receive: EventDelivery): Promise<void> {
    for (;;) {
      const step = await this.next();
      if (step.done) return;
      const wait = receive(step.value);
      if (wait !== undefined) await wait;
    }
  }

  /** Tells the handler's iterator to finish, in the background: it may be parked on an await. */
  private releaseSource(): void {
    const source = this.source;
    if (!source?.return) return;
    void Promise.resolve()
      .then(() => source.return?.())
      .catch(() => undefined);
  }

  private give(event: TaskEvent): IteratorResult<TaskEvent> {
    this.yielded++;
    return { done: false, value: event };
  }

  private endWith(error: AgentError): IteratorResult<TaskEvent> {
    const [errorEvent, finalEvent] = failedEnding(this.task, error);
    this.finish();
    this.pending.push(finalEvent);
    return this.give(errorEvent);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.hooks.onEnd();
  }
}
