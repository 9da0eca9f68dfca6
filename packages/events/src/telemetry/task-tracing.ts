/**
 * Live OpenTelemetry spans of a running task, made by the runtime as the run goes (not derived from
 * its events afterwards), so a delegated call can carry the real span it was made from: one trace
 * runs from a client through an agent to the agents it delegates to.
 *
 * The task span (`invoke_agent {agent}`) is a child of the caller's span named by the request's
 * `traceparent`; model calls (`chat {model}`), tool executions (`execute_tool {name}`) and delegated
 * calls (`invoke_agent`, client) are its children. Without `@opentelemetry/api` nothing is started
 * and a run allocates nothing here but the parsed `traceparent` it received.
 */
import { randomBytes } from 'node:crypto';
import { formatTraceparent, parseTraceparent, type TraceParent } from '@agent/core/internal';
import { genAiInstruments, recordModelCall, type ModelCallMeasure } from './genai-metrics.js';
import type { OtelApi, OtelSpan, OtelSpanContext } from './otel-api.js';
import { otelApi } from './otel-api.js';
import { ATTR, OPERATION, type SpanAttributes } from './span-data.js';
import { markTracedRun, unmarkTracedRun } from './traced-runs.js';

export interface TaskTracingOptions {
  /** Tracer and meter name. Default `"@agent/runtime"`. */
  name?: string;
  /** `false`: no spans and no metrics (the `traceparent` is still carried). Default `true`. */
  enabled?: boolean;
}

export interface TaskTraceStart {
  taskId: string;
  agentName: string;
  /** The request's headers (lowercase names): `traceparent` and `tracestate` are read. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** The task came over a transport (a `server` span) rather than from a call in this process. */
  served?: boolean;
}

/** The trace headers a delegated call sends. */
export interface OutgoingTrace {
  traceparent: string;
  tracestate?: string;
}

/** A span around one piece of a run's work; `end` is idempotent. */
export interface WorkTrace {
  /** Runs `fn` with this span active, so instrumented code inside it nests under it. */
  run<T>(fn: () => T): T;
  /** `errorType`: the error's code (status `error`); none for success. */
  end(errorType?: string): void;
}

export interface DelegationTrace extends WorkTrace {
  /** What the delegated call carries: this span's context (or, without OpenTelemetry, the run's). */
  readonly outgoing: OutgoingTrace;
}

/** What a finished model call reports. */
export interface ModelCallResult {
  inputTokens?: number;
  outputTokens?: number;
  /** The token counts were estimated, not reported by the provider (they stay off the metrics). */
  estimated?: boolean;
  finishReason?: string | null;
  errorType?: string;
}

export interface ModelCallTrace {
  run<T>(fn: () => T): T;
  end(result: ModelCallResult): void;
}

const NOOP_WORK: WorkTrace = { run: (fn) => fn(), end: () => undefined };
const NOOP_MODEL_CALL: ModelCallTrace = { run: (fn) => fn(), end: () => undefined };

/** Per agent: makes each run's {@link TaskTrace}. */
export class TaskTracing {
  readonly #name: string;
  readonly #enabled: boolean;

  constructor(options: TaskTracingOptions = {}) {
    this.#name = options.name ?? '@agent/runtime';
    this.#enabled = options.enabled ?? true;
  }

