import { isFinalEvent, type AgentError, type TaskEvent } from '@agent/core';
import type { RemoteFollow } from './remote-task.js';
import { unrecordedRun, type LiveTask } from './task-ledger.js';

/** Where a feed reads: a running task (from a sequence on), or a finished task's stored events. */
export type FeedSource =
  | {
      live: LiveTask;
      /** The sequence to follow from; events of earlier runs (at or below `live.base`) are in `prefix`. */
      after: number;
      /** The call that started the run: it sees an early failure as an error. */ starter: boolean;
      /** Stored events of a continued task's earlier runs after `after`, given before the live ones. */
      prefix?: TaskEvent[];
    }
  | { stored: TaskEvent[] }
  /** A task another replica runs, read from the shared store as that replica logs its events. */
  | { remote: RemoteFollow };

/** How a feed ended, for the request log and the metrics. */
export interface FeedOutcome {
  /** The error its caller got instead of (more) events. */
  error?: AgentError;
  /** The caller left (`return()`) before the last event. */
  detached: boolean;
}

export interface FeedHooks {
  /** Maps a failure to the error the caller sees (the error policy). */
  toWire(error: unknown): AgentError;
  /** Called once when the feed is over, however it ended. */
  onEnd(outcome: FeedOutcome): void;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** A feed's next result, or a promise of it. */
type Step = IteratorResult<TaskEvent> | Promise<IteratorResult<TaskEvent>>;

/** What {@link EventFeed}'s synchronous step answers when it must wait for the task to change… */
const WAIT = Symbol('wait');
/** …or when the step needs an await of another kind. */
const SLOW = Symbol('slow');

type LiveSource = Extract<FeedSource, { live: LiveTask }>;

/** How many events a follower behind the memory-held tail reads back from the store at once. */
const READ_BACK_BATCH = 256;

/**
 * One caller's view of a task's recorded events, each carrying its `sequence`: a new stream, an
 * attached resubmission or a subscription. It ends after the final status. Anything that goes wrong
 * before the first event (an unknown id, a run that failed at once) rejects the first `next()` with
 * the wire error, so a transport can still answer it as a plain error before committing to a stream.
 *
 * `return()` only detaches this caller: the run goes on and keeps recording, and a consumer that
 * goes away is not a cancel.
 */
export class EventFeed implements AsyncIterableIterator<TaskEvent> {
  private source: FeedSource | undefined;
  private cursor = 0;
  /** Events of a running task read back from the store, not yet given. */
  private backlog: TaskEvent[] = [];
  private yielded = 0;
  private done = false;

  constructor(
    private readonly open: () => Promise<FeedSource>,
    private readonly hooks: FeedHooks,
  ) {}

