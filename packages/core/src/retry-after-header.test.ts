import { AgentError, UnavailableError } from './errors.js';
import { parseRetryAfterHeader, withRetryAfterHeader } from './retry-after-header.js';

describe('parseRetryAfterHeader', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');

  it('reads delta-seconds', () => {
    expect(parseRetryAfterHeader('2')).toBe(2000);
    expect(parseRetryAfterHeader(' 0 ')).toBe(0);
    expect(parseRetryAfterHeader(['3', '9'])).toBe(3000);
  });

  it('reads the three HTTP-date forms as the wait until then, 0 once past', () => {
    expect(parseRetryAfterHeader('Wed, 21 Oct 2015 07:28:05 GMT', now)).toBe(5000);
    expect(parseRetryAfterHeader('Wednesday, 21-Oct-15 07:28:10 GMT', now)).toBe(10000);
    expect(parseRetryAfterHeader('Wed Oct 21 07:28:01 2015', now)).toBeGreaterThanOrEqual(0);
    expect(parseRetryAfterHeader('Wed, 21 Oct 2015 07:27:00 GMT', now)).toBe(0);
  });

  it('ignores anything else', () => {
    for (const value of [
      undefined,
      '',
      '-1',
      '1.5',
      'soon',
      '2015-10-21',
      5,
      {},
      'Wed, 99 Foo 2015 07:28:00 GMT',
    ]) {
      expect(parseRetryAfterHeader(value, now)).toBeUndefined();
    }
  });
});

describe('withRetryAfterHeader', () => {
  it('adds retry_after_ms to an error without data or with object data', () => {
    expect(withRetryAfterHeader(new UnavailableError('HTTP 503'), '2').data).toEqual({
      retry_after_ms: 2000,
    });
    const error = new UnavailableError('x', { data: { limit: 'tasks' } });
    expect(withRetryAfterHeader(error, '1')).toBe(error);
    expect(error.data).toEqual({ limit: 'tasks', retry_after_ms: 1000 });
  });

  it('keeps what the error body said, and data that is not an object', () => {
    const said = new UnavailableError('x', { data: { retry_after_ms: 250 } });
    expect(withRetryAfterHeader(said, '30').data).toEqual({ retry_after_ms: 250 });
    const text = new AgentError('INTERNAL', 'x', { data: 'opaque' });
    expect(withRetryAfterHeader(text, '30').data).toBe('opaque');
    expect(withRetryAfterHeader(new UnavailableError('x'), undefined).data).toBeUndefined();
  });
});
