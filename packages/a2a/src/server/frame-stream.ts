/**
 * An A2A stream over a pipeline feed: the first event is awaited before the stream is handed out,
 * so a failure before it is still a plain error answer; after that, frames until the final event.
 */
import { type TaskEvent, isFinalEvent } from '@agent/core';
import type { EventFeed } from '@agent/server';
import type { A2AStreamResponse } from '../protojson.js';
import type { A2AStreamEncoder } from '../stream-codec.js';

export class FrameStream implements AsyncIterable<A2AStreamResponse> {
  private closed = false;

  private constructor(
    private readonly head: A2AStreamResponse[],
    private readonly feed: EventFeed | undefined,
    private readonly encoder: A2AStreamEncoder | undefined,
  ) {}

  /** Waits for the feed's first event (rejecting with the wire error when it fails) and starts with the Task frame. */
  static async open(feed: EventFeed, encoder: A2AStreamEncoder): Promise<FrameStream> {
    const first = await feed.next();
    const head: A2AStreamResponse[] = [encoder.first()];
    let rest: EventFeed | undefined = feed;
    if (first.done) rest = undefined;
    else {
      head.push(...encoder.encode(first.value));
      if (isFinalEvent(first.value)) {
        rest = undefined;
        await feed.return();
      }
    }
    return new FrameStream(head, rest, encoder);
  }

  /**
   * The Task frame, then the feed's events, without waiting for the first of them: for a feed that
   * cannot fail before its first event (a subscription to a task found running).
   */
  static following(feed: EventFeed, encoder: A2AStreamEncoder): FrameStream {
    return new FrameStream([encoder.first()], feed, encoder);
  }

  /** A stream of these frames alone (a message-only reply). */
  static of(frames: A2AStreamResponse[]): FrameStream {
    return new FrameStream(frames, undefined, undefined);
  }

  /** A stream of the Task frame alone (a task waiting for input has nothing live to follow). */
  static only(encoder: A2AStreamEncoder): FrameStream {
    return new FrameStream([encoder.first()], undefined, encoder);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<A2AStreamResponse> {
    try {
      for (const frame of this.head) yield frame;
      const { feed, encoder } = this;
      if (!feed || !encoder) return;
      while (!this.closed) {
        const step: IteratorResult<TaskEvent> = await feed.next();
        if (step.done) return;
        const frames = encoder.encode(step.value);
        for (const frame of frames) yield frame;
        if (isFinalEvent(step.value)) return;
      }
    } finally {
      await this.close();
    }
  }

  /** Detaches from the feed: the task runs on. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.feed?.return();
  }
}
