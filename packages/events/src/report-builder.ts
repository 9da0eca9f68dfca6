/**
 * Folds a run's events into RunReport data. Pure: the same events always give the same report
 * (except `created_at`).
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
import { RUN_EVENT_VERSION, type PolicyDecisionData, type RunEvent } from './run-event.js';
import {
  emptyLLMMetrics,
  type ActionRecord,
  type ActionStatus,
  type ApprovalCheckpoint,
  type BudgetRecord,
  type ErrorRecord,
  type LLMMetrics,
  type RunReportData,
} from './run-report.js';

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function errorBody(value: unknown): ErrorBody | null {
  if (!isRecord(value)) return null;
  const body: ErrorBody = {
    code: typeof value.code === 'string' ? value.code : 'INTERNAL',
    message: typeof value.message === 'string' ? value.message : '',
  };
  if (value.data !== undefined) body.data = value.data;
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

class ReportFold {
  readonly ids: RunIds[] = [];
  taskId: string | null = null;
  status: TaskState | null = null;
  finalTask: Task | null = null;
  readonly manifests: ContextManifestData[] = [];
  readonly actions = new Map<string, ActionRecord>();
  readonly approvals = new Map<string, ApprovalCheckpoint>();
  readonly artifacts = new Map<string, Artifact>();
  readonly metrics: LLMMetrics = emptyLLMMetrics();
  readonly budget: BudgetRecord[] = [];
  readonly errors: ErrorRecord[] = [];

  add(event: RunEvent): void {
    this.ids.push({
      run_id: event.run_id,
      session_id: event.session_id,
      trace_id: event.trace_id,
      agent_name: event.agent_name,
    });
    this.taskId ??= event.task_id;
    const payload = event.payload as Record<string, unknown>;
    switch (event.type) {
      case 'task.status':
        if (typeof payload.state === 'string') this.status = payload.state as TaskState;
        if (event.final && isRecord(payload.task)) {
          // The builder folds its own copy of the events: the task is the report's already.
          this.finalTask = payload.task as unknown as Task;
          this.ids.push(runIdsOfTask(payload.task));
        }
        break;
      case 'task.artifact':
        if (isRecord(payload.artifact))
          this.#artifact(payload.artifact as unknown as Artifact, payload.append === true);
        break;
      case 'context.prepared':
        if (isRecord(payload.manifest))
          this.manifests.push(snapshot(payload.manifest) as unknown as ContextManifestData);
        break;
      case 'llm.call.started':
        this.metrics.started_calls += 1;
        break;
      case 'llm.call.completed':
        this.#llmCall(payload);
        break;
      case 'budget.warning':
      case 'budget.exceeded':
        this.budget.push({
          type: event.type,
          limit: str(payload.limit),
          used: typeof payload.used === 'number' ? payload.used : null,
          max: typeof payload.max === 'number' ? payload.max : null,
          timestamp: event.timestamp,
        });
        break;
      case 'task.error':
        this.#error(event, payload.error);
        break;
      default:
        break;
    }
    if (event.type.startsWith('action.') || event.type.startsWith('approval.')) this.#action(event, payload);
  }

  #artifact(artifact: Artifact, append: boolean): void {
    const existing = this.artifacts.get(artifact.id);
    if (append && existing) {
      existing.parts.push(...snapshot(artifact.parts ?? []));
      return;
    }
    this.artifacts.set(artifact.id, snapshot(artifact));
  }

  #llmCall(payload: Record<string, unknown>): void {
    const usage = isRecord(payload.usage) ? payload.usage : {};
    const input = num(usage.input_tokens);
    const output = num(usage.output_tokens);
    const latency = num(payload.latency_ms);
    const m = this.metrics;
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

  #error(event: RunEvent, value: unknown): void {
    const body = errorBody(value);
    if (body)
      this.errors.push({ ...body, type: event.type, action_id: event.action_id, timestamp: event.timestamp });
  }

  #action(event: RunEvent, payload: Record<string, unknown>): void {
    const request = isRecord(payload.request) ? (payload.request as unknown as ApprovalRequestData) : null;
    if (event.type === 'approval.required' || event.type === 'approval.decided')
      this.#approval(event, payload, request);
    const action = isRecord(payload.action)
      ? (payload.action as unknown as RunActionData)
      : request && isRecord(request.action)
        ? request.action
        : null;
    const actionId = event.action_id ?? (action ? str(action.action_id) : null);
    if (actionId === null) return;
    const record = this.actions.get(actionId) ?? newActionRecord(actionId);
    this.actions.set(actionId, record);
    if (action) {
      record.action = snapshot(action);
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
        if (isRecord(payload.decision)) record.policy = snapshot(payload.decision) as PolicyDecisionData;
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
        record.result = payload.result === undefined ? null : snapshot(payload.result);
        record.ended_at = event.timestamp;
        break;
      case 'action.denied':
      case 'action.failed':
        record.error = errorBody(payload.error);
        record.ended_at = event.timestamp;
        this.#error(event, payload.error);
        break;
      default:
        break;
    }
  }

  #approval(event: RunEvent, payload: Record<string, unknown>, request: ApprovalRequestData | null): void {
    const decision = isRecord(payload.decision)
      ? (payload.decision as unknown as ApprovalDecisionData)
      : null;
    const requestId =
      (request ? str(request.request_id) : null) ?? (decision ? str(decision.request_id) : null);
    if (requestId === null) return;
    const existing = this.approvals.get(requestId);
    const checkpoint: ApprovalCheckpoint = existing ?? {
      request_id: requestId,
      action_id:
        event.action_id ?? (request && isRecord(request.action) ? str(request.action.action_id) : null),
      request: snapshot(request ?? ({ request_id: requestId } as ApprovalRequestData)),
      decision: null,
      status: 'pending',
      requested_at: event.timestamp,
      decided_at: null,
    };
    if (request && !existing) checkpoint.request = snapshot(request);
    if (event.type === 'approval.decided' && decision) {
      checkpoint.decision = snapshot(decision);
      checkpoint.status = decision.approved === true ? 'approved' : 'rejected';
      checkpoint.decided_at = event.timestamp;
    }
    this.approvals.set(requestId, checkpoint);
  }
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

function secondsBetween(start: string | null, end: string | null): number {
  if (start === null || end === null) return 0;
  const ms = Date.parse(end) - Date.parse(start);
  return Number.isFinite(ms) && ms > 0 ? ms / 1000 : 0;
}

export interface BuildReportOptions {
  metadata?: JsonObject;
  /** Defaults used when no event names them (the recorder's constructor options). */
  defaults?: RunIds;
}

