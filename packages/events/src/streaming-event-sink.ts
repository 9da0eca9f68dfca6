/**
 * StreamingEventSink: live subscribers as AsyncIterables, with a bounded replay buffer so a client
 * that reconnects (SSE `Last-Event-ID`) resumes after the last sequence it saw.
 */
import { UnavailableError, ValueError } from '@agent/core';
import { checkOptionNames, numberOption, optionNames } from '@agent/core/internal';
import { SequencedEventSink } from './event-sink.js';
import type { RunEvent } from './run-event.js';

export interface StreamingEventSinkOptions {
  /** Most recent events kept for replay to new subscribers. Default `1000`. */
  bufferSize?: number;
}

export interface SubscribeOptions {
  /** Yield only events with a larger sequence (the last one the client saw). Default: only new events. */
  since?: number;
  /** Ends the iteration (without an error) when aborted, e.g. on client disconnect. */
  signal?: AbortSignal;
  /** Most events waiting for a slow consumer before its iteration fails. Default `1000`. */
  maxQueue?: number;
  /** End after yielding the run's final `task.status`. Default `false`. */
  untilFinal?: boolean;
}

interface Subscriber {
  queue: RunEvent[];
  failure: Error | null;
  wake: (() => void) | null;
  maxQueue: number;
}

export class StreamingEventSink extends SequencedEventSink {
  readonly #buffer: RunEvent[] = [];
  readonly #bufferSize: number;
  readonly #subscribers = new Set<Subscriber>();
  #closed = false;

  constructor(options: StreamingEventSinkOptions = {}) {
    super();
    checkOptionNames(
      'StreamingEventSink',
      options,
      optionNames<StreamingEventSinkOptions>({ bufferSize: true }),
    );
    this.#bufferSize = numberOption('bufferSize', options.bufferSize ?? 1000, 1000, {
      min: 1,
      integer: true,
    });
  }

  protected store(event: RunEvent): void {
    if (this.#closed) throw new UnavailableError('The event stream is closed');
    this.#buffer.push(event);
    if (this.#buffer.length > this.#bufferSize) this.#buffer.shift();
    for (const subscriber of this.#subscribers) {
      subscriber.queue.push(event);
      if (subscriber.queue.length > subscriber.maxQueue) {
        // Never buffer without bound for a slow reader: it fails and may resubscribe with `since`.
        subscriber.failure = new UnavailableError(
          `Subscriber fell more than ${subscriber.maxQueue} events behind`,
          {
            data: { resume_after: subscriber.queue[0].sequence - 1 },
          },
        );
        subscriber.queue.length = 0;
        this.#subscribers.delete(subscriber);
      }
      subscriber.wake?.();
    }
  }

  /** Number of live subscribers. */
  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /**
   * Buffered events after `since`, then live ones, in sequence order.
   * @throws ValueError for bad options; the iteration fails with UnavailableError when `since` is
   * older than the buffer (`data.oldest_sequence`) or the consumer falls behind (`data.resume_after`).
   */
  subscribe(options: SubscribeOptions = {}): AsyncIterable<RunEvent> {
    const maxQueue = numberOption('maxQueue', options.maxQueue ?? 1000, 1000, { min: 1, integer: true });
    const since = options.since;
    if (since !== undefined && (!Number.isInteger(since) || since < 0))
      throw new ValueError('since must be a non-negative integer');
    const subscriber: Subscriber = { queue: [], failure: null, wake: null, maxQueue };
    if (since !== undefined) {
      const oldest = this.#buffer[0]?.sequence ?? this.nextSequence;
      if (since + 1 < oldest) {
        subscriber.failure = new UnavailableError(
          `Events after ${since} are no longer buffered; the oldest is ${oldest}`,
          {
            data: { oldest_sequence: oldest },
          },
        );
      } else {
        subscriber.queue.push(...this.#buffer.filter((event) => event.sequence > since));
      }
    }
    if (!this.#closed && subscriber.failure === null) this.#subscribers.add(subscriber);
    return this.#iterate(subscriber, options);
  }

  async *#iterate(subscriber: Subscriber, options: SubscribeOptions): AsyncGenerator<RunEvent> {
    const { signal } = options;
    const onAbort = () => subscriber.wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      while (!signal?.aborted) {
        const event = subscriber.queue.shift();
        if (event) {
          yield event;
          if (options.untilFinal && event.final) return;
          continue;
        }
        if (subscriber.failure) throw subscriber.failure;
        if (!this.#subscribers.has(subscriber)) return;
        await new Promise<void>((resolve) => {
          subscriber.wake = resolve;
        });
        subscriber.wake = null;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#subscribers.delete(subscriber);
    }
  }

  /** Ends every subscription after it drains; later emits are rejected. */
  close(): void {
    this.#closed = true;
    const subscribers = [...this.#subscribers];
    this.#subscribers.clear();
    for (const subscriber of subscribers) subscriber.wake?.();
  }
}
