/**
 * The wire of `POST /tasks/stream`: newline-delimited JSON, one TaskEvent per line. `JSON.stringify`
 * never emits a raw newline, so a line is always one whole event; `curl -N` shows it as it arrives.
 */
import { InternalError, PayloadTooLargeError, type TaskEvent } from '@agent/core';
import { isRecord } from '@agent/core/internal';

export const EVENT_STREAM_TYPE = 'application/x-ndjson';

export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': `${EVENT_STREAM_TYPE}; charset=utf-8`,
  'cache-control': 'no-store',
};

const NEWLINE = 0x0a;

export function encodeEvent(event: TaskEvent): string {
  return `${JSON.stringify(event)}\n`;
}

/**
 * Splits a byte stream into TaskEvents. A line longer than `maxEventBytes` is refused as it grows,
 * so a broken or hostile server cannot make the client buffer without bound.
 */
export class EventDecoder {
  private parts: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly maxEventBytes: number,
    private readonly source: string,
  ) {}

  /** The events completed by `chunk`, in order. */
  push(chunk: Buffer): TaskEvent[] {
    const events: TaskEvent[] = [];
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      this.append(chunk.subarray(start, end));
      const event = this.takeLine();
      if (event) events.push(event);
      start = end + 1;
    }
    this.append(chunk.subarray(start));
    return events;
  }

  /** The last event, when the stream ended without a newline after it. */
  end(): TaskEvent | undefined {
    return this.takeLine();
  }

  private append(part: Buffer): void {
    if (part.length === 0) return;
    this.size += part.length;
    if (this.size > this.maxEventBytes) {
      throw new PayloadTooLargeError(
        `An event in the stream from ${this.source} exceeds maxResponseBytes (${this.maxEventBytes} bytes)`,
        { data: { max_response_bytes: this.maxEventBytes } },
      );
    }
    this.parts.push(part);
  }

  private takeLine(): TaskEvent | undefined {
    const text = Buffer.concat(this.parts, this.size).toString('utf8').trim();
    this.parts = [];
    this.size = 0;
    if (text === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new InternalError(`Malformed JSON in the stream from ${this.source}`, { cause: error });
    }
    if (!isRecord(value) || typeof value.type !== 'string') {
      throw new InternalError(`The stream from ${this.source} carried something that is not a TaskEvent`);
    }
    return value as unknown as TaskEvent;
  }
}
