/**
 * Folds a run's events into RunReport data, one event at a time as they arrive. Pure: the same
 * events always give the same report (except `created_at`).
 */
import {
  nowIso,
  type ApprovalDecisionData,
  type ApprovalRequestData,
  type Artifact,
  type ErrorBody,
  type JsonObject,
  type RunActionData,
  type Task,
  type TaskState,
} from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { snapshot } from '@agent/core/internal';
import type { ContextManifestData } from './context-manifest.js';
import { mergeRunIds, runIdsOfTask, type RunIds } from './run-context.js';
import {
  envelopesOfListed,
  RUN_EVENT_VERSION,
  type BasePayload,
  type ListedEvents,
  type PolicyDecisionData,
  type RunEvent,
  type RunEventType,
} from './run-event.js';
import {
  emptyLLMMetrics,
  type ActionRecord,
  type ActionStatus,
  type ApprovalCheckpoint,
  type BudgetRecord,
  type ErrorRecord,
  type LLMMetrics,
  type ModelMetrics,
  type RunReportData,
} from './run-report.js';

/**
 * The event types a run may emit by the thousand (one per output chunk or progress tick). Past a
 * run's budget of them a report folds them in but does not list them.
 */
export const STREAMED_EVENT_TYPES: ReadonlySet<RunEventType> = new Set<RunEventType>([
  'task.artifact',
  'llm.stream',
  'task.progress',
]);

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The error of a payload; `data` is copied unless the payload is the fold's own (`owned`). */
function errorBody(value: unknown, owned: boolean): ErrorBody | null {
  if (!isRecord(value)) return null;
  const body: ErrorBody = {
    code: typeof value.code === 'string' ? value.code : 'INTERNAL',
    message: typeof value.message === 'string' ? value.message : '',
  };
  if (value.data !== undefined) body.data = owned ? value.data : snapshot(value.data);
  return body;
}

const ACTION_STATUS: Partial<Record<RunEvent['type'], ActionStatus>> = {
  'action.requested': 'requested',
  'action.policy': 'evaluated',
  'approval.required': 'awaiting_approval',
  'action.started': 'started',
  'action.completed': 'completed',
  'action.denied': 'denied',
  'action.failed': 'failed',
};

export interface ReportFoldOptions {
  /**
   * Events of the STREAMED_EVENT_TYPES a report lists; later ones are folded in and counted in
   * `dropped_events`. A non-negative integer or `Infinity`. Default `Infinity`.
   */
  maxStreamedEvents?: number;
}

export interface BuildReportOptions {
  metadata?: JsonObject;
  /** Defaults used when no event names them (the recorder's constructor options). */
  defaults?: RunIds;
}

/**
 * A report in the making: `add` folds each event in as it comes, so nothing needs the whole list of
 * events at the end, and keeps a private copy of each event the report lists.
 *
 * What the fold holds is its own: an event it lists is copied once and its parts are shared, never
 * changed, by the records made from it (the final task, an action's result…); what it takes from an
 * event it does not list is copied. The containers it updates in place (an artifact's parts, an
 * action record, the metrics) are copied by `build`, so a report built mid-run does not change as
 * more events come.
 */
export class ReportFold {
  readonly #maxStreamed: number;
  #streamed = 0;
  #dropped = 0;
  /**
   * The events listed, in arrival order: an event as it was given, or only the payload of one that
   * is exactly the envelope of its payload and sequence (see {@link adoptEnvelope}). A long run
   * lists up to thousands of events, kept until it ends: a payload is half of what its event holds.
   */
  readonly #listed: (RunEvent | BasePayload)[] = [];
  /** Per entry of `#listed`: the sequence of a payload kept alone, or -1 for a whole event. */
  readonly #sequences: number[] = [];
  readonly #ids: RunIds = { run_id: null, session_id: null, trace_id: null, agent_name: null };
  #taskId: string | null = null;
  #status: TaskState | null = null;
  #finalTask: Task | null = null;
  #startedAt: string | null = null;
  #startedMs = Infinity;
  #endedAt: string | null = null;
  #endedMs = -Infinity;
  readonly #manifests: ContextManifestData[] = [];
  /** Made at a run's first action or approval: most runs (an echo, a stream) have none. */
  #actions: Map<string, ActionRecord> | null = null;
  #approvals: Map<string, ApprovalCheckpoint> | null = null;
  readonly #artifacts = new Map<string, Artifact>();
  readonly #metrics: LLMMetrics = emptyLLMMetrics();
  readonly #budget: BudgetRecord[] = [];
  readonly #errors: ErrorRecord[] = [];

  constructor(options: ReportFoldOptions = {}) {
    this.#maxStreamed = options.maxStreamedEvents ?? Infinity;
  }

