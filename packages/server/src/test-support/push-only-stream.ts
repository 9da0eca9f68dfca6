import type { TaskEvent } from '@agent/core';
import { offerPush, type AttachReceiver } from '@agent/core/internal';

/**
 * A handler stream that only pushes, as the runtime's `Agent` offers to: `attach` gets the receiver
 * a reader attaches. Pulling it fails, so a test sees at once a reader that pulls instead.
 */
export function pushOnlyStream(attach: AttachReceiver<TaskEvent>): AsyncIterableIterator<TaskEvent> {
  const iterator: AsyncIterableIterator<TaskEvent> = {
    next: () => Promise.reject(new Error('this stream pushes its events')),
    [Symbol.asyncIterator]: () => iterator,
  };
  return offerPush<AsyncIterableIterator<TaskEvent>, TaskEvent>(iterator, attach);
}
