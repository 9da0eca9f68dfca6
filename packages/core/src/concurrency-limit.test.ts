import { ConcurrencyLimit, retryAfterMsOf } from './concurrency-limit.js';
import { type AgentError, UnavailableError, ValueError } from './errors.js';

describe('ConcurrencyLimit', () => {
  it('gives at most max slots and refuses the next at once with UNAVAILABLE and retry_after_ms', () => {
    const limit = new ConcurrencyLimit(2, { retryAfterMs: 1500, name: 'tasks' });
    const a = limit.acquire();
    limit.acquire();
    expect(limit.active).toBe(2);
    expect(limit.tryAcquire()).toBeUndefined();
    let refused: unknown;
    try {
      limit.acquire();
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(UnavailableError);
    expect((refused as AgentError).data).toEqual({ retry_after_ms: 1500, limit: 'tasks' });
    expect((refused as AgentError).httpStatus).toBe(503);
    a();
    a(); // a second release gives nothing back twice
    expect(limit.active).toBe(1);
    expect(limit.available).toBe(1);
  });

  it('run() gives the slot back however the work ends, and never queues', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(limit.active).toBe(0);
    let finish!: () => void;
    const running = limit.run(() => new Promise<void>((resolve) => (finish = resolve)));
    await expect(limit.run(() => 'second')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      data: { retry_after_ms: 1000, limit: 'concurrency' },
    });
    finish();
    await running;
    await expect(limit.run(() => 'third')).resolves.toBe('third');
  });

  it('refuses a max that is not a whole number from 1', () => {
    for (const max of [0, -1, 1.5, NaN]) expect(() => new ConcurrencyLimit(max)).toThrow(ValueError);
    expect(() => new ConcurrencyLimit(1, { retryAfterMs: -1 })).toThrow(ValueError);
  });
});

describe('retryAfterMsOf', () => {
  it('reads data.retry_after_ms when it is a non-negative number, rounded up', () => {
    expect(retryAfterMsOf(new UnavailableError('x', { data: { retry_after_ms: 12.2 } }))).toBe(13);
    expect(retryAfterMsOf(new UnavailableError('x', { data: { retry_after_ms: -1 } }))).toBeUndefined();
    expect(retryAfterMsOf(new UnavailableError('x', { data: { retry_after_ms: '5' } }))).toBeUndefined();
    expect(retryAfterMsOf(new UnavailableError('x'))).toBeUndefined();
  });
});
