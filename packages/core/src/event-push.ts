/**
 * Where a stream that can push delivers its events: the one reader that attached to it.
 *
 * A pulled stream costs its reader a promise, an iterator result and a turn of the microtask queue
 * per event, and while its producer is idle the reader's pending `next()` (with everything chained
 * to it) is kept alive and copied by every young-generation collection. A producer that pushes
 * calls {@link EventReceiver.push} from inside its own emit instead, and waits only when the reader
 * asks it to.
 */
export interface EventReceiver<T> {
  /**
   * Takes the next event. Undefined when the producer may go on at once, else a promise the
   * producer waits for before its next event (back-pressure); it never rejects.
   */
  push(event: T): Promise<void> | undefined;
  /** Nothing comes after the events pushed so far. */
  end(): void;
}

/**
 * Starts delivering the stream's events to `receiver`, in place of a first `next()`: the iterator
 * is not read afterwards. Throws where that `next()` would have rejected (the stream cannot start).
 */
export type AttachReceiver<T> = (receiver: EventReceiver<T>) => void;

const PUSHES: unique symbol = Symbol('agent.pushesEvents');

interface Pushing {
  [PUSHES]?: AttachReceiver<unknown>;
}

/**
 * Offers `attach` on `iterator` as the way to read it by push. Only the producer knows it can push,
 * so it is an opt-in brand on the iterator; a reader that does not look for it pulls as usual.
 */
export function offerPush<I extends object, T>(iterator: I, attach: AttachReceiver<T>): I {
  (iterator as Pushing)[PUSHES] = attach as AttachReceiver<unknown>;
  return iterator;
}

/** The attach function {@link offerPush} put on `iterator`, or undefined when it only pulls. */
export function pushOf<T>(iterator: unknown): AttachReceiver<T> | undefined {
  if (typeof iterator !== 'object' || iterator === null) return undefined;
  const attach = (iterator as Pushing)[PUSHES];
  return typeof attach === 'function' ? (attach as AttachReceiver<T>) : undefined;
}
