import { InternalError, PayloadTooLargeError, type TaskEvent } from '@agent/core';
import { encodeSseFrame } from '@agent/server/node';
import { EventStreamParser, type SseFrame } from '@agent/server/node';
import { EventDecoder, encodeEvent } from './codec.js';

const event = (text: string, sequence?: number): TaskEvent => ({
  type: 'llm.stream',
  task_id: 't1',
  delta: text,
  timestamp: '2026-01-01T00:00:00Z',
  ...(sequence === undefined ? {} : { sequence }),
});

/** Feeds `bytes` to a fresh parser in pieces of `size` bytes. */
function parseInPieces(bytes: Buffer, size: number, max = 1024): SseFrame[] {
  const parser = new EventStreamParser(max, 'test');
  const frames: SseFrame[] = [];
  for (let i = 0; i < bytes.length; i += size) frames.push(...parser.push(bytes.subarray(i, i + size)));
  return frames;
}

function parse(text: string, max = 1024): SseFrame[] {
  return new EventStreamParser(max, 'test').push(Buffer.from(text));
}

describe('the frame encoder', () => {
  it('writes id: (the sequence), event: (the TaskEvent type) and the bare TaskEvent JSON on one data: line', () => {
    const numbered = event('two\nlines', 3);
    expect(encodeEvent(numbered)).toBe(`id: 3\nevent: llm.stream\ndata: ${JSON.stringify(numbered)}\n\n`);
  });

  it('gives an event without a sequence id 0, the position that replays from the start', () => {
    expect(encodeEvent(event('x'))).toMatch(/^id: 0\n/);
  });

  it('is the shared server frame, and keeps a line break in an event name from forging a field', () => {
    expect(encodeEvent(event('x', 1))).toBe(encodeSseFrame(1, 'llm.stream', event('x', 1)));
    const forged = encodeSseFrame(1, 'evil\ndata: {}\r', { ok: true });
    expect(forged).toBe('id: 1\nevent: evil data: {} \ndata: {"ok":true}\n\n');
    expect(parse(forged)).toEqual([{ id: '1', event: 'evil data: {} ', data: '{"ok":true}' }]);
  });
});