  /**
   * The events the report lists, in arrival order: the fold's own, for a report's data or to be
   * copied, never to be changed.
   */
  get events(): RunEvent[] {
    return envelopesOfListed({ entries: this.#listed, sequences: this.#sequences });
  }

  /** The events the report lists as the fold keeps them (see {@link ListedEvents}), as of now. */
  get listed(): ListedEvents {
    return { entries: this.#listed.slice(), sequences: this.#sequences.slice() };
  }

  /** Streamed events folded in but not listed. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Folds one event in; the caller keeps `event`, the fold copies what it keeps of it. */
  add(event: RunEvent): void {
    this.#add(event, false);
  }

  /**
   * Folds in an event the caller hands over: one nobody else holds or changes from now on, and
   * exactly `envelopeOf(event.payload, event.sequence)` (as `RunEvent.fromTaskEvent` builds it). It
   * is not copied again, and of a listed one only the payload is kept: the envelope is made again
   * from it when the events are read.
   */
  adoptEnvelope(event: RunEvent): void {
    this.#add(event, true);
  }

  #add(event: RunEvent, handedOver: boolean): void {
    const listed = !STREAMED_EVENT_TYPES.has(event.type) || this.#streamed++ < this.#maxStreamed;
    if (!listed) {
      this.#dropped += 1;
      this.#fold(event, handedOver);
      return;
    }
    if (handedOver) {
      this.#fold(event, true);
      this.#listed.push(event.payload);
      this.#sequences.push(event.sequence);
      return;
    }
    const own = snapshot(event);
    this.#fold(own, true);
    this.#listed.push(own);
    this.#sequences.push(-1);
  }

  /**
   * The report of what was added so far. It shares nothing with the values given to `add` or
   * `options`, and nothing the fold changes later (parts of it may share with each other, e.g. the
   * final task with the final event's payload).
   */
  build(options: BuildReportOptions = {}): RunReportData {
    return this.#build(options, this.events);
  }

  /**
   * {@link build}, with the listed events as the fold keeps them instead of as events: `data.events`
   * is an empty list in their place, for a report to fill when they are first read
   * (`adoptListedRunReport`). A report that is only stored never makes their envelopes.
   */
  buildListed(options: BuildReportOptions = {}): { data: RunReportData; listed: ListedEvents } {
    return { data: this.#build(options, []), listed: this.listed };
  }

  #build(options: BuildReportOptions, events: RunEvent[]): RunReportData {
    const ids = options.defaults ? mergeRunIds(this.#ids, options.defaults) : { ...this.#ids };
    const artifacts = [...this.#artifacts.values()].map(detachedArtifact);
    for (const artifact of this.#finalTask?.artifacts ?? []) {
      if (!this.#artifacts.has(artifact.id)) artifacts.push(artifact);
    }
    const metrics = this.#metrics;
    const byModel: Record<string, ModelMetrics> = Object.fromEntries(
      Object.entries(metrics.by_model).map(([key, entry]) => [key, { ...entry }]),
    );
    return {
      version: RUN_EVENT_VERSION,
      run_id: ids.run_id,
      task_id: this.#taskId,
      session_id: ids.session_id,
      trace_id: ids.trace_id,
      agent_name: ids.agent_name,
      status: this.#finalTask?.state ?? this.#status,
      started_at: this.#startedAt,
      ended_at: this.#endedAt,
      duration_seconds: secondsBetween(this.#startedMs, this.#endedMs),
      created_at: nowIso(),
      events,
      dropped_events: this.#dropped,
      context_manifests: [...this.#manifests],
      actions: this.#actions ? [...this.#actions.values()].map((record) => ({ ...record })) : [],
      approvals: this.#approvals
        ? [...this.#approvals.values()].map((checkpoint) => ({ ...checkpoint }))
        : [],
      artifacts,
      llm_metrics: { ...metrics, by_model: byModel },
      budget_events: [...this.#budget],
      errors: [...this.#errors],
      final_task: this.#finalTask,
      metadata: snapshot(options.metadata ?? {}),
    };
  }

  /**
   * Folds `event` in. `owned`: the event is the fold's own copy, so its values may be kept as they
   * are; otherwise what is kept of it is copied.
   */
  #fold(event: RunEvent, owned: boolean): void {
    this.#addIds(event);
    this.#taskId ??= event.task_id;
    this.#stamp(event.timestamp);
    const payload = event.payload as Record<string, unknown>;
    switch (event.type) {
      case 'task.status':
        if (typeof payload.state === 'string') this.#status = payload.state as TaskState;
        if (event.final && isRecord(payload.task)) {
          this.#finalTask = ownOrCopy(payload.task as unknown as Task, owned);
          this.#addIds(runIdsOfTask(payload.task));
        }
        break;
      case 'task.artifact':
        if (isRecord(payload.artifact))
          this.#artifact(payload.artifact as unknown as Artifact, payload.append === true, owned);
        break;
      case 'context.prepared':
        if (isRecord(payload.manifest))
          this.#manifests.push(ownOrCopy(payload.manifest, owned) as unknown as ContextManifestData);
        break;
      case 'llm.call.started':
        this.#metrics.started_calls += 1;
        break;
      case 'llm.call.completed':
        this.#llmCall(payload);
        break;
      case 'budget.warning':
      case 'budget.exceeded':
        this.#budget.push({
          type: event.type,
          limit: str(payload.limit),
          used: typeof payload.used === 'number' ? payload.used : null,
          max: typeof payload.max === 'number' ? payload.max : null,
          timestamp: event.timestamp,
        });
        break;
      case 'task.error':
        this.#error(event, payload.error, owned);
        break;
      default:
        break;
    }
    if (event.type.startsWith('action.') || event.type.startsWith('approval.'))
      this.#action(event, payload, owned);
  }

  /** Fills each id still unknown: the first value seen wins. */
  #addIds(source: RunIds): void {
    const ids = this.#ids;
    ids.run_id ??= source.run_id;
    ids.session_id ??= source.session_id;
    ids.trace_id ??= source.trace_id;
    ids.agent_name ??= source.agent_name;
  }

  /** The earliest and latest timestamps; of equal ones, the first seen starts and the last ends. */
  #stamp(timestamp: string): void {
    const ms = msOf(timestamp);
    if (!Number.isFinite(ms)) return;
    if (ms < this.#startedMs) {
      this.#startedMs = ms;
      this.#startedAt = timestamp;
    }
    if (ms >= this.#endedMs) {
      this.#endedMs = ms;
      this.#endedAt = timestamp;
    }
  }

  /** The fold's artifact is its own object with its own parts list, which appends extend. */
  #artifact(artifact: Artifact, append: boolean, owned: boolean): void {
    const parts: unknown[] = Array.isArray(artifact.parts) ? artifact.parts : [];
    const existing = this.#artifacts.get(artifact.id);
    if (append && existing) {
      if (!Array.isArray(existing.parts)) existing.parts = [];
      // One part at a time: spreading a huge parts list into push would overflow the stack.
      for (const part of owned ? parts : snapshot(parts))
        existing.parts.push(part as Artifact['parts'][number]);
      return;
    }
    const copy = owned ? { ...artifact } : snapshot(artifact);
    if (owned && Array.isArray(artifact.parts)) copy.parts = [...artifact.parts];
    this.#artifacts.set(artifact.id, copy);
  }

  #llmCall(payload: Record<string, unknown>): void {
    const usage = isRecord(payload.usage) ? payload.usage : {};
    const input = num(usage.input_tokens);
    const output = num(usage.output_tokens);
    const latency = num(payload.latency_ms);
    const m = this.#metrics;
    m.calls += 1;
    m.input_tokens += input;
    m.output_tokens += output;
    m.total_tokens += input + output;
    m.total_latency_ms += latency;
    m.max_latency_ms = Math.max(m.max_latency_ms, latency);
    const provider = str(payload.provider);
    const model = str(payload.model);
    const key = `${provider ?? 'unknown'}/${model ?? 'unknown'}`;
    const entry = (m.by_model[key] ??= {
      provider,
      model,
      calls: 0,
      input_tokens: 0,
      output_tokens: 0,
      total_latency_ms: 0,
    });
    entry.calls += 1;
    entry.input_tokens += input;
    entry.output_tokens += output;
    entry.total_latency_ms += latency;
  }

  #error(event: RunEvent, value: unknown, owned: boolean): void {
    const body = errorBody(value, owned);
    if (body)
      this.#errors.push({
        ...body,
        type: event.type,
        action_id: event.action_id,
        timestamp: event.timestamp,
      });
  }

