/**
 * Racing work against an AbortSignal: one implementation for every package (transports, runtime,
 * client). None of these stops the work itself — whoever owns it got the signal too; they only
 * stop waiting for it, and absorb its late rejection so it never surfaces as unhandled.
 */

/** Turns an aborted signal into the error a waiter rejects with. */
export type AbortErrorFactory = (signal: AbortSignal) => unknown;

const reasonOf: AbortErrorFactory = (signal) => signal.reason;

/** Settles with `work`, or rejects with `toError(signal)` (default: its reason) as soon as `signal` aborts. */
export function raceAbort<T>(
  work: Promise<T>,
  signal: AbortSignal,
  toError: AbortErrorFactory = reasonOf,
): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(toError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      work.catch(() => undefined);
      reject(toError(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
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

/** Waits `ms` milliseconds; rejects with `toError(signal)` (default: its reason) when `signal` aborts first. */
export function sleep(
  ms: number,
  signal?: AbortSignal,
  toError: AbortErrorFactory = reasonOf,
): Promise<void> {
  if (signal?.aborted) return Promise.reject(toError(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(toError(signal as AbortSignal));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