describe('the event-stream parser', () => {
  it('reads the frames the encoder writes', () => {
    expect(parse(encodeEvent(event('a', 1)) + encodeEvent(event('b', 2)))).toEqual([
      { id: '1', event: 'llm.stream', data: JSON.stringify(event('a', 1)) },
      { id: '2', event: 'llm.stream', data: JSON.stringify(event('b', 2)) },
    ]);
  });

  it.each([
    ['\\n', '\n'],
    ['\\r\\n', '\r\n'],
    ['\\r', '\r'],
  ])('ends lines on %s', (_name, eol) => {
    const text = ['id: 7', 'event: e', 'data: one', 'data: two', '', ''].join(eol);
    expect(parse(text)).toEqual([{ id: '7', event: 'e', data: 'one\ntwo' }]);
  });

  it('takes mixed line ends in one stream', () => {
    expect(parse('data: a\r\n\ndata: b\r\rdata: c\n\r')).toEqual([
      { id: '', event: 'message', data: 'a' },
      { id: '', event: 'message', data: 'b' },
      { id: '', event: 'message', data: 'c' },
    ]);
  });

  it('gives the same frames whatever the chunk boundaries, inside \\r\\n and multi-byte characters too', () => {
    const text =
      '\ufeffid: 1\r\nevent: é\r\ndata: héllo ✓ 😀\r\ndata:second\r\n\r\n' +
      ': a comment\r\rid: 2\rdata: {"x":"ü"}\r\r' +
      'data: last\n\n';
    const bytes = Buffer.from(text);
    const whole = parseInPieces(bytes, bytes.length);
    expect(whole).toEqual([
      { id: '1', event: 'é', data: 'héllo ✓ 😀\nsecond' },
      { id: '2', event: 'message', data: '{"x":"ü"}' },
      { id: '2', event: 'message', data: 'last' },
    ]);
    for (let size = 1; size < 8; size++) expect(parseInPieces(bytes, size)).toEqual(whole);
    // Every single split point, so a cut between \r and \n or inside 😀 is covered.
    for (let cut = 1; cut < bytes.length; cut++) {
      const parser = new EventStreamParser(1024, 'test');
      expect([...parser.push(bytes.subarray(0, cut)), ...parser.push(bytes.subarray(cut))]).toEqual(whole);
    }
  });

  it('ignores comments, retry:, unknown fields and blank lines without data', () => {
    expect(parse(': ping\n\nretry: 10\nfoo: bar\n\nevent: lonely\n\ndata: x\n\n')).toEqual([
      { id: '', event: 'message', data: 'x' },
    ]);
  });

  it('reads fields as the format defines them: one optional space, no colon, empty data', () => {
    expect(parse('data:  two spaces\ndata\ndata:\nevent:e\n\n')).toEqual([
      { id: '', event: 'e', data: ' two spaces\n\n' },
    ]);
  });

  it('carries the last event id over, and ignores an id holding NUL', () => {
    expect(parse('id: 4\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n')).toEqual([
      { id: '4', event: 'message', data: 'a' },
      { id: '4', event: 'message', data: 'b' },
      { id: '4', event: 'message', data: 'c' },
      { id: '', event: 'message', data: 'd' },
    ]);
  });

  it('strips a byte order mark only at the start of the stream', () => {
    expect(parse('\ufeffdata: a\n\n')).toEqual([{ id: '', event: 'message', data: 'a' }]);
    expect(parse('data: a\n\n\ufeffdata: b\n\n')).toEqual([{ id: '', event: 'message', data: 'a' }]);
  });

  it('drops an event the stream ends in the middle of', () => {
    const parser = new EventStreamParser(1024, 'test');
    expect(parser.push(Buffer.from('data: a\n\ndata: unfinished\n'))).toEqual([
      { id: '', event: 'message', data: 'a' },
    ]);
  });

  it('refuses an event over the limit while it grows, in one line or many', () => {
    const long = new EventStreamParser(64, 'test');
    long.push(Buffer.from(`data: ${'x'.repeat(50)}`));
    expect(() => long.push(Buffer.alloc(10, 'x'))).toThrow(PayloadTooLargeError);
    const many = new EventStreamParser(64, 'test');
    for (let i = 0; i < 5; i++) many.push(Buffer.from('data: 123456\n'));
    expect(() => many.push(Buffer.from('data: 123456\n'))).toThrow(PayloadTooLargeError);
    const endless = new EventStreamParser(64, 'test');
    expect(() => endless.push(Buffer.alloc(65, ':'))).toThrow(PayloadTooLargeError);
  });

  it('counts each event on its own: many events under the limit pass', () => {
    const parser = new EventStreamParser(32, 'test');
    for (let i = 0; i < 100; i++)
      expect(parser.push(Buffer.from(`id: ${i}\ndata: 0123456789\n\n`))).toHaveLength(1);
  });
});

describe('the TaskEvent decoder', () => {
  it('decodes the frames of a stream split anywhere', () => {
    const bytes = Buffer.from(encodeEvent(event('héllo ✓')) + ': ping\n\n' + encodeEvent(event('second')));
    const decoder = new EventDecoder(1024, 'test');
    const events: TaskEvent[] = [];
    for (let i = 0; i < bytes.length; i += 3) events.push(...decoder.push(bytes.subarray(i, i + 3)));
    expect(events).toEqual([event('héllo ✓'), event('second')]);
  });

  it('refuses a frame that is not a TaskEvent, or not JSON', () => {
    expect(() => new EventDecoder(1024, 'test').push(Buffer.from('data: {"no":"type"}\n\n'))).toThrow(
      InternalError,
    );
    expect(() => new EventDecoder(1024, 'test').push(Buffer.from('data: {oops\n\n'))).toThrow(InternalError);
  });
});
