import { ValueError, isErrorCode, type ErrorCode } from '@agent/core';
import { checkOptionNames, isRecord, numberOption, optionNames } from '@agent/core/internal';

/** How a call retries transient failures (see {@link AgentClientOptions.retry}). */
export interface RetryOptions {
  /** Attempts in all, the first included; 1 turns retries off. Default 3. */
  maxAttempts?: number;
  /** The backoff before retry n waits a random time in [0, min(maxDelayMs, baseDelayMs·2^(n−1))]. Default 100. */
  baseDelayMs?: number;
  /** Longest wait between two attempts, a server's `retry_after_ms` included. Default 5000. */
  maxDelayMs?: number;
  /** The error codes retried. Default `['UNAVAILABLE', 'RESOURCE_EXHAUSTED']`. */
  retryOn?: readonly ErrorCode[];
}

/** `false` turns retries off; an object sets the fields it names and keeps the others. */
export type RetryOption = RetryOptions | false;

/** A checked, complete retry setting. */
export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly retryOn: readonly ErrorCode[];
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 3,
  baseDelayMs: 100,
  maxDelayMs: 5000,
  retryOn: Object.freeze(['UNAVAILABLE', 'RESOURCE_EXHAUSTED'] as const),
});

const RETRY_OPTION_NAMES = optionNames<RetryOptions>({
  maxAttempts: true,
  baseDelayMs: true,
  maxDelayMs: true,
  retryOn: true,
});

/**
 * Codes refused in `retryOn`: a spent budget (also answered 429) stays spent however often the task
 * is sent again.
 */
const NEVER_RETRIED: readonly ErrorCode[] = ['BUDGET_EXCEEDED'];

/**
 * The policy a call runs with: `option` (the call's, else the client's) laid over `base`. Undefined
 * means no retries. `base` is undefined when the client itself has retries off, so a call's object
 * then starts from the defaults.
 */
export function retryPolicy(
  owner: string,
  option: RetryOption | undefined,
  base: RetryPolicy | undefined,
): RetryPolicy | undefined {
  if (option === undefined) return base;
  if (option === false) return undefined;
  if (!isRecord(option as unknown)) throw new ValueError(`${owner}: retry must be false or an object`);
  checkOptionNames(`${owner} retry`, option, RETRY_OPTION_NAMES);
  const from = base ?? DEFAULT_RETRY_POLICY;
  const maxAttempts = numberOption('retry.maxAttempts', option.maxAttempts, from.maxAttempts, {
    min: 1,
    integer: true,
  });
  const baseDelayMs = numberOption('retry.baseDelayMs', option.baseDelayMs, from.baseDelayMs);
  const maxDelayMs = numberOption('retry.maxDelayMs', option.maxDelayMs, from.maxDelayMs);
  const retryOn = option.retryOn === undefined ? from.retryOn : retryCodes(option.retryOn);
  return Object.freeze({ maxAttempts, baseDelayMs, maxDelayMs, retryOn });
}

function retryCodes(value: unknown): readonly ErrorCode[] {
  if (!Array.isArray(value)) throw new ValueError('retry.retryOn must be an array of error codes');
  for (const code of value) {
    if (!isErrorCode(code)) throw new ValueError(`retry.retryOn: unknown error code ${String(code)}`);
    if (NEVER_RETRIED.includes(code)) {
      throw new ValueError(`retry.retryOn cannot hold ${code}: it is not transient, a retry meets it again`);
    }
  }
  return Object.freeze([...(value as ErrorCode[])]);
}
