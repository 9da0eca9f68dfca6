import { formatTraceparent, parseTraceparent, traceIdOf } from './trace-context.js';

const VALID = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('traceparent', () => {
  it('reads a valid header and writes it back the same', () => {
    const parsed = parseTraceparent(VALID);
    expect(parsed).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      flags: 1,
    });
    expect(formatTraceparent(parsed!)).toBe(VALID);
    expect(traceIdOf({ traceparent: VALID })).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traceIdOf({ traceparent: [VALID, 'x'] })).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it('ignores what the W3C rules say to ignore', () => {
    for (const bad of [
      undefined,
      42,
      '',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      `${VALID}-extra`,
      'x'.repeat(600),
    ]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
    // A later version may add fields after the flags.
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what')).toBeDefined();
    expect(traceIdOf({})).toBeUndefined();
  });
});
