import { InternalError, PayloadTooLargeError, type TaskEvent } from '@agent/core';
import { EventDecoder, encodeEvent } from './codec.js';

const event = (text: string): TaskEvent => ({
  type: 'llm.stream',
  task_id: 't1',
  delta: text,
  timestamp: '2026-01-01T00:00:00Z',
});

describe('the event stream codec', () => {
  it('encodes one event per line, whatever newlines its text holds', () => {
    const line = encodeEvent(event('two\nlines'));
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
  });

  it('decodes events split anywhere, multi-byte characters included', () => {
    const bytes = Buffer.from(encodeEvent(event('héllo ✓')) + '\n' + encodeEvent(event('second')));
    const decoder = new EventDecoder(1024, 'test');
    const events: TaskEvent[] = [];
    for (let i = 0; i < bytes.length; i += 3) events.push(...decoder.push(bytes.subarray(i, i + 3)));
    expect(decoder.end()).toBeUndefined();
    expect(events).toEqual([event('héllo ✓'), event('second')]);
  });

  it('takes a last event that has no newline after it', () => {
    const decoder = new EventDecoder(1024, 'test');
    expect(decoder.push(Buffer.from(JSON.stringify(event('tail'))))).toEqual([]);
    expect(decoder.end()).toEqual(event('tail'));
  });

  it('refuses a line that is not a TaskEvent, or not JSON', () => {
    expect(() => new EventDecoder(1024, 'test').push(Buffer.from('{"no":"type"}\n'))).toThrow(InternalError);
    expect(() => new EventDecoder(1024, 'test').push(Buffer.from('{oops\n'))).toThrow(InternalError);
  });

  it('refuses a line longer than the limit while it grows', () => {
    const decoder = new EventDecoder(64, 'test');
    decoder.push(Buffer.alloc(60, 'x'));
    expect(() => decoder.push(Buffer.alloc(10, 'x'))).toThrow(PayloadTooLargeError);
  });
});