  #action(event: RunEvent, payload: Record<string, unknown>, owned: boolean): void {
    const request = isRecord(payload.request) ? (payload.request as unknown as ApprovalRequestData) : null;
    if (event.type === 'approval.required' || event.type === 'approval.decided')
      this.#approval(event, payload, request, owned);
    const action = isRecord(payload.action)
      ? (payload.action as unknown as RunActionData)
      : request && isRecord(request.action)
        ? request.action
        : null;
    const actionId = event.action_id ?? (action ? str(action.action_id) : null);
    if (actionId === null) return;
    const actions = (this.#actions ??= new Map());
    const record = actions.get(actionId) ?? newActionRecord(actionId);
    actions.set(actionId, record);
    if (action) {
      record.action = ownOrCopy(action, owned);
      record.kind = str(action.kind) ?? record.kind;
      record.name = str(action.name) ?? record.name;
      record.capabilities = Array.isArray(action.capabilities)
        ? [...action.capabilities]
        : record.capabilities;
    }
    record.parent_action_id ??= event.parent_action_id;
    record.delegation_id ??= event.delegation_id;
    record.step ??= event.step;
    const status = ACTION_STATUS[event.type];
    if (status) record.status = status;
    switch (event.type) {
      case 'action.requested':
        record.requested_at ??= event.timestamp;
        break;
      case 'action.policy':
        if (isRecord(payload.decision))
          record.policy = ownOrCopy(payload.decision, owned) as PolicyDecisionData;
        record.requested_at ??= event.timestamp;
        break;
      case 'approval.required':
        record.approval_request_id = request ? str(request.request_id) : record.approval_request_id;
        break;
      case 'approval.decided': {
        const approved =
          isRecord(payload.decision) && typeof payload.decision.approved === 'boolean'
            ? payload.decision.approved
            : null;
        record.approved = approved;
        if (approved === true) record.status = 'approved';
        break;
      }
      case 'action.started':
        record.started_at = event.timestamp;
        break;
      case 'action.completed':
        record.result = payload.result === undefined ? null : ownOrCopy(payload.result, owned);
        record.ended_at = event.timestamp;
        break;
      case 'action.denied':
      case 'action.failed':
        record.error = errorBody(payload.error, owned);
        record.ended_at = event.timestamp;
        this.#error(event, payload.error, owned);
        break;
      default:
        break;
    }
  }

