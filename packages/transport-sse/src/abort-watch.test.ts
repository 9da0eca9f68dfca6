import { ABORTED, AbortWatch } from './server-adapter-stream.js';

describe('AbortWatch (the SSE stream loop racing each next() against the request)', () => {
  it('a next() that fails after the request was given up on does not go unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const controller = new AbortController();
      const watch = new AbortWatch(controller.signal);
      controller.abort(new Error('given up'));
      // The feed's next() rejects with the reason the stream was cut off, after the race is decided.
      const next = Promise.reject(new Error('cut off for not reading'));
      await expect(watch.race(next)).resolves.toBe(ABORTED);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      watch.dispose();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('an abort while next() is pending resolves the race, and the late failure stays handled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const controller = new AbortController();
      const watch = new AbortWatch(controller.signal);
      let fail!: (error: Error) => void;
      const next = new Promise<never>((_, reject) => (fail = reject));
      const raced = watch.race(next);
      controller.abort(new Error('given up'));
      await expect(raced).resolves.toBe(ABORTED);
      fail(new Error('cut off for not reading'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      watch.dispose();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
