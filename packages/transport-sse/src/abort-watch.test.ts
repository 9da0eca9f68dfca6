import { ABORTED, AbortWatch } from './server-adapter-stream.js';

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

describe('AbortWatch (the SSE stream loop racing each next() against the request)', () => {
  it('a next() that fails after the request was given up on does not go unhandled', async () => {
    const unhandled = await unhandledDuring(async () => {
      const controller = new AbortController();
      const watch = new AbortWatch(controller.signal);
      controller.abort(new Error('given up'));
      // The feed's next() rejects with the reason the stream was cut off, after the race is decided.
      const next = Promise.reject(new Error('cut off for not reading'));
      await expect(watch.race(next)).resolves.toBe(ABORTED);
      watch.dispose();
    });
    expect(unhandled).toEqual([]);
  });

  it('an abort while next() is pending resolves the race, and the late failure stays handled', async () => {
    const unhandled = await unhandledDuring(async () => {
      const controller = new AbortController();
      const watch = new AbortWatch(controller.signal);
      let fail!: (error: Error) => void;
      const next = new Promise<never>((_, reject) => (fail = reject));
      const raced = watch.race(next);
      controller.abort(new Error('given up'));
      await expect(raced).resolves.toBe(ABORTED);
      fail(new Error('cut off for not reading'));
      watch.dispose();
    });
    expect(unhandled).toEqual([]);
  });
});