  #approval(
    event: RunEvent,
    payload: Record<string, unknown>,
    request: ApprovalRequestData | null,
    owned: boolean,
  ): void {
    const decision = isRecord(payload.decision)
      ? (payload.decision as unknown as ApprovalDecisionData)
      : null;
    const requestId =
      (request ? str(request.request_id) : null) ?? (decision ? str(decision.request_id) : null);
    if (requestId === null) return;
    const existing = this.#approvals?.get(requestId);
    const checkpoint: ApprovalCheckpoint = existing ?? {
      request_id: requestId,
      action_id:
        event.action_id ?? (request && isRecord(request.action) ? str(request.action.action_id) : null),
      request: request ? ownOrCopy(request, owned) : ({ request_id: requestId } as ApprovalRequestData),
      decision: null,
      status: 'pending',
      requested_at: event.timestamp,
      decided_at: null,
    };
    if (event.type === 'approval.decided' && decision) {
      checkpoint.decision = ownOrCopy(decision, owned);
      checkpoint.status = decision.approved === true ? 'approved' : 'rejected';
      checkpoint.decided_at = event.timestamp;
    }
    (this.#approvals ??= new Map()).set(requestId, checkpoint);
  }
}

/** A value taken from an event: as it is when the event is the fold's own copy, else a copy. */
function ownOrCopy<T>(value: T, owned: boolean): T {
  return owned ? value : snapshot(value);
}

/** An artifact whose parts list the fold may still extend: a copy of the list, sharing the parts. */
function detachedArtifact(artifact: Artifact): Artifact {
  return Array.isArray(artifact.parts) ? { ...artifact, parts: [...artifact.parts] } : { ...artifact };
}

function newActionRecord(actionId: string): ActionRecord {
  return {
    action_id: actionId,
    kind: null,
    name: null,
    capabilities: [],
    status: 'requested',
    action: null,
    policy: null,
    approval_request_id: null,
    approved: null,
    result: null,
    error: null,
    parent_action_id: null,
    delegation_id: null,
    step: null,
    requested_at: null,
    started_at: null,
    ended_at: null,
  };
}

/** Seconds from the first to the last stamp; 0 when none was stamped (both are infinite then). */
function secondsBetween(startMs: number, endMs: number): number {
  const ms = endMs - startMs;
  return Number.isFinite(ms) && ms > 0 ? ms / 1000 : 0;
}

let lastTimestamp = '';
let lastMs = NaN;

/** `Date.parse(timestamp)`, remembered for the last one: a run's events mostly share a millisecond. */
function msOf(timestamp: string): number {
  if (timestamp !== lastTimestamp) {
    lastMs = Date.parse(timestamp);
    lastTimestamp = timestamp;
  }
  return lastMs;
}

/**
 * The report of these events, in the order given, every one listed. The result is built from a copy
 * of the events and of the metadata, so it shares nothing with the caller's values (parts of it may
 * share with each other, e.g. the final task with the final event's payload).
 */
export function buildReportData(input: readonly RunEvent[], options: BuildReportOptions = {}): RunReportData {
  const fold = new ReportFold();
  for (const event of input) fold.add(event);
  return fold.build(options);
}
