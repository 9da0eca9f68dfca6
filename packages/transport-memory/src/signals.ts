import { AgentError, DeadlineExceededError, raceAbort } from '@agent/core';

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
  return raceAbort(promise, signal, abortError).catch((error: unknown) => {
    throw AgentError.from(error);
  });
}
