import { AgentError, DeadlineExceededError } from '@agent/core';

/** One signal that aborts when any input aborts, plus an optional deadline. */
export function combineSignals(signals: Array<AbortSignal | undefined>, timeoutMs?: number): AbortSignal {
  const inputs = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  if (timeoutMs !== undefined) inputs.push(AbortSignal.timeout(timeoutMs));
  return inputs.length === 1 ? inputs[0]! : AbortSignal.any(inputs);
}

/** The typed error a caller sees when its call was aborted. */
export function abortError(signal: AbortSignal): AgentError {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new DeadlineExceededError('In-process call timed out', { cause: reason });
  }
  return AgentError.from(reason);
}

/**
 * Settles with `promise`, or rejects as soon as `signal` aborts. The work behind the promise keeps
 * running: as over a network, a caller that leaves does not cancel the task.
 */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(AgentError.from(error));
      },
    );
  });
}
