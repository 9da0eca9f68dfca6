import { raceAbort, sleep } from './internal.js';

describe('raceAbort', () => {
  it('settles with the work when the signal stays quiet', async () => {
    await expect(raceAbort(Promise.resolve(5), new AbortController().signal)).resolves.toBe(5);
    await expect(raceAbort(Promise.reject(new Error('x')), new AbortController().signal)).rejects.toThrow(
      'x',
    );
  });
  it('rejects with the reason, or the mapped error, when the signal aborts first', async () => {
    const controller = new AbortController();
    const never = new Promise<number>(() => undefined);
    const raced = raceAbort(never, controller.signal);
    const mapped = raceAbort(never, controller.signal, () => new RangeError('mapped'));
    controller.abort('why');
    await expect(raced).rejects.toBe('why');
    await expect(mapped).rejects.toBeInstanceOf(RangeError);
  });
  it('absorbs a late rejection of work it stopped waiting for', async () => {
    const controller = new AbortController();
    controller.abort();
    let fail!: (e: Error) => void;
    const work = new Promise<number>((_, reject) => (fail = reject));
    await expect(raceAbort(work, controller.signal)).rejects.toBeDefined();
    fail(new Error('late'));
    await new Promise((r) => setImmediate(r));
  });
});

describe('sleep', () => {
  it('sleeps, and stops sleeping on abort', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});
