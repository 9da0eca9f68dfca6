import { CancellationToken } from './cancellation.js';
import { EventQueue, SETTLED } from './event-queue.js';

/** Whether `promise` has settled once pending callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('EventQueue', () => {
  it('returns the shared settled promise for a push with room, and waits once it is full', async () => {
    const queue = new EventQueue<number>(2);
    const token = new CancellationToken();
    expect(queue.push(1, { token })).toBe(SETTLED);
    expect(queue.push(2, { token })).toBe(SETTLED);
    const third = queue.push(3, { token });
    expect(third).not.toBe(SETTLED);
    expect(await settled(third)).toBe(false);
    expect(queue.push(4, { force: true })).toBe(SETTLED);
    const iterator = queue[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toBe(1);
    expect(await settled(third)).toBe(false);
    expect((await iterator.next()).value).toBe(2);
    expect(await settled(third)).toBe(true);
    queue.close();
    expect((await iterator.next()).value).toBe(3);
    expect((await iterator.next()).value).toBe(4);
    expect((await iterator.next()).done).toBe(true);
  });

  it("ends the waits of one token's pushes when it is canceled, keeping their items", async () => {
    const queue = new EventQueue<string>(1);
    const canceled = new CancellationToken();
    const other = new CancellationToken();
    void queue.push('room', { token: canceled });
    const first = queue.push('a', { token: canceled });
    const second = queue.push('b', { token: other });
    const third = queue.push('c', { token: canceled });
    canceled.cancel('stop');
    expect(await settled(first)).toBe(true);
    expect(await settled(third)).toBe(true);
    expect(await settled(second)).toBe(false);
    // A push with a canceled token does not wait; its item is still queued.
    expect(queue.push('d', { token: canceled })).toBe(SETTLED);
    queue.close();
    const items: string[] = [];
    for await (const item of queue) items.push(item);
    expect(items).toEqual(['room', 'a', 'b', 'c', 'd']);
    expect(await settled(second)).toBe(true);
    // The queue no longer listens: a later cancel of the other token finds nothing to release.
    other.cancel('late');
  });

  it('releases every waiting push and drops what is queued when the consumer leaves', async () => {
    const queue = new EventQueue<number>(1);
    const token = new CancellationToken();
    void queue.push(1, { token });
    const waiting = [queue.push(2, { token }), queue.push(3)];
    for await (const item of queue) {
      expect(item).toBe(1);
      break;
    }
    expect(queue.isDetached).toBe(true);
    for (const wait of waiting) expect(await settled(wait)).toBe(true);
    expect(queue.push(4, { token })).toBe(SETTLED);
  });

  it('gives a producer waiting for room its turn at each item taken, also one handed straight to a waiting take', async () => {
    const queue = new EventQueue<string>(0);
    const iterator = queue[Symbol.asyncIterator]();
    const a = queue.push('a');
    const b = queue.push('b');
    expect((await iterator.next()).value).toBe('a');
    expect(await settled(a)).toBe(false);
    expect((await iterator.next()).value).toBe('b');
    expect(await settled(a)).toBe(true);
    expect(await settled(b)).toBe(false);
    // The queue is empty and a take waits: `c` goes to it at once, and `b`'s producer gets its turn.
    const next = iterator.next();
    expect(queue.push('c')).toBe(SETTLED);
    await expect(next).resolves.toEqual({ done: false, value: 'c' });
    expect(await settled(b)).toBe(true);
    queue.close();
    await expect(iterator.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it('answers overlapping next() calls in order, and return() detaches like leaving a loop', async () => {
    const queue = new EventQueue<number>(4);
    const iterator = queue[Symbol.asyncIterator]();
    const first = iterator.next();
    const second = iterator.next();
    void queue.push(1);
    void queue.push(2);
    await expect(first).resolves.toEqual({ done: false, value: 1 });
    await expect(second).resolves.toEqual({ done: false, value: 2 });
    const third = iterator.next();
    await expect(iterator.return!()).resolves.toEqual({ done: true, value: undefined });
    await expect(third).resolves.toEqual({ done: true, value: undefined });
    expect(queue.isDetached).toBe(true);
    expect(queue.push(3)).toBe(SETTLED);
    await expect(iterator.next()).resolves.toEqual({ done: true, value: undefined });
  });

  describe('delivering to a receiver', () => {
    /** A receiver that records what it gets and asks the producer to wait while `hold` is set. */
    function receiver() {
      const got: string[] = [];
      let ended = 0;
      let hold: { promise: Promise<void>; release: () => void } | undefined;
      return {
        got,
        ended: () => ended,
        holdNext: () => {
          let release!: () => void;
          const promise = new Promise<void>((resolve) => (release = resolve));
          hold = { promise, release };
          return release;
        },
        target: {
          push: (item: string) => {
            got.push(item);
            const wait = hold?.promise;
            hold = undefined;
            return wait;
          },
          end: () => void ended++,
        },
      };
    }

    it('hands every item over as it is pushed, queues nothing, and ends it once on close', async () => {
      const queue = new EventQueue<string>(0);
      const r = receiver();
      queue.deliverTo(r.target);
      // A capacity of 0 would make a queued push wait: a delivered one waits only when asked to.
      expect(queue.push('a')).toBe(SETTLED);
      expect(queue.push('b')).toBe(SETTLED);
      expect(r.got).toEqual(['a', 'b']);
      queue.close();
      queue.close();
      expect(r.ended()).toBe(1);
      expect(queue.push('late')).toBe(SETTLED);
      expect(r.got).toEqual(['a', 'b']);
    });

    it("makes the producer wait for the receiver's wait, but never a forced push", async () => {
      const queue = new EventQueue<string>(256);
      const r = receiver();
      queue.deliverTo(r.target);
      const release = r.holdNext();
      const held = queue.push('a');
      expect(held).not.toBe(SETTLED);
      expect(await settled(held)).toBe(false);
      release();
      expect(await settled(held)).toBe(true);
      r.holdNext();
      expect(queue.push('final', { force: true })).toBe(SETTLED);
      expect(r.got).toEqual(['a', 'final']);
    });

    it("ends a wait when the push's token is canceled, and a push with a canceled token does not wait", async () => {
      const queue = new EventQueue<string>(256);
      const r = receiver();
      queue.deliverTo(r.target);
      const token = new CancellationToken();
      r.holdNext();
      const held = queue.push('a', { token });
      expect(await settled(held)).toBe(false);
      token.cancel('stop');
      expect(await settled(held)).toBe(true);
      r.holdNext();
      expect(queue.push('b', { token })).toBe(SETTLED);
      expect(r.got).toEqual(['a', 'b']);
    });

    it('releases a waiting producer and delivers nothing more once the consumer leaves', async () => {
      const queue = new EventQueue<string>(256);
      const r = receiver();
      queue.deliverTo(r.target);
      r.holdNext();
      const held = queue.push('a');
      queue.detach();
      expect(await settled(held)).toBe(true);
      expect(queue.push('b')).toBe(SETTLED);
      queue.close();
      expect(r.got).toEqual(['a']);
      expect(r.ended()).toBe(0);
    });
  });
});
