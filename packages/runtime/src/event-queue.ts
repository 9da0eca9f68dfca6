import type { CancellationToken } from './cancellation.js';

/** What a push that does not wait returns: one settled promise shared by every such push. */
export const SETTLED: Promise<void> = Promise.resolve();

/**
 * A bounded single-consumer queue between a run and the stream that yields its events. A full
 * queue makes `push` wait (back-pressure on the run) until the consumer takes an item, the
 * consumer leaves (`detach`), or the push's token is canceled. After `close`, iteration ends once
 * drained.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  /** Producers waiting for room, oldest first. */
  private readonly spaceWaiters: { resolve: () => void; token: CancellationToken | undefined }[] = [];
  /**
   * One cancel callback per token producers wait with, kept until the queue is done: a producer
   * ahead of a slow consumer waits on nearly every push, and a callback registered and removed per
   * wait cost more than the wait itself.
   */
  private readonly cancelWatches = new Map<CancellationToken, () => void>();
  private itemWaiter: (() => void) | null = null;
  private closed = false;
  private detached = false;

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
    this.items.push(item);
    this.wakeConsumer();
    if (options.force || this.items.length <= this.capacity) return SETTLED;
    const token = options.token;
    if (token?.isCancelled) return SETTLED;
    // Not canceled (checked above), so the callback cannot run before the waiter is listed.
    if (token && !this.cancelWatches.has(token))
      this.cancelWatches.set(
        token,
        token.onCancel(() => this.releaseWaitersOf(token)),
      );
    return new Promise<void>((resolve) => {
      this.spaceWaiters.push({ resolve, token });
    });
  }

  /** No more items will come. */
  close(): void {
    this.closed = true;
    if (this.spaceWaiters.length === 0) this.unwatch();
    this.wakeConsumer();
  }

  /** The consumer left: drop what is queued and release every waiting producer. */
  detach(): void {
    this.detached = true;
    this.items.length = 0;
    for (const waiter of this.spaceWaiters.splice(0)) waiter.resolve();
    this.unwatch();
    this.wakeConsumer();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      for (;;) {
        if (this.items.length > 0) {
          const item = this.items.shift() as T;
          if (this.items.length <= this.capacity) this.spaceWaiters.shift()?.resolve();
          yield item;
          continue;
        }
        if (this.closed || this.detached) return;
        await new Promise<void>((resolve) => {
          this.itemWaiter = resolve;
        });
      }
    } finally {
      this.detach();
    }
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
    const waiter = this.itemWaiter;
    this.itemWaiter = null;
    waiter?.();
  }
}