/**
 * The report of these events, in the order given. The result is built from a copy of the events
 * and of the metadata, so it shares nothing with the caller's values (parts of it may share with
 * each other, e.g. the final task with the final event's payload).
 */
export function buildReportData(input: readonly RunEvent[], options: BuildReportOptions = {}): RunReportData {
  const events = snapshot([...input]);
  const fold = new ReportFold();
  for (const event of events) fold.add(event);
  const ids = mergeRunIds(...fold.ids, ...(options.defaults ? [options.defaults] : []));
  const stamps = events.map((event) => event.timestamp).filter((t) => Number.isFinite(Date.parse(t)));
  stamps.sort((a, b) => Date.parse(a) - Date.parse(b));
  const startedAt = stamps[0] ?? null;
  const endedAt = stamps[stamps.length - 1] ?? null;
  const artifacts = [...fold.artifacts.values()];
  for (const artifact of fold.finalTask?.artifacts ?? []) {
    if (!fold.artifacts.has(artifact.id)) artifacts.push(snapshot(artifact));
  }
  return {
    version: RUN_EVENT_VERSION,
    run_id: ids.run_id,
    task_id: fold.taskId,
    session_id: ids.session_id,
    trace_id: ids.trace_id,
    agent_name: ids.agent_name,
    status: fold.finalTask?.state ?? fold.status,
    started_at: startedAt,
    ended_at: endedAt,
    duration_seconds: secondsBetween(startedAt, endedAt),
    created_at: nowIso(),
    events,
    context_manifests: fold.manifests,
    actions: [...fold.actions.values()],
    approvals: [...fold.approvals.values()],
    artifacts,
    llm_metrics: fold.metrics,
    budget_events: fold.budget,
    errors: fold.errors,
    final_task: fold.finalTask,
    metadata: snapshot(options.metadata ?? {}),
  };
}
