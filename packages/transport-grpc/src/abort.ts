/** Marker resolved by {@link untilAborted} when the signal fired first. */
export const ABORTED: unique symbol = Symbol('aborted');

/**
 * Resolves with the promise's value, or with {@link ABORTED} as soon as the signal aborts. The promise
 * keeps its handlers either way, so a late rejection is never unhandled.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
