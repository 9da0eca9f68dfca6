/**
 * The wire of `POST /tasks/stream` and `GET /tasks/{id}/events`: `text/event-stream`, one frame per
 * TaskEvent (`id:` its `sequence`, `event:` its type, `data:` its JSON, no envelope). The frame is the
 * one `@agent/server/node` encodes for every transport, so any SSE client reads the stream as it is,
 * and the `Last-Event-ID` an EventSource reconnects with is the sequence to resume after.
 */
import { InternalError, type TaskEvent } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { EventStreamParser, encodeSseFrame, SSE_CONTENT_TYPE, type SseFrame } from '@agent/server/node';

export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': `${SSE_CONTENT_TYPE}; charset=utf-8`,
  'cache-control': 'no-store',
  // Reverse proxies (nginx) buffer responses unless told not to.
  'x-accel-buffering': 'no',
};

/**
 * The frame of one event, its id the event's `sequence`. The pipeline numbers every event it sends;
 * one without a number gets id 0, which resumes from the start: a repeat, never a gap.
 */
export function encodeEvent(event: TaskEvent): string {
  return encodeSseFrame(event.sequence ?? 0, event.type, event);
}

/** The TaskEvents of a `text/event-stream` byte stream of this wire. */
export class EventDecoder {
  private readonly parser: EventStreamParser;

  constructor(
    maxEventBytes: number,
    private readonly source: string,
  ) {
    this.parser = new EventStreamParser(maxEventBytes, source);
  }

  /** The events completed by `chunk`, in order. */
  push(chunk: Buffer): TaskEvent[] {
    return this.parser.push(chunk).map((frame) => this.taskEvent(frame));
  }

  private taskEvent(frame: SseFrame): TaskEvent {
    let value: unknown;
    try {
      value = JSON.parse(frame.data);
    } catch (error) {
      throw new InternalError(
        `Malformed JSON in frame ${frame.id || '?'} of the stream from ${this.source}`,
        {
          cause: error,
        },
      );
    }
    if (!isRecord(value) || typeof value.type !== 'string') {
      throw new InternalError(
        `Frame ${frame.id || '?'} of the stream from ${this.source} carried something that is not a TaskEvent`,
      );
    }
    return value as unknown as TaskEvent;
  }
}
