import type { CancellationToken } from './cancellation.js';

/**
 * A bounded single-consumer queue between a run and the stream that yields its events. A full
 * queue makes `push` wait (back-pressure on the run) until the consumer takes an item, the
 * consumer leaves (`detach`), or `unblock` aborts. After `close`, iteration ends once drained.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private readonly spaceWaiters: (() => void)[] = [];
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
   */
  async push(item: T, options: { force?: boolean; token?: CancellationToken } = {}): Promise<void> {
    if (this.detached || this.closed) return;
    this.items.push(item);
    this.wakeConsumer();
    if (options.force || this.items.length <= this.capacity) return;
    const token = options.token;
    if (token?.isCancelled) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        off?.();
        const index = this.spaceWaiters.indexOf(done);
        if (index >= 0) this.spaceWaiters.splice(index, 1);
        resolve();
      };
      this.spaceWaiters.push(done);
      // Not canceled (checked above), so `done` cannot run before `off` is set.
      const off = token?.onCancel(done);
    });
  }

  /** No more items will come. */
  close(): void {
    this.closed = true;
    this.wakeConsumer();
  }

  /** The consumer left: drop what is queued and release every waiting producer. */
  detach(): void {
    this.detached = true;
    this.items.length = 0;
    for (const waiter of this.spaceWaiters.splice(0)) waiter();
    this.wakeConsumer();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      for (;;) {
        if (this.items.length > 0) {
          const item = this.items.shift() as T;
          if (this.items.length <= this.capacity) this.spaceWaiters.shift()?.();
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

  private wakeConsumer(): void {
    const waiter = this.itemWaiter;
    this.itemWaiter = null;
    waiter?.();
  }
}
