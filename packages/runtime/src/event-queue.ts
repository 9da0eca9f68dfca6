import type { EventReceiver } from '@agent/core/internal';
import type { CancellationToken } from './cancellation.js';

/** What a push that does not wait returns: one settled promise shared by every such push. */
export const SETTLED: Promise<void> = Promise.resolve();

/** What a finished stream's `next()` answers. */
export const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** A producer waiting for room, and the token whose cancel ends its wait. */
interface SpaceWaiter {
  resolve: () => void;
  token: CancellationToken | undefined;
}

/**
 * A bounded single-consumer queue between a run and the stream that yields its events. A full
 * queue makes `push` wait (back-pressure on the run) until the consumer takes an item, the
 * consumer leaves (`detach`), or the push's token is canceled. After `close`, iteration ends once
 * drained.
 *
 * A consumer that attached a receiver ({@link deliverTo}) instead of iterating gets each item as it
 * is pushed, and the push waits (with the same cancel rule) when the receiver asks for it.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  /** Producers waiting for room, oldest first. */
  private readonly spaceWaiters: SpaceWaiter[] = [];
  /**
   * One cancel callback per token producers wait with, kept until the queue is done: a producer
   * ahead of a slow consumer waits on nearly every push, and a callback registered and removed per
   * wait cost more than the wait itself.
   */
  private readonly cancelWatches = new Map<CancellationToken, () => void>();
  /**
   * The oldest take waiting for an item or the end, and any later ones (only a consumer that
   * overlaps its calls makes them). A field, not a list: a list that one take joins and leaves per
   * item dropped its backing store when emptied and made a new one at the next wait.
   */
  private taker: ((step: IteratorResult<T>) => void) | undefined;
  private readonly laterTakers: ((step: IteratorResult<T>) => void)[] = [];
  private closed = false;
  private detached = false;
  /** Set when the consumer takes items by push: nothing is queued then. */
  private receiver: EventReceiver<T> | undefined;

  constructor(private readonly capacity: number) {}

  /** True once the consumer stopped iterating; pushes are then dropped. */
  get isDetached(): boolean {
    return this.detached;
  }

  /**
   * Adds an item. With `force` it never waits (the final event must get through even when the
   * consumer is slow). A cancel of `token` stops the wait, not the push: the item stays queued.
   * Not an async function: a push that does not wait returns {@link SETTLED}, so a caller can tell
   * it did not wait and no promise is made for it.
   */
  push(item: T, options: { force?: boolean; token?: CancellationToken } = {}): Promise<void> {
    if (this.detached || this.closed) return SETTLED;
    if (this.receiver !== undefined) {
      const wait = this.receiver.push(item);
      return wait === undefined || options.force ? SETTLED : this.waitFor(wait, options.token);
    }
    const taker = this.taker;
    if (taker !== undefined && this.items.length === 0) {
      // The consumer waits for it: handed over at once, never queued (the queue stays empty, with
      // no backing store made and dropped per item).
      this.taker = this.laterTakers.shift();
      // As a take of a queued item does: a producer still waiting for room gets it.
      this.spaceWaiters.shift()?.resolve();
      taker({ done: false, value: item });
      return SETTLED;
    }
    this.items.push(item);
    this.wakeConsumer();
    if (options.force || this.items.length <= this.capacity) return SETTLED;
    return this.waitFor(null, options.token);
  }

  /**
   * From now on every item goes straight to `receiver`, and the end to its `end()`. Only before
   * anything was pushed or taken: the queue is empty, and stays so.
   */
  deliverTo(receiver: EventReceiver<T>): void {
    this.receiver = receiver;
  }

  /** No more items will come. */
  close(): void {
    const ending = !this.closed && !this.detached;
    this.closed = true;
    if (this.spaceWaiters.length === 0) this.unwatch();
    this.wakeConsumer();
    if (ending) this.receiver?.end();
  }

  /** The consumer left: drop what is queued and release every waiting producer. */
  detach(): void {
    this.release();
    this.wakeConsumer();
  }

  /**
   * The consumer's side, one step at a time. Not an async generator: a step with an item ready
   * settles as one promise, where a generator (and the `yield*` of whoever re-yields it) would make
   * several and take several turns of the microtask queue for each item. Leaving early (`return()`)
   * detaches, as breaking out of a `for await` loop does.
   */
  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    const iterator: AsyncIterableIterator<T> = {
      next: () => this.take(),
      return: () => {
        this.detach();
        return Promise.resolve(DONE);
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** The next item, or the end once closed and drained (or detached); waits while the queue is empty. */
  private take(): Promise<IteratorResult<T>> {
    if (this.taker === undefined) {
      const step = this.step();
      if (step !== null) return Promise.resolve(step);
    }
    return new Promise<IteratorResult<T>>((resolve) => {
      if (this.taker === undefined) this.taker = resolve;
      else this.laterTakers.push(resolve);
    });
  }

  /** What the next take gets now, or null when it has to wait for a push or the close. */
  private step(): IteratorResult<T> | null {
    if (this.items.length > 0) {
      const item = this.items.shift() as T;
      if (this.items.length <= this.capacity) this.spaceWaiters.shift()?.resolve();
      return { done: false, value: item };
    }
    if (!this.closed && !this.detached) return null;
    // Over: as a generator's `finally` did, nothing is kept and no producer waits any longer.
    this.release();
    return DONE;
  }

  /**
   * A producer's wait: until `room` settles (a receiver's wait), or until a take makes room (null);
   * either way no longer than until `token` is canceled or the consumer leaves.
   */
  private waitFor(room: Promise<void> | null, token: CancellationToken | undefined): Promise<void> {
    if (token?.isCancelled) return SETTLED;
    // Not canceled (checked above), so the callback cannot run before the waiter is listed.
    if (token && !this.cancelWatches.has(token))
      this.cancelWatches.set(
        token,
        token.onCancel(() => this.releaseWaitersOf(token)),
      );
    return new Promise<void>((resolve) => {
      const waiter: SpaceWaiter = { resolve, token };
      this.spaceWaiters.push(waiter);
      if (room !== null) {
        const done = (): void => this.releaseWaiter(waiter);
        void room.then(done, done);
      }
    });
  }

  /** Ends one producer's wait (a receiver's wait that settled), unless it has ended already. */
  private releaseWaiter(waiter: SpaceWaiter): void {
    const index = this.spaceWaiters.indexOf(waiter);
    if (index >= 0) this.spaceWaiters.splice(index, 1);
    waiter.resolve();
  }

  /** Drops what is queued and releases every waiting producer, once; later pushes are dropped. */
  private release(): void {
    this.detached = true;
    this.items.length = 0;
    for (const waiter of this.spaceWaiters.splice(0)) waiter.resolve();
    this.unwatch();
  }

  /** A cancel of `token` ends the waits of the pushes made with it; their items stay queued. */
  private releaseWaitersOf(token: CancellationToken): void {
    const waiters = this.spaceWaiters;
    let kept = 0;
    for (const waiter of waiters) {
      if (waiter.token === token) waiter.resolve();
      else waiters[kept++] = waiter;
    }
    waiters.length = kept;
  }

  private unwatch(): void {
    for (const off of this.cancelWatches.values()) off();
    this.cancelWatches.clear();
  }

  private wakeConsumer(): void {
    while (this.taker !== undefined) {
      const step = this.step();
      if (step === null) return;
      const taker = this.taker;
      this.taker = this.laterTakers.shift();
      taker(step);
    }
  }
}