  /** Starts a task's trace: its span when OpenTelemetry is there, else only the caller's context. */
  start(init: TaskTraceStart): TaskTrace {
    const headers = init.headers;
    const remote = headers ? parseTraceparent(headers.traceparent) : undefined;
    const api = this.#enabled ? otelApi() : null;
    if (api === null) return remote === undefined ? INERT : new TaskTrace(null, this.#name, remote, headers);
    return new TaskTrace(api, this.#name, remote, headers, init);
  }
}

/** One run's trace. */
export class TaskTrace {
  readonly #api: OtelApi | null;
  readonly #name: string;
  readonly #remote: TraceParent | undefined;
  readonly #tracestate: string | undefined;
  readonly #span: OtelSpan | null = null;
  /** The context whose active span is the task span: the parent of its children. */
  readonly #context: unknown = undefined;
  #runId: string | null = null;
  #ended = false;

  constructor(
    api: OtelApi | null,
    name: string,
    remote: TraceParent | undefined,
    headers: Readonly<Record<string, string>> | undefined,
    init?: TaskTraceStart,
  ) {
    this.#api = api;
    this.#name = name;
    this.#remote = remote;
    this.#tracestate = remote && headers?.tracestate ? headers.tracestate : undefined;
    if (api === null || init === undefined) return;
    const parent = this.#parentContext(api);
    this.#span = api.trace.getTracer(name).startSpan(
      `${OPERATION.invokeAgent} ${init.agentName}`,
      {
        kind: init.served ? api.SpanKind.SERVER : api.SpanKind.INTERNAL,
        attributes: {
          [ATTR.operationName]: OPERATION.invokeAgent,
          [ATTR.agentName]: init.agentName,
          [ATTR.taskId]: init.taskId,
        },
      },
      parent,
    );
    this.#context = api.trace.setSpan(parent, this.#span);
  }

  /**
   * The trace this task joins when it names none itself: the caller's (`traceparent`), else the
   * task span's own new one (with an OpenTelemetry SDK); `undefined` when neither exists.
   */
  get traceId(): string | undefined {
    if (this.#remote) return this.#remote.traceId;
    const own = this.#span?.spanContext();
    return own && this.#api?.trace.isSpanContextValid(own) ? own.traceId : undefined;
  }

  /** The run's ids, once its RunContext exists: span attributes, and the bridge leaves the run alone. */
  bind(ids: { runId: string; traceId: string; sessionId: string | null }): void {
    const span = this.#span;
    if (span === null || !span.isRecording()) return;
    this.#runId = ids.runId;
    markTracedRun(ids.runId);
    span.setAttribute(ATTR.runId, ids.runId);
    span.setAttribute(ATTR.traceId, ids.traceId);
    if (ids.sessionId !== null) span.setAttribute(ATTR.conversationId, ids.sessionId);
  }

  /** Runs the task's logic with the task span active. */
  run<T>(fn: () => T): T {
    const api = this.#api;
    return api === null || this.#span === null ? fn() : api.context.with(this.#context, fn);
  }

  /** A `chat {model}` span and the GenAI metrics of one model call. */
  modelCall(provider: string, model: string): ModelCallTrace {
    const api = this.#api;
    if (api === null || this.#span === null) return NOOP_MODEL_CALL;
    const attributes: SpanAttributes = {
      [ATTR.operationName]: OPERATION.chat,
      [ATTR.providerName]: provider,
      [ATTR.system]: provider,
      [ATTR.requestModel]: model,
    };
    const span = api.trace
      .getTracer(this.#name)
      .startSpan(`${OPERATION.chat} ${model}`, { kind: api.SpanKind.CLIENT, attributes }, this.#context);
    const context = api.trace.setSpan(this.#context, span);
    const started = performance.now();
    let ended = false;
    return {
      run: (fn) => api.context.with(context, fn),
      end: (result) => {
        if (ended) return;
        ended = true;
        const seconds = (performance.now() - started) / 1000;
        const metric: SpanAttributes = { ...attributes, [ATTR.responseModel]: model };
        delete metric[ATTR.system];
        const measure: ModelCallMeasure = { attributes: metric, seconds };
        if (result.errorType !== undefined) metric[ATTR.errorType] = result.errorType;
        else if (!result.estimated) {
          measure.inputTokens = result.inputTokens;
          measure.outputTokens = result.outputTokens;
        }
        recordModelCall(genAiInstruments(api, this.#name), measure);
        if (!span.isRecording()) return span.end();
        span.setAttribute(ATTR.responseModel, model);
        if (result.inputTokens !== undefined) span.setAttribute(ATTR.inputTokens, result.inputTokens);
        if (result.outputTokens !== undefined) span.setAttribute(ATTR.outputTokens, result.outputTokens);
        if (result.estimated) span.setAttribute(ATTR.usageEstimated, true);
        if (result.finishReason) span.setAttribute(ATTR.finishReasons, [result.finishReason]);
        if (result.errorType !== undefined) fail(api, span, result.errorType);
        span.end();
      },
    };
  }

  /** An `execute_tool {name}` span. */
  tool(name: string, callId?: string): WorkTrace {
    const api = this.#api;
    if (api === null || this.#span === null) return NOOP_WORK;
    const attributes: SpanAttributes = {
      [ATTR.operationName]: OPERATION.executeTool,
      [ATTR.toolName]: name,
      [ATTR.toolType]: 'function',
    };
    if (callId !== undefined) attributes[ATTR.toolCallId] = callId;
    const span = api.trace
      .getTracer(this.#name)
      .startSpan(
        `${OPERATION.executeTool} ${name}`,
        { kind: api.SpanKind.INTERNAL, attributes },
        this.#context,
      );
    return work(api, span, api.trace.setSpan(this.#context, span));
  }

  /**
   * An `invoke_agent` client span around a delegated call, the parent of the other agent's task
   * span. Its parent is the span active where the delegation is made when that one belongs to this
   * task's trace (a tool's), else the task span. `runTraceId`: the RunContext's, for the
   * `traceparent` of a run without OpenTelemetry that received none.
   */
  delegation(target: string, childTaskId: string, runTraceId: string): DelegationTrace {
    const api = this.#api;
    if (api === null || this.#span === null) return { ...NOOP_WORK, outgoing: this.#passThrough(runTraceId) };
    const active = api.context.active();
    const activeSpan = api.trace.getSpanContext(active);
    const parent =
      activeSpan && activeSpan.traceId === this.#span.spanContext().traceId ? active : this.#context;
    const span = api.trace.getTracer(this.#name).startSpan(
      target.includes('://') ? OPERATION.invokeAgent : `${OPERATION.invokeAgent} ${target}`,
      {
        kind: api.SpanKind.CLIENT,
        attributes: {
          [ATTR.operationName]: OPERATION.invokeAgent,
          [ATTR.delegationTarget]: target,
          [ATTR.delegationTaskId]: childTaskId,
        },
      },
      parent,
    );
    const own = span.spanContext();
    const outgoing = api.trace.isSpanContextValid(own) ? outgoingOf(own) : this.#passThrough(runTraceId);
    return { ...work(api, span, api.trace.setSpan(parent, span)), outgoing };
  }

  /**
   * Ends the task span with the run's final state. `errorType`: the failure's code (never its
   * message, which may carry what a trace must not).
   */
  end(state: string, errorType?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    const span = this.#span;
    if (span === null || this.#api === null) return;
    if (span.isRecording()) {
      span.setAttribute(ATTR.taskState, state);
      // Cancellation is an outcome, not a failure: marked, status left unset (as the local spans do).
      if (state === 'canceled') span.setAttribute(ATTR.errorType, 'cancelled');
      else if (state === 'failed' || errorType !== undefined) fail(this.#api, span, errorType ?? 'failed');
    }
    span.end();
    if (this.#runId !== null) unmarkTracedRun(this.#runId);
  }

  /** The caller's span passed on as it came, else a span id of the run's own in the run's trace. */
  #passThrough(runTraceId: string): OutgoingTrace {
    if (this.#remote) {
      const traceparent = formatTraceparent(this.#remote);
      return this.#tracestate ? { traceparent, tracestate: this.#tracestate } : { traceparent };
    }
    return { traceparent: formatTraceparent({ traceId: runTraceId, spanId: newSpanId(), flags: 1 }) };
  }

  /**
   * The caller's span: the span active here when it belongs to the `traceparent`'s trace (an HTTP
   * server span an instrumentation opened for this request), else the `traceparent` as a remote
   * parent; without one, whatever is active (a span around an in-process call, or none).
   */
  #parentContext(api: OtelApi): unknown {
    const active = api.context.active();
    const remote = this.#remote;
    if (remote === undefined) return active;
    if (api.trace.getSpanContext(active)?.traceId === remote.traceId) return active;
    const spanContext: OtelSpanContext = {
      traceId: remote.traceId,
      spanId: remote.spanId,
      traceFlags: remote.flags,
      isRemote: true,
    };
    if (this.#tracestate) spanContext.traceState = api.createTraceState(this.#tracestate);
    return api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext);
  }
}

/** The trace of a run that received no `traceparent` while OpenTelemetry is not installed. */
const INERT = new TaskTrace(null, '', undefined, undefined);

function work(api: OtelApi, span: OtelSpan, context: unknown): WorkTrace {
  let ended = false;
  return {
    run: (fn) => api.context.with(context, fn),
    end: (errorType) => {
      if (ended) return;
      ended = true;
      if (errorType !== undefined && span.isRecording()) fail(api, span, errorType);
      span.end();
    },
  };
}

function fail(api: OtelApi, span: OtelSpan, errorType: string): void {
  span.setAttribute(ATTR.errorType, errorType);
  span.setStatus({ code: api.SpanStatusCode.ERROR });
}

function outgoingOf(spanContext: OtelSpanContext): OutgoingTrace {
  const traceparent = formatTraceparent({
    traceId: spanContext.traceId,
    spanId: spanContext.spanId,
    flags: spanContext.traceFlags,
  });
  const state = spanContext.traceState?.serialize();
  return state ? { traceparent, tracestate: state } : { traceparent };
}

function newSpanId(): string {
  for (;;) {
    const id = randomBytes(8).toString('hex');
    if (id !== '0000000000000000') return id;
  }
}
