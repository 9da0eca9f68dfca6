/**
 * Marks an event stream whose every event is a fresh object that its producer keeps no reference
 * to, once yielded: the consumer may then add to an event (its `sequence`) instead of copying it.
 * Only the producer can know this, so it is an opt-in brand on the iterator, never inferred.
 */
const HANDED_OVER: unique symbol = Symbol('agent.handedOverEvents');

interface Branded {
  [HANDED_OVER]?: true;
}

/** Brands `iterator` as handing its events over (see above) and returns it. */
export function handOverEvents<T extends object>(iterator: T): T {
  (iterator as Branded)[HANDED_OVER] = true;
  return iterator;
}

/** True when `iterator` was branded by {@link handOverEvents}. */
export function handsOverEvents(iterator: unknown): boolean {
  return typeof iterator === 'object' && iterator !== null && (iterator as Branded)[HANDED_OVER] === true;
}
