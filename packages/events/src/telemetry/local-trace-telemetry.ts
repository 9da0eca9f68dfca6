/**
 * LocalTraceTelemetry: spans per run, model call and action, derived from RunEvents and sharing
 * their run_id / trace_id / task_id / agent metadata. Exportable as JSON; listeners (such as the
 * OpenTelemetry bridge) see each span start and end.
 */
import { randomBytes } from 'node:crypto';
import { ValueError } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import { snapshot } from '@agent/core/internal';
import { SequencedEventSink } from '../event-sink.js';
import { RedactionPolicy } from '../redaction.js';
import type { RunEvent } from '../run-event.js';
import { ATTR, OPERATION, type SpanAttributes, type SpanData, type SpanListener } from './span-data.js';

export interface LocalTraceTelemetryOptions {
  /** Applied to spans handed to listeners and exported. Default `RedactionPolicy.default()`; `null` disables. */
  redactionPolicy?: RedactionPolicy | null;
  /** Called on span start and end; a throwing listener is isolated. Default none. */
  listeners?: SpanListener[];
  /** Most finished spans kept (oldest dropped first). Default `10000`. */
  maxSpans?: number;
  /** Span id source, for deterministic tests. Default: 16 random hex digits. */
  newSpanId?: () => string;
}

const OPTION_NAMES = optionNames<LocalTraceTelemetryOptions>({
  redactionPolicy: true,
  listeners: true,
  maxSpans: true,
  newSpanId: true,
});

/** The JSON export (`toJSON()`, `exportJson()`). */
export interface TraceExport {
  version: '1.0';
  spans: SpanData[];
}

interface RunState {
  key: string;
  trace_id: string;
  root: SpanData;
  llm: SpanData[];
  actions: Map<string, SpanData>;
}

const hex = (bytes: number) => () => randomBytes(bytes).toString('hex');

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

export class LocalTraceTelemetry extends SequencedEventSink {
  readonly #policy: RedactionPolicy | null;
  readonly #listeners: SpanListener[];
  readonly #maxSpans: number;
  readonly #newSpanId: () => string;
  readonly #runs = new Map<string, RunState>();
  readonly #finished: SpanData[] = [];
  readonly #listenerErrors: Error[] = [];

  constructor(options: LocalTraceTelemetryOptions = {}) {
    super();
    checkOptionNames('LocalTraceTelemetry', options, OPTION_NAMES);
    this.#policy =
      options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
    this.#listeners = [...(options.listeners ?? [])];
    const max = options.maxSpans ?? 10_000;
    if (!Number.isInteger(max) || max < 1) throw new ValueError('maxSpans must be a positive integer');
    this.#maxSpans = max;
    this.#newSpanId = options.newSpanId ?? hex(8);
  }

  /** Adds a listener for spans that start from now on. */
  addListener(listener: SpanListener): void {
    this.#listeners.push(listener);
  }

  protected store(event: RunEvent): void {
    this.observe(event);
  }

