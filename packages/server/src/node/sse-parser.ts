/**
 * The client side of the `text/event-stream` frames `encodeSseFrame` writes, for every client that
 * reads one (the HTTP transport's streams, the A2A client's). Parsed here rather than by a parser
 * library because an event over the caller's byte limit must be refused while it grows, before it is
 * buffered.
 */
import { PayloadTooLargeError } from '@agent/core';

/** One dispatched event of a `text/event-stream`, as the event-stream parsing rules define it. */
export interface SseFrame {
  /** The last event ID seen on the stream so far (it carries over to later frames). */
  id: string;
  /** `message` when the frame named none. */
  event: string;
  /** The `data:` lines, joined by `\n`. */
  data: string;
}

const LF = 0x0a;
const CR = 0x0d;
const BOM = '\ufeff';

/**
 * Splits a `text/event-stream` byte stream into frames: `\n`, `\r\n` and `\r` line ends, multi-line
 * `data:`, comments, `id:` and `event:`, with chunk boundaries anywhere. Lines are split on bytes and
 * decoded whole: a line end is ASCII, so it never falls inside a multi-byte character.
 *
 * Everything since the end of the previous event counts against `maxEventBytes` as it arrives, so a
 * broken or hostile server cannot make the client buffer without bound. An event the stream ends in
 * the middle of (no blank line after it) is dropped, as the format prescribes.
 */
export class EventStreamParser {
  private line: Buffer[] = [];
  private lineBytes = 0;
  private eventBytes = 0;
  private data: string[] = [];
  private event = '';
  private lastId = '';
  /** The previous chunk ended on `\r`: a `\n` opening this one belongs to the same line end. */
  private afterCR = false;
  private firstLine = true;

  constructor(
    private readonly maxEventBytes: number,
    private readonly source: string,
  ) {}

  /** The frames completed by `chunk`, in order. */
  push(chunk: Buffer): SseFrame[] {
    const frames: SseFrame[] = [];
    let start = 0;
    if (this.afterCR && chunk.length > 0) {
      this.afterCR = false;
      if (chunk[0] === LF) start = 1;
    }
    let lf = chunk.indexOf(LF, start);
    let cr = chunk.indexOf(CR, start);
    while (lf !== -1 || cr !== -1) {
      const end = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      this.append(chunk.subarray(start, end));
      this.takeLine(frames);
      start = end + 1;
      if (end === cr) {
        if (start === chunk.length) this.afterCR = true;
        else if (chunk[start] === LF) start++;
      }
      if (lf !== -1 && lf < start) lf = chunk.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
    }
    this.append(chunk.subarray(start));
    return frames;
  }

  private append(part: Buffer): void {
    if (part.length === 0) return;
    this.lineBytes += part.length;
    if (this.eventBytes + this.lineBytes > this.maxEventBytes) {
      throw new PayloadTooLargeError(
        `An event in the stream from ${this.source} exceeds maxResponseBytes (${this.maxEventBytes} bytes)`,
        { data: { max_response_bytes: this.maxEventBytes } },
      );
    }
    this.line.push(part);
  }

  private takeLine(frames: SseFrame[]): void {
    let line =
      this.line.length === 1 ? this.line[0]!.toString('utf8') : Buffer.concat(this.line).toString('utf8');
    this.eventBytes += this.lineBytes;
    this.line = [];
    this.lineBytes = 0;
    if (this.firstLine) {
      this.firstLine = false;
      if (line.startsWith(BOM)) line = line.slice(1);
    }
    if (line === '') {
      this.dispatch(frames);
      return;
    }
    const colon = line.indexOf(':');
    if (colon === 0) return;
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    // `retry:` and unknown fields are ignored: this client never reconnects by itself.
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
    }
  }

  private dispatch(frames: SseFrame[]): void {
    if (this.data.length > 0) {
      frames.push({ id: this.lastId, event: this.event || 'message', data: this.data.join('\n') });
    }
    this.data = [];
    this.event = '';
    this.eventBytes = 0;
  }
}
