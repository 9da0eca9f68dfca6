import { TaskCanceledError, isErrorCode, type SendOptions, type TaskEvent } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import type { RetryPolicy } from './retry-options.js';
import type { RetryRuntime } from './retry-runtime.js';

export interface RetryCall {
  /** Undefined: one attempt only. */
  policy: RetryPolicy | undefined;
  signal?: AbortSignal | undefined;
  /** The caller's `timeoutMs` (0 = none); undefined leaves each attempt to the transport's own timeout. */
  timeoutMs?: number | undefined;
  /** A further moment (epoch ms) no wait may pass. */
  deadline?: number | undefined;
  /** The caller's trace context, sent with every attempt. */
  traceparent?: string | undefined;
  tracestate?: string | undefined;
  runtime: RetryRuntime;
}

/**
 * One call's attempts: what each attempt is given, and whether, and how long, to wait after a
 * failure before the next.
 */
export class RetryBudget {
  private readonly started = Date.now();
  private readonly deadline: number;
  /** Consecutive failed attempts; an attempt that delivered something starts the count again. */
  private failures = 0;
  private retries = 0;
  private attempts = 0;

  constructor(private readonly call: RetryCall) {
    const own = call.timeoutMs ? this.started + call.timeoutMs : Infinity;
    this.deadline = Math.min(own, call.deadline ?? Infinity);
  }

  /** True once a failed attempt of this call was followed by another. */
  get retried(): boolean {
    return this.retries > 0;
  }

  /**
   * The next attempt's transport options: the caller's signal and what is left of its `timeoutMs`,
   * so that all attempts together keep within it.
   */
  attemptOptions(): SendOptions {
    const sent: SendOptions = {};
    if (this.call.signal) sent.signal = this.call.signal;
    if (this.call.traceparent !== undefined) sent.traceparent = this.call.traceparent;
    if (this.call.tracestate !== undefined) sent.tracestate = this.call.tracestate;
    const timeoutMs = this.call.timeoutMs;
    const first = this.attempts++ === 0;
    if (timeoutMs !== undefined) {
      sent.timeoutMs =
        first || timeoutMs === 0 ? timeoutMs : Math.max(1, Math.ceil(this.started + timeoutMs - Date.now()));
    }
    return sent;
  }

  /** The last attempt delivered an event: a later failure counts as the first again. */
  progressed(): void {
    this.failures = 0;
  }

  /**
   * Called with an attempt's failure: resolves when the next attempt may start. Rejects with
   * `error` itself when it is not retried, the attempts are used up, the server asks for a longer
   * wait than `maxDelayMs`, or the wait would reach the deadline; with the abort reason when the
   * signal aborts (before or while waiting).
   */
  async backoff(error: unknown): Promise<void> {
    const { policy, signal, runtime } = this.call;
    this.failures++;
    if (!policy || this.failures >= policy.maxAttempts || !retriedCode(error, policy)) throw error;
    if (signal?.aborted) throw abortError(signal);
    const delay = this.delay(error, policy);
    if (delay === undefined || Date.now() + delay >= this.deadline) throw error;
    try {
      await runtime.sleep(delay, signal);
    } catch (sleepError) {
      throw signal?.aborted ? abortError(signal) : sleepError;
    }
    // A timer may fire late: the next attempt starts only with time left.
    if (Date.now() >= this.deadline) throw error;
    this.retries++;
  }

  /** The server's `retry_after_ms` when it sent one (undefined if above the cap), else full jitter. */
  private delay(error: unknown, policy: RetryPolicy): number | undefined {
    const asked = retryAfterMs(error);
    if (asked !== undefined) return asked <= policy.maxDelayMs ? asked : undefined;
    const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (this.failures - 1));
    return this.call.runtime.random() * cap;
  }
}

/** Runs `attempt` until it succeeds or {@link RetryBudget.backoff} gives up. */
export async function retryUnary<T>(
  budget: RetryBudget,
  attempt: (options: SendOptions) => Promise<T>,
): Promise<T> {
  for (;;) {
    try {
      return await attempt(budget.attemptOptions());
    } catch (error) {
      await budget.backoff(error);
    }
  }
}

export interface StreamSource {
  /** Opens the stream; opened again after a failure that delivered nothing. */
  open(options: SendOptions): AsyncIterable<TaskEvent>;
  /**
   * Reopens after `event`, the last one delivered, whose `sequence` is `after`; absent when the
   * stream cannot be resumed.
   */
  resume?: ((after: number, options: SendOptions, event: TaskEvent) => AsyncIterable<TaskEvent>) | undefined;
}

/**
 * The stream's events, each once. A failure before the first event opens it again; after events,
 * it resumes after the last `sequence` delivered (when `source.resume` exists and that event had
 * one) and skips anything at or below it; otherwise the failure ends the stream.
 */
export async function* retryStream(call: RetryCall, source: StreamSource): AsyncGenerator<TaskEvent> {
  // Made on the first read: the deadline counts from when the stream is opened.
  const budget = new RetryBudget(call);
  let lastEvent: TaskEvent | undefined;
  let last: number | undefined;
  for (;;) {
    const resumed = lastEvent !== undefined;
    const options = budget.attemptOptions();
    const events =
      lastEvent && source.resume && last !== undefined
        ? source.resume(last, options, lastEvent)
        : source.open(options);
    try {
      for await (const event of events) {
        const sequence = typeof event.sequence === 'number' ? event.sequence : undefined;
        if (resumed && last !== undefined && sequence !== undefined && sequence <= last) continue;
        lastEvent = event;
        last = sequence;
        budget.progressed();
        yield event;
      }
      return;
    } catch (error) {
      if (lastEvent && (!source.resume || last === undefined)) throw error;
      await budget.backoff(error);
    }
  }
}

function retriedCode(error: unknown, policy: RetryPolicy): boolean {
  // Duck-typed: the error may come from another copy of @agent/core than this one.
  return isRecord(error) && isErrorCode(error.code) && policy.retryOn.includes(error.code);
}

/**
 * The server's wish for a wait, by the convention `error.data.retry_after_ms`: our servers put it in
 * the error body (and gRPC's `retry-after-ms` trailer); the HTTP and SSE clients also read a bare
 * `Retry-After` header (a proxy's) into it.
 */
function retryAfterMs(error: unknown): number | undefined {
  if (!isRecord(error) || !isRecord(error.data)) return undefined;
  const value = error.data.retry_after_ms;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * What an abort while waiting rejects with: the reason when it is an AgentError, else
 * TaskCanceledError (as the transports answer an aborted call), the reason as its cause.
 */
function abortError(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  if (isRecord(reason) && isErrorCode(reason.code)) return reason;
  return new TaskCanceledError('The call was aborted while waiting to retry', { cause: reason });
}