  /** Updates spans from one event. Never throws for event content it does not understand. */
  observe(event: RunEvent): void {
    const run = this.#run(event);
    const payload = event.payload as Record<string, unknown>;
    switch (event.type) {
      case 'llm.call.started':
        run.llm.push(
          this.#start(
            run,
            event,
            `${OPERATION.chat} ${str(payload.model) ?? 'unknown'}`,
            'client',
            this.#llmAttributes(payload),
          ),
        );
        break;
      case 'llm.call.completed':
        this.#completeLlm(run, event, payload);
        break;
      case 'action.requested':
      case 'action.policy':
      case 'approval.required':
      case 'approval.decided':
      case 'action.started':
      case 'action.completed':
      case 'action.denied':
      case 'action.failed':
        this.#action(run, event, payload);
        break;
      case 'context.prepared':
      case 'budget.warning':
      case 'budget.exceeded':
      case 'task.error':
        run.root.events.push({
          name: event.type,
          time: event.timestamp,
          attributes: this.#eventAttributes(event, payload),
        });
        if (event.type === 'task.error') this.#setError(run.root, payload.error);
        break;
      case 'task.status':
        if (event.final) this.#finishRun(run, event, payload);
        break;
      default:
        break;
    }
  }

  #run(event: RunEvent): RunState {
    const key = event.run_id ?? `task:${event.task_id}`;
    const existing = this.#runs.get(key);
    if (existing) {
      if (existing.root.agent_name === null && event.agent_name !== null) {
        existing.root.agent_name = event.agent_name;
        existing.root.attributes[ATTR.agentName] = event.agent_name;
        existing.root.name = `${OPERATION.invokeAgent} ${event.agent_name}`;
      }
      return existing;
    }
    const traceId = event.trace_id ?? hex(16)();
    const attributes: SpanAttributes = {
      [ATTR.operationName]: OPERATION.invokeAgent,
      [ATTR.taskId]: event.task_id,
      [ATTR.traceId]: traceId,
    };
    if (event.run_id) attributes[ATTR.runId] = event.run_id;
    if (event.agent_name) attributes[ATTR.agentName] = event.agent_name;
    if (event.session_id) attributes[ATTR.conversationId] = event.session_id;
    const partial: RunState = {
      key,
      trace_id: traceId,
      root: null as unknown as SpanData,
      llm: [],
      actions: new Map(),
    };
    partial.root = this.#newSpan(
      partial,
      event,
      event.agent_name ? `${OPERATION.invokeAgent} ${event.agent_name}` : OPERATION.invokeAgent,
      'internal',
      attributes,
      null,
    );
    this.#runs.set(key, partial);
    this.#emit('onStart', partial.root);
    return partial;
  }

  #newSpan(
    run: RunState,
    event: RunEvent,
    name: string,
    kind: SpanData['kind'],
    attributes: SpanAttributes,
    parent: string | null,
    spanId = this.#newSpanId(),
  ): SpanData {
    return {
      trace_id: run.trace_id,
      span_id: spanId,
      parent_span_id: parent,
      name,
      kind,
      start_time: event.timestamp,
      end_time: null,
      status: 'unset',
      status_message: null,
      attributes,
      events: [],
      run_id: event.run_id,
      task_id: event.task_id,
      session_id: event.session_id,
      agent_name: event.agent_name,
    };
  }

  #start(
    run: RunState,
    event: RunEvent,
    name: string,
    kind: SpanData['kind'],
    attributes: SpanAttributes,
    startTime?: string,
  ): SpanData {
    const parent = this.#parentOf(run, event);
    const span = this.#newSpan(
      run,
      event,
      name,
      kind,
      attributes,
      parent,
      event.span_id ?? this.#newSpanId(),
    );
    if (startTime) span.start_time = startTime;
    if (event.step !== null) span.attributes[ATTR.step] = event.step;
    this.#emit('onStart', span);
    return span;
  }

  #parentOf(run: RunState, event: RunEvent): string {
    if (event.parent_span_id) return event.parent_span_id;
    const parentAction = event.parent_action_id ? run.actions.get(event.parent_action_id) : undefined;
    return parentAction ? parentAction.span_id : run.root.span_id;
  }

  #llmAttributes(payload: Record<string, unknown>): SpanAttributes {
    const attributes: SpanAttributes = { [ATTR.operationName]: OPERATION.chat };
    const provider = str(payload.provider);
    const model = str(payload.model);
    if (provider) attributes[ATTR.providerName] = provider;
    if (model) attributes[ATTR.requestModel] = model;
    return attributes;
  }

  #completeLlm(run: RunState, event: RunEvent, payload: Record<string, unknown>): void {
    const index = event.span_id ? run.llm.findIndex((span) => span.span_id === event.span_id) : 0;
    let span = index >= 0 ? run.llm[index] : undefined;
    if (span) run.llm.splice(index, 1);
    else {
      // A completion without its start: back-date the span by the reported latency.
      const latency = typeof payload.latency_ms === 'number' ? payload.latency_ms : 0;
      const start = new Date(Date.parse(event.timestamp) - latency).toISOString();
      span = this.#start(
        run,
        event,
        `${OPERATION.chat} ${str(payload.model) ?? 'unknown'}`,
        'client',
        this.#llmAttributes(payload),
        start,
      );
    }
    const model = str(payload.model);
    if (model) span.attributes[ATTR.responseModel] = model;
    const finish = str(payload.finish_reason);
    if (finish) span.attributes[ATTR.finishReasons] = [finish];
    const usage = isRecord(payload.usage) ? payload.usage : {};
    if (typeof usage.input_tokens === 'number') span.attributes[ATTR.inputTokens] = usage.input_tokens;
    if (typeof usage.output_tokens === 'number') span.attributes[ATTR.outputTokens] = usage.output_tokens;
    if (typeof payload.latency_ms === 'number') span.attributes[ATTR.latencyMs] = payload.latency_ms;
    this.#end(span, event.timestamp);
  }

  #action(run: RunState, event: RunEvent, payload: Record<string, unknown>): void {
    const action = isRecord(payload.action) ? payload.action : {};
    const actionId = event.action_id;
    if (actionId === null) return;
    let span = run.actions.get(actionId);
    if (!span) {
      const name = str(action.name) ?? 'unknown';
      const attributes: SpanAttributes = {
        [ATTR.operationName]: OPERATION.executeTool,
        [ATTR.toolName]: name,
        [ATTR.toolCallId]: actionId,
        [ATTR.toolType]: action.kind === 'tool.call' || action.kind === undefined ? 'function' : 'extension',
        [ATTR.actionId]: actionId,
      };
      if (typeof action.kind === 'string') attributes[ATTR.actionKind] = action.kind;
      if (Array.isArray(action.capabilities))
        attributes[ATTR.actionCapabilities] = action.capabilities.filter(
          (c): c is string => typeof c === 'string',
        );
      span = this.#start(run, event, `${OPERATION.executeTool} ${name}`, 'internal', attributes);
      run.actions.set(actionId, span);
    }
    switch (event.type) {
      case 'action.completed':
        this.#end(span, event.timestamp);
        break;
      case 'action.failed':
      case 'action.denied':
        this.#setError(span, payload.error, event.type === 'action.denied' ? 'ACTION_DENIED' : 'INTERNAL');
        this.#end(span, event.timestamp);
        break;
      case 'action.requested':
      case 'action.started':
        // The span's own start; policy and approval steps become span events.
        break;
      default:
        span.events.push({
          name: event.type,
          time: event.timestamp,
          attributes: this.#eventAttributes(event, payload),
        });
    }
  }

  #eventAttributes(event: RunEvent, payload: Record<string, unknown>): SpanAttributes {
    const attributes: SpanAttributes = {};
    const decision = isRecord(payload.decision) ? payload.decision : {};
    const error = isRecord(payload.error) ? payload.error : {};
    const manifest = isRecord(payload.manifest) ? payload.manifest : {};
    const put = (key: string, value: unknown) => {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        attributes[key] = value;
    };
    put('agent_tasks.budget.limit', payload.limit);
    put('agent_tasks.budget.used', payload.used);
    put('agent_tasks.budget.max', payload.max);
    put('agent_tasks.policy.outcome', decision.outcome);
    put('agent_tasks.policy.capability', decision.capability);
    put('agent_tasks.approval.approved', decision.approved);
    put('agent_tasks.approval.decided_by', decision.decided_by);
    put(ATTR.errorType, error.code);
    put('agent_tasks.context.total_estimated_tokens', manifest.total_estimated_tokens);
    put('agent_tasks.context.window', manifest.context_window);
    if (event.summary) attributes['agent_tasks.summary'] = event.summary;
    return attributes;
  }

  #setError(span: SpanData, error: unknown, fallback = 'INTERNAL'): void {
    const body = isRecord(error) ? error : {};
    span.status = 'error';
    span.status_message = typeof body.message === 'string' ? body.message : null;
    span.attributes[ATTR.errorType] = typeof body.code === 'string' ? body.code : fallback;
  }

  #finishRun(run: RunState, event: RunEvent, payload: Record<string, unknown>): void {
    for (const span of [...run.llm, ...run.actions.values()]) {
      if (span.end_time !== null) continue;
      span.attributes[ATTR.unfinished] = true;
      this.#end(span, event.timestamp);
    }
    const state = str(payload.state);
    if (state) run.root.attributes[ATTR.taskState] = state;
    if (state === 'failed' && run.root.status !== 'error') {
      const task = isRecord(payload.task) && isRecord(payload.task.metadata) ? payload.task.metadata : {};
      this.#setError(run.root, task.error, 'failed');
    }
    // Cancellation is an outcome, not a failure (it is never a `task.error` nor `failed`): marked, status left unset.
    if (state === 'canceled') run.root.attributes[ATTR.errorType] = 'cancelled';
    this.#end(run.root, event.timestamp);
    this.#runs.delete(run.key);
  }

  #end(span: SpanData, time: string): void {
    if (span.end_time !== null) return;
    span.end_time = time;
    this.#finished.push(span);
    if (this.#finished.length > this.#maxSpans) this.#finished.shift();
    this.#emit('onEnd', span);
  }

  #emit(hook: 'onStart' | 'onEnd', span: SpanData): void {
    if (this.#listeners.length === 0) return;
    const copy = this.#export(span);
    for (const listener of this.#listeners) {
      try {
        listener[hook]?.(copy);
      } catch (error) {
        // Telemetry observes; an exporter failure must not reach the run.
        this.#listenerErrors.push(error instanceof Error ? error : new Error(String(error)));
        if (this.#listenerErrors.length > 100) this.#listenerErrors.shift();
      }
    }
  }

  #export(span: SpanData): SpanData {
    return this.#policy === null ? snapshot(span) : this.#policy.redact(span);
  }

  /** Errors listeners threw, oldest first. */
  get listenerErrors(): readonly Error[] {
    return [...this.#listenerErrors];
  }

  /** Finished spans, then open ones (with `end_time: null`), unredacted copies. */
  spans(): SpanData[] {
    const open = [...this.#runs.values()].flatMap((run) => [
      run.root,
      ...run.llm,
      ...[...run.actions.values()].filter((s) => s.end_time === null),
    ]);
    return snapshot([...this.#finished, ...open]);
  }

  /** Spans of one run. */
  spansForRun(runId: string): SpanData[] {
    return this.spans().filter((span) => span.run_id === runId);
  }

  toJSON(): TraceExport {
    const spans = this.spans();
    return { version: '1.0', spans: this.#policy === null ? spans : this.#policy.redact(spans) };
  }

  /** The redacted JSON export as text. */
  exportJson(space?: number): string {
    return JSON.stringify(this.toJSON(), null, space);
  }

  /** Drops finished spans (open runs keep their spans). */
  clear(): void {
    this.#finished.length = 0;
  }
}
