import { ResourceExhaustedError, ValueError } from '@agent/core';
import { RateLimiter } from './rate-limit.js';

/** A clock the test moves by hand: nothing here depends on real time. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let at = 0;
  return { now: () => at, advance: (ms) => (at += ms) };
}

describe('RateLimiter', () => {
  it('lets a principal make `burst` calls at once, then one per 1/perSecond', () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ perSecond: 2, burst: 3, now: clock.now });
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 0]);
    expect(limiter.take('a')).toBe(500);
    clock.advance(250);
    expect(limiter.take('a')).toBe(250);
    clock.advance(250);
    expect(limiter.take('a')).toBe(0);
    // Another principal has a bucket of its own.
    expect(limiter.take('b')).toBe(0);
  });

  it('refuses with RESOURCE_EXHAUSTED (429) carrying retry_after_ms', () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ perSecond: 1, burst: 1, now: clock.now });
    limiter.admit('a');
    let refused: unknown;
    try {
      limiter.admit('a');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ResourceExhaustedError);
    expect((refused as ResourceExhaustedError).httpStatus).toBe(429);
    expect((refused as ResourceExhaustedError).data).toEqual({ retry_after_ms: 1000, limit: 'rate' });
  });

  it('refills no further than burst, and defaults burst to perSecond rounded up', () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ perSecond: 1.5, now: clock.now });
    expect(limiter.burst).toBe(2);
    clock.advance(60_000);
    expect([limiter.take('a'), limiter.take('a')]).toEqual([0, 0]);
    expect(limiter.take('a')).toBeGreaterThan(0);
  });

  it('keeps at most maxPrincipals buckets, forgetting the least recently seen', () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ perSecond: 1, burst: 1, maxPrincipals: 2, now: clock.now });
    limiter.take('a');
    limiter.take('b');
    limiter.take('a');
    limiter.take('c');
    expect(limiter.size).toBe(2);
    // `a` was kept (still empty); `b` was forgotten, so it starts full again.
    expect(limiter.take('a')).toBeGreaterThan(0);
    expect(limiter.take('b')).toBe(0);
  });

  it('refuses invalid settings with a ValueError naming rateLimit', () => {
    for (const options of [
      { perSecond: 0 },
      { perSecond: -1 },
      { perSecond: 1, burst: 0 },
      { perSecond: 1, extra: 1 },
    ]) {
      expect(() => new RateLimiter(options as never)).toThrow(ValueError);
    }
  });
});
