/**
 * The caller's side of an in-process call: what a network client would put on the wire (credential
 * and tenant headers, query parameters) and its abort scope (its own signal, its deadline, and a
 * stop that gives up on the call).
 */
import { AgentError, DeadlineExceededError, UnavailableError } from '@agent/core';
import { raceAbort, withTraceHeaders, type TraceOptions } from '@agent/core/internal';
import type { RequestInfo } from '@agent/server';

/** The typed error a caller sees when its call was aborted (a timeout signal's reason becomes DEADLINE_EXCEEDED). */
const abortError = (signal: AbortSignal): AgentError => AgentError.from(signal.reason);

/**
 * One call as the agent's pipeline sees it. Its signal aborts when the caller's signal does, at the
 * deadline, when the caller stops reading a stream, or when a stop gives up on it; none of these is a
 * task cancel, as with a connection that closes. `end()` releases the timer and the listener.
 */
export class CallerScope {
  // One controller fed by a listener and a timer, not AbortSignal.any() over AbortSignal.timeout():
  // Node may collect such a composite before its deadline fires.
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onCallerAbort: (() => void) | undefined;

  /** `timeoutMs`: the deadline in ms; 0 or undefined for none. */
  constructor(
    private readonly callerSignal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    if (callerSignal?.aborted) {
      this.abort(callerSignal.reason);
    } else if (callerSignal) {
      this.onCallerAbort = () => this.abort(callerSignal.reason);
      callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
    }
    if (timeoutMs !== undefined && timeoutMs > 0) {
      // Built when it fires: an error captures a stack, and most calls end long before their deadline.
      this.timer = setTimeout(
        () => this.abort(new DeadlineExceededError(`In-process call timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * What the pipeline is told about the call: the headers the caller built (credentials and
   * `x-tenant`, names lowercase) with the trace context (`trace`'s own `traceparent`, else the active
   * OpenTelemetry span's), and `send()`'s params standing in for a query string (`api_key` …).
   */
  request(
    headers: Record<string, string>,
    params?: Record<string, string>,
    trace?: TraceOptions,
  ): RequestInfo {
    return {
      headers: withTraceHeaders(headers, trace),
      query: params ? new URLSearchParams(params) : undefined,
      signal: this.signal,
      abort: (reason) => this.abort(reason),
    };
  }

  /** Settles with `work`, or rejects with the typed abort error as soon as the call's signal aborts. */
  race<T>(work: Promise<T>): Promise<T> {
    return raceAbort(work, this.signal, abortError);
  }

  /** The caller stopped reading before the stream ended: the call's signal aborts, the task goes on. */
  leave(): void {
    this.abort(new UnavailableError('The caller stopped reading the stream'));
  }

  /** The caller has its answer: no deadline or caller signal concerns this call any more. */
  end(): void {
    clearTimeout(this.timer);
    if (this.onCallerAbort) this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private abort(reason: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }
}
