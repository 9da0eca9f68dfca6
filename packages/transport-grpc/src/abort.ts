import { raceAbort } from '@agent/core';

/** Marker resolved by {@link untilAborted} when the signal fired first. */
export const ABORTED: unique symbol = Symbol('aborted');

/**
 * Resolves with the promise's value, or with {@link ABORTED} as soon as the signal aborts. The promise
 * keeps its handlers either way, so a late rejection is never unhandled.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  return raceAbort<T | typeof ABORTED>(promise, signal, () => ABORTED).catch((error: unknown) => {
    if (error === ABORTED) return ABORTED;
    throw error;
  });
}
