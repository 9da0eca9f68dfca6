import { UnavailableError, type TaskEvent } from '@agent/core';
import type { CallOptions, ClientConnection, OutgoingFrame } from './client-connection.js';

/**
 * A stream whose consumer fell more than `maxQueuedEvents` events behind. Only that stream fails:
 * the server is told to stop sending it (its task is not canceled), and the other calls on the
 * same socket go on.
 */
export class SlowConsumerError extends UnavailableError {}

export interface StreamOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** Unread events a stream may hold; a stream still further behind at the next event-loop turn fails. */
  maxQueuedEvents: number;
}

/**
 * Runs one streaming call on a shared socket and yields its events. Each stream has its own bounded
 * buffer: the socket is never paused for one consumer, so one slow consumer cannot hold the other
 * streams and unary calls of its socket. Leaving the loop early tells the server to stop the call
 * (its handler's signal aborts; the task is not canceled).
 */
export async function* streamEvents(
  connection: ClientConnection,
  frame: OutgoingFrame,
  options: StreamOptions,
): AsyncGenerator<TaskEvent> {
  const limit = options.maxQueuedEvents;
  const queue: TaskEvent[] = [];
  let finished = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  let checking = false;
  // A burst that arrived in one read is queued at once; the consumer is behind only if it has not
  // taken it by the next turn of the event loop. (Handing the consumer one frame per turn instead
  // would halve the socket's throughput.)
  const check = (): void => {
    checking = false;
    if (finished || queue.length <= limit) return;
    queue.length = limit;
    connection.abortCall(
      call.id,
      new SlowConsumerError(
        `The stream's consumer fell more than ${limit} events behind (maxQueuedEvents); the stream was stopped, its task was not canceled`,
        { data: { max_queued_events: limit } },
      ),
    );
  };
  const callOptions: CallOptions = {
    onEvent: (event) => {
      queue.push(event);
      if (queue.length > limit && !checking) {
        checking = true;
        setImmediate(check);
      }
      wake?.();
    },
  };
  if (options.signal) callOptions.signal = options.signal;
  if (options.timeoutMs !== undefined) callOptions.timeoutMs = options.timeoutMs;
  const call = connection.call(frame, callOptions);
  call.result.then(
    () => {
      finished = true;
      wake?.();
    },
    (error: unknown) => {
      failure = error;
      finished = true;
      wake?.();
    },
  );
  try {
    for (;;) {
      const event = queue.shift();
      if (event) {
        yield event;
        continue;
      }
      if (failure !== undefined) throw failure;
      if (finished) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    if (!finished)
      connection.abortCall(call.id, new UnavailableError('The consumer stopped reading the stream'));
  }
}