  /** A feed whose first `next()` rejects with `error` (a request refused before it started). */
  static rejected(error: AgentError): EventFeed {
    return new EventFeed(() => Promise.reject(error), {
      toWire: (e) => e as AgentError,
      onEnd: () => undefined,
    });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** How many events the caller has been given. */
  get count(): number {
    return this.yielded;
  }

  /**
   * Not an async function: a feed following a running task waits for each event, and an async
   * frame per wait lives until that event comes (every young-generation collection meanwhile copies
   * it). The common steps (an event held in memory, or a wait for the next) are taken here; every
   * other one (opening, a follow on another replica, reading back, the final status) goes through
   * {@link nextSlowly}.
   */
  next(): Promise<IteratorResult<TaskEvent>> {
    const step = this.step();
    return step instanceof Promise ? step : Promise.resolve(step);
  }

  /** The next step, or a promise of it: also what a wait resumes with once the task changed. */
  private readonly step = (): Step => {
    const step = this.stepNow();
    if (step === SLOW) return this.nextSlowly();
    if (step === WAIT) {
      // A caller that asks again before its last wait settled (async iterators allow it) waits on
      // a promise of its own, in turn after the first.
      if (this.resume === undefined) return new Promise(this.waitForChange);
      return (this.source as LiveSource).live.changed().then(this.step);
    }
    return step;
  };

  /** How a wait settles, once the task changed: kept here, so no closure is made per wait. */
  private resume: ((step: Step) => void) | undefined;
  private abandon: ((error: unknown) => void) | undefined;

  /**
   * A wait for the task's next change, made once per feed. A wait is one promise, which the task
   * settles through {@link changedNow}, rather than the task's own promise and one chained to it.
   */
  private readonly waitForChange = (
    resolve: (step: Step) => void,
    reject: (error: unknown) => void,
  ): void => {
    this.resume = resolve;
    this.abandon = reject;
    (this.source as LiveSource).live.onChange(this.changedNow);
  };

  /** Called by the task from inside its own call (see `onChange`): the step runs after it. */
  private readonly changedNow = (): void => queueMicrotask(this.stepAfterChange);

  private readonly stepAfterChange = (): void => {
    const resolve = this.resume!;
    const reject = this.abandon!;
    this.resume = undefined;
    this.abandon = undefined;
    try {
      resolve(this.step());
    } catch (error) {
      reject(error);
    }
  };

  /** The next step of a live feed when it needs no await: a result, WAIT for a change, or SLOW. */
  private stepNow(): IteratorResult<TaskEvent> | typeof WAIT | typeof SLOW {
    if (this.done) return DONE;
    const source = this.source;
    if (
      source === undefined ||
      !('live' in source) ||
      (source.prefix !== undefined && source.prefix.length > 0)
    )
      return SLOW;
    const live = source.live;
    if (
      source.starter &&
      (live.starterCut !== undefined || (this.yielded === 0 && live.earlyFailure !== undefined))
    )
      return SLOW;
    if (this.cursor < live.droppedCount) return SLOW;
    const event = live.eventAt(this.cursor);
    if (event !== undefined) {
      if (isFinalEvent(event) && this.cursor === live.recorded - 1) return SLOW;
      this.cursor++;
      return this.give(event);
    }
    if (live.finished) return this.end();
    return WAIT;
  }

  private async nextSlowly(): Promise<IteratorResult<TaskEvent>> {
    if (this.done) return DONE;
    if (!this.source) {
      try {
        this.source = await this.open();
      } catch (error) {
        throw this.fail(error);
      }
      if (this.done) {
        // Detached while it opened: a follow opened for nobody stops here.
        if ('remote' in this.source) this.source.remote.close();
        return DONE;
      }
      if ('live' in this.source) {
        this.cursor = Math.max(0, this.source.after - this.source.live.base);
        if (this.source.starter) this.source.live.paceBy(this.source.after);
      }
    }
    const source = this.source;
    // A continued task has a final status per run: only the last one recorded ends the feed.
    if ('live' in source && source.prefix !== undefined && source.prefix.length > 0) {
      return this.give(source.prefix.shift()!, false);
    }
    if ('remote' in source) {
      let step;
      try {
        step = await source.remote.next();
      } catch (error) {
        throw this.fail(error);
      }
      if (step === null) return this.end();
      return this.give(step.event, step.last);
    }
    if ('stored' in source) {
      const event = source.stored[this.cursor++];
      if (event === undefined) return this.end();
      return this.give(event, this.cursor === source.stored.length);
    }
    const live = source.live;
    for (;;) {
      if (source.starter && live.starterCut !== undefined) throw this.fail(live.starterCut);
      if (source.starter && this.yielded === 0 && live.earlyFailure !== undefined) {
        throw this.fail(live.earlyFailure);
      }
      if (this.cursor < live.droppedCount) {
        // Behind what is still held in memory: the older events come back from the store.
        const event = await this.readBack(live);
        if (this.done) return DONE;
        if (event) return this.give(event);
        continue;
      }
      const event = live.eventAt(this.cursor);
      if (event !== undefined) {
        // The final status goes out once the store holds the run: acknowledged means stored.
        if (isFinalEvent(event) && this.cursor === live.recorded - 1) {
          await live.result;
          if (this.done) return DONE;
          if (live.storeFailure !== undefined) throw this.fail(unrecordedRun(live.taskId));
        }
        this.cursor++;
        return this.give(event);
      }
      if (live.finished) return this.end();
      await live.changed();
      if (this.done) return DONE;
    }
  }

  /**
   * The next event of a running task that memory no longer holds, read back from the store in
   * batches. An event the store no longer has either (a retention limit reached) is skipped.
   */
  private async readBack(live: LiveTask): Promise<TaskEvent | undefined> {
    // Read ahead earlier, then passed by reading from memory: what is behind the cursor is given.
    while (this.backlog.length > 0 && (this.backlog[0]!.sequence ?? 0) <= live.base + this.cursor)
      this.backlog.shift();
    if (this.backlog.length === 0) {
      const after = live.base + this.cursor;
      const rows = await live.readStored(after, READ_BACK_BATCH);
      this.backlog = rows.filter((event) => (event.sequence ?? 0) > after);
      if (this.backlog.length === 0) {
        this.cursor = Math.max(this.cursor, live.droppedCount);
        return undefined;
      }
    }
    const event = this.backlog.shift()!;
    this.cursor = (event.sequence ?? live.base + this.cursor + 1) - live.base;
    return event;
  }

  async return(): Promise<IteratorResult<TaskEvent>> {
    // A starter cut off for not reading: its transport gave up on it, for that reason.
    const cut =
      this.source && 'live' in this.source && this.source.starter ? this.source.live.starterCut : undefined;
    this.finish(cut ? { error: cut, detached: false } : { detached: true });
    return DONE;
  }

  private give(event: TaskEvent, last = true): IteratorResult<TaskEvent> {
    this.yielded++;
    if (this.source && 'live' in this.source && this.source.starter && event.sequence !== undefined)
      this.source.live.starterRead(event.sequence);
    if (last && isFinalEvent(event)) this.finish();
    return { done: false, value: event };
  }

  private end(): IteratorResult<TaskEvent> {
    this.finish();
    return DONE;
  }

  /** Ends the feed with the caller's error for `error` (the error policy's), and returns it. */
  private fail(error: unknown): AgentError {
    const wire = this.hooks.toWire(error);
    this.finish({ error: wire, detached: false });
    return wire;
  }

  private finish(outcome: FeedOutcome = { detached: false }): void {
    if (this.done) return;
    this.done = true;
    if (this.source && 'remote' in this.source) this.source.remote.close();
    if (this.source && 'live' in this.source && this.source.starter) this.source.live.unpace();
    this.hooks.onEnd(outcome);
  }
}
