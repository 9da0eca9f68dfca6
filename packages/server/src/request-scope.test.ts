import { ABORTED, AbortWatch, RequestScope } from './request-scope.js';

/** Runs `body`, then one more turn, and returns the rejections nobody handled meanwhile. */
async function unhandledDuring(body: () => Promise<void>): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await body();
    await new Promise((resolve) => setImmediate(resolve));
    return unhandled;
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
}

describe('RequestScope', () => {
  it('calls each abort listener once with the reason, and the signal made later is aborted too', () => {
    const scope = new RequestScope();
    const heard: unknown[] = [];
    const first = (reason: unknown): void => void heard.push(['first', reason]);
    const second = (reason: unknown): void => void heard.push(['second', reason]);
    scope.onAbort(first);
    scope.onAbort(second);
    expect(scope.reason).toBeUndefined();
    const reason = new Error('client gone');
    scope.abort(reason);
    scope.abort(new Error('a second abort changes nothing'));
    expect(heard).toEqual([
      ['first', reason],
      ['second', reason],
    ]);
    expect(scope.isAborted).toBe(true);
    expect(scope.reason).toBe(reason);
    expect(scope.signal.aborted).toBe(true);
    expect(scope.signal.reason).toBe(reason);
  });

  it('a listener taken off is not called, and one added after the abort is not called either', () => {
    const scope = new RequestScope();
    const kept = jest.fn();
    const removed = jest.fn();
    scope.onAbort(removed);
    scope.onAbort(kept);
    scope.offAbort(removed);
    scope.offAbort(() => undefined); // never added: nothing happens
    scope.abort('stop');
    const late = jest.fn();
    scope.onAbort(late);
    expect(removed).not.toHaveBeenCalled();
    expect(kept).toHaveBeenCalledWith('stop');
    expect(late).not.toHaveBeenCalled();
  });

  it('aborts a signal already handed out, after the listeners', () => {
    const scope = new RequestScope();
    const order: string[] = [];
    scope.signal.addEventListener('abort', () => order.push('signal'));
    scope.onAbort(() => order.push('listener'));
    scope.abort('stop');
    expect(order).toEqual(['listener', 'signal']);
  });

  it('a listener that throws keeps neither the others nor the signal from hearing of the abort', () => {
    const scope = new RequestScope();
    const signal = scope.signal;
    const after = jest.fn();
    const thrown = new Error('listener failed');
    scope.onAbort(() => {
      throw thrown;
    });
    scope.onAbort(after);
    expect(() => scope.abort('stop')).toThrow(thrown);
    expect(after).toHaveBeenCalledWith('stop');
    expect(signal.aborted).toBe(true);
    expect(scope.reason).toBe('stop');
  });
});

describe('AbortWatch (a stream loop racing each next() against its request)', () => {
  it('a next() that fails after the request was given up on does not go unhandled', async () => {
    const unhandled = await unhandledDuring(async () => {
      const scope = new RequestScope();
      const watch = new AbortWatch(scope);
      scope.abort(new Error('given up'));
      // The feed's next() rejects with the reason the stream was cut off, after the race is decided.
      const next = Promise.reject(new Error('cut off for not reading'));
      await expect(watch.race(next)).resolves.toBe(ABORTED);
      watch.dispose();
    });
    expect(unhandled).toEqual([]);
  });

  it('an abort while next() is pending resolves the race, and the late failure stays handled', async () => {
    const unhandled = await unhandledDuring(async () => {
      const scope = new RequestScope();
      const watch = new AbortWatch(scope);
      let fail!: (error: Error) => void;
      const next = new Promise<never>((_, reject) => (fail = reject));
      const raced = watch.race(next);
      scope.abort(new Error('given up'));
      await expect(raced).resolves.toBe(ABORTED);
      fail(new Error('cut off for not reading'));
      watch.dispose();
    });
    expect(unhandled).toEqual([]);
  });

  it('passes each step through while the scope stands, and a disposed watch leaves no listener behind', async () => {
    const scope = new RequestScope();
    const watch = new AbortWatch(scope);
    await expect(watch.race(Promise.resolve(1))).resolves.toBe(1);
    await expect(watch.race(Promise.reject(new Error('feed failed')))).rejects.toThrow('feed failed');
    await expect(watch.race(Promise.resolve(2))).resolves.toBe(2);
    watch.dispose();
    const pending = watch.race(new Promise<never>(() => undefined));
    scope.abort('stop');
    const settled = await Promise.race([pending, new Promise((resolve) => setImmediate(resolve, 'pending'))]);
    expect(settled).toBe('pending');
  });
});
