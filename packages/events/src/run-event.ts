/**
 * RunEvent: the normalized, versioned envelope built from transport TaskEvents, delivered to an
 * EventSink (the fields are listed in the README's "RunEvent" section).
 * Plain snake_case records; `RunEvent.fromTaskEvent` is the one place that builds them.
 */
import {
  nowIso,
  TASK_EVENT_TYPES,
  ValueError,
  type ApprovalDecisionData,
  type ApprovalRequestData,
  type Artifact,
  type ErrorBody,
  type JsonObject,
  type Message,
  type RunActionData,
  type Task,
  type TaskEvent,
  type TaskEventType,
  type TaskState,
} from '@agent/core';
import { checkOptionNames, isRecord, optionNames, snapshot } from '@agent/core/internal';
import type { ContextManifestData } from './context-manifest.js';
import { runIdsOf, runIdsOfTask, type RunContextInput } from './run-context.js';

/** The envelope version every RunEvent carries; it changes only when the envelope does. */
export const RUN_EVENT_VERSION = '1.0';

/** Every event type: the transport's `task.*` and `llm.stream`, plus the runtime's (`TASK_EVENT_TYPES`). */
export const RUN_EVENT_TYPES: readonly TaskEventType[] = TASK_EVENT_TYPES;
export type RunEventType = TaskEventType;

export type RunEventSeverity = 'info' | 'warning' | 'error';

/** The ids `fromTaskEvent` promotes to the envelope and also writes into `payload`. */
export const PROMOTED_ID_FIELDS = [
  'run_id',
  'session_id',
  'trace_id',
  'agent_name',
  'step',
  'span_id',
  'parent_span_id',
  'action_id',
  'parent_action_id',
  'delegation_id',
] as const;

/** The policy outcome carried by `action.policy` (the runtime's CapabilityPolicy result). */
export interface PolicyDecisionData extends JsonObject {
  outcome: 'allow' | 'deny' | 'require_approval';
  capability?: string | null;
  rule?: string | null;
  reason?: string | null;
}

export interface LLMUsageData extends JsonObject {
  input_tokens?: number;
  output_tokens?: number;
}

/** Fields every payload has: the original task event's own. */
export interface BasePayload extends JsonObject {
  type: RunEventType;
  task_id: string;
  timestamp: string;
}

export interface TaskStatusPayload extends BasePayload {
  state: TaskState;
  final: boolean;
  message?: Message;
  task?: Task;
}
export interface TaskArtifactPayload extends BasePayload {
  artifact: Artifact;
  append?: boolean;
  last_chunk?: boolean;
}
export interface LLMStreamPayload extends BasePayload {
  delta: string;
}
export interface TaskProgressPayload extends BasePayload {
  /** 0..1 when known. */
  progress?: number;
  message?: string;
}
export interface ErrorPayload extends BasePayload {
  error?: ErrorBody;
}
export interface ContextPreparedPayload extends BasePayload {
  manifest?: ContextManifestData;
}
export interface LLMCallPayload extends BasePayload {
  provider?: string;
  model?: string;
  usage?: LLMUsageData;
  latency_ms?: number;
  finish_reason?: string;
}
export interface BudgetPayload extends BasePayload {
  /** The RunBudget field, e.g. `max_llm_calls`. */
  limit?: string;
  used?: number;
  max?: number;
}
export interface ActionPayload extends BasePayload {
  action?: RunActionData;
  result?: unknown;
  error?: ErrorBody;
}
export interface ActionPolicyPayload extends BasePayload {
  action?: RunActionData;
  decision?: PolicyDecisionData;
}
export interface ApprovalPayload extends BasePayload {
  request?: ApprovalRequestData;
  decision?: ApprovalDecisionData;
}

/** The envelope fields, shared by every event type. */
export interface RunEventEnvelope<TType extends RunEventType, TPayload extends BasePayload> {
  version: typeof RUN_EVENT_VERSION;
  type: TType;
  run_id: string | null;
  task_id: string;
  /** Agent that emitted or handled the event: the event's own, else the option, else the last `agent_chain` entry. */
  agent_name: string | null;
  /** Also carried: the run's session and trace, so sinks and telemetry need no second lookup. */
  session_id: string | null;
  trace_id: string | null;
  /** Assigned by the sink: 1, 2, 3… per sink; 0 until then. */
  sequence: number;
  step: number | null;
  span_id: string | null;
  parent_span_id: string | null;
  action_id: string | null;
  parent_action_id: string | null;
  delegation_id: string | null;
  severity: RunEventSeverity;
  summary: string | null;
  /** The source event's timestamp (ISO 8601, UTC). */
  timestamp: string;
  /** The whole original task event, with the promoted values written in. */
  payload: TPayload;
  final: boolean;
  /** Promoted from the payload when the event carries one (`context.prepared`). */
  manifest?: ContextManifestData;
  /** Promoted from `action`, or from `request.action` on approval events. */
  action?: RunActionData;
  /** Promoted on approval events. */
  request?: ApprovalRequestData;
  /** The policy decision (`action.policy`) or the approval decision (`approval.decided`). */
  decision?: PolicyDecisionData | ApprovalDecisionData;
}

export type TaskStatusRunEvent = RunEventEnvelope<'task.status', TaskStatusPayload>;
export type TaskArtifactRunEvent = RunEventEnvelope<'task.artifact', TaskArtifactPayload>;
export type TaskProgressRunEvent = RunEventEnvelope<'task.progress', TaskProgressPayload>;
export type TaskErrorRunEvent = RunEventEnvelope<'task.error', ErrorPayload>;
export type LLMStreamRunEvent = RunEventEnvelope<'llm.stream', LLMStreamPayload>;
export type ContextPreparedRunEvent = RunEventEnvelope<'context.prepared', ContextPreparedPayload>;
export type LLMCallStartedRunEvent = RunEventEnvelope<'llm.call.started', LLMCallPayload>;
export type LLMCallCompletedRunEvent = RunEventEnvelope<'llm.call.completed', LLMCallPayload>;
export type BudgetWarningRunEvent = RunEventEnvelope<'budget.warning', BudgetPayload>;
export type BudgetExceededRunEvent = RunEventEnvelope<'budget.exceeded', BudgetPayload>;
export type ActionRequestedRunEvent = RunEventEnvelope<'action.requested', ActionPayload>;
export type ActionPolicyRunEvent = RunEventEnvelope<'action.policy', ActionPolicyPayload>;
export type ApprovalRequiredRunEvent = RunEventEnvelope<'approval.required', ApprovalPayload>;
export type ApprovalDecidedRunEvent = RunEventEnvelope<'approval.decided', ApprovalPayload>;
export type ActionStartedRunEvent = RunEventEnvelope<'action.started', ActionPayload>;
export type ActionCompletedRunEvent = RunEventEnvelope<'action.completed', ActionPayload>;
export type ActionDeniedRunEvent = RunEventEnvelope<'action.denied', ActionPayload>;
export type ActionFailedRunEvent = RunEventEnvelope<'action.failed', ActionPayload>;

/** The normalized event, discriminated on `type`. */
export type RunEvent =
  | TaskStatusRunEvent
  | TaskArtifactRunEvent
  | TaskProgressRunEvent
  | TaskErrorRunEvent
  | LLMStreamRunEvent
  | ContextPreparedRunEvent
  | LLMCallStartedRunEvent
  | LLMCallCompletedRunEvent
  | BudgetWarningRunEvent
  | BudgetExceededRunEvent
  | ActionRequestedRunEvent
  | ActionPolicyRunEvent
  | ApprovalRequiredRunEvent
  | ApprovalDecidedRunEvent
  | ActionStartedRunEvent
  | ActionCompletedRunEvent
  | ActionDeniedRunEvent
  | ActionFailedRunEvent;

/** The event of one type. */
export type RunEventOf<TType extends RunEventType> = Extract<RunEvent, { type: TType }>;

export interface FromTaskEventOptions {
  /** The run's context; ids found on the event itself take precedence. */
  context?: RunContextInput | null;
  /** Used when the event carries no `agent_name`. */
  agentName?: string;
}

const FROM_TASK_EVENT_OPTIONS = optionNames<FromTaskEventOptions>({ context: true, agentName: true });

const SEVERITY: Partial<Record<RunEventType, RunEventSeverity>> = {
  'task.error': 'error',
  'action.failed': 'error',
  'budget.warning': 'warning',
  'budget.exceeded': 'warning',
  'action.denied': 'warning',
};

const TYPES = new Set<string>(RUN_EVENT_TYPES);

export function isRunEventType(value: unknown): value is RunEventType {
  return typeof value === 'string' && TYPES.has(value);
}

/**
 * The severity rule: `error` for `task.error` and `action.failed`; `warning` for `budget.warning`,
 * `budget.exceeded` and `action.denied`; `info` for everything else.
 */
export function severityOf(type: RunEventType): RunEventSeverity {
  return SEVERITY[type] ?? 'info';
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function actionOf(event: Record<string, unknown>): Record<string, unknown> | null {
  if (isRecord(event.action)) return event.action;
  if (isRecord(event.request) && isRecord(event.request.action)) return event.request.action;
  return null;
}

function defaultSummary(type: RunEventType, event: Record<string, unknown>): string | null {
  const action = actionOf(event);
  const actionName = action && typeof action.name === 'string' ? action.name : null;
  const error = isRecord(event.error) && typeof event.error.message === 'string' ? event.error.message : null;
  switch (type) {
    case 'task.status':
      return typeof event.state === 'string' ? `task ${event.state}` : null;
    case 'task.progress':
      return typeof event.message === 'string' ? event.message : null;
    case 'task.error':
      return error;
    case 'context.prepared':
      return isRecord(event.manifest) && typeof event.manifest.total_estimated_tokens === 'number'
        ? `context prepared: ${event.manifest.total_estimated_tokens} estimated tokens`
        : 'context prepared';
    case 'llm.call.started':
    case 'llm.call.completed':
      return typeof event.model === 'string'
        ? `${event.model} call ${type === 'llm.call.started' ? 'started' : 'completed'}`
        : null;
    case 'budget.warning':
    case 'budget.exceeded':
      return typeof event.limit === 'string'
        ? `${event.limit} ${type === 'budget.warning' ? 'near' : 'exceeded'}: ${String(event.used)}/${String(event.max)}`
        : null;
    case 'action.policy':
      return actionName && isRecord(event.decision) && typeof event.decision.outcome === 'string'
        ? `${actionName}: ${event.decision.outcome}`
        : actionName;
    case 'approval.decided':
      return actionName && isRecord(event.decision) && typeof event.decision.approved === 'boolean'
        ? `${actionName}: ${event.decision.approved ? 'approved' : 'rejected'}`
        : actionName;
    case 'action.failed':
    case 'action.denied':
      return actionName && error ? `${actionName}: ${error}` : (actionName ?? error);
    case 'action.requested':
    case 'approval.required':
    case 'action.started':
    case 'action.completed':
      return actionName ? `${actionName} ${type.slice(type.indexOf('.') + 1)}` : null;
    default:
      return null;
  }
}

/** The first non-null of three, in priority order. */
function first3(a: string | null, b: string | null, c: string | null): string | null {
  return a ?? b ?? c;
}

/**
 * Builds the normalized envelope of a task event. Ids come from the event itself, then
 * `options.context`, then the run context of a final status's serialized task; `sequence` is 0
 * until a sink assigns it. The input is not mutated.
 * @throws ValueError when the input is not a task event of a known type.
 */
function fromTaskEvent(taskEvent: TaskEvent, options: FromTaskEventOptions = {}): RunEvent {
  if (!isRecord(taskEvent)) throw new ValueError('RunEvent.fromTaskEvent needs a task event object');
  checkOptionNames('RunEvent.fromTaskEvent', options, FROM_TASK_EVENT_OPTIONS);
  const context = options.context ?? null;
  const agentName = options.agentName;

  const source = taskEvent as Record<string, unknown>;
  const type = source.type;
  if (!isRunEventType(type)) {
    throw new ValueError(
      `Unknown task event type ${JSON.stringify(type)}; expected one of ${RUN_EVENT_TYPES.join(', ')}`,
      {
        data: { type: typeof type === 'string' ? type : null },
      },
    );
  }
  const fromTask = runIdsOfTask(type === 'task.status' ? source.task : null);
  const taskId = str(source.task_id) ?? (isRecord(source.task) ? str(source.task.id) : null);
  if (taskId === null) throw new ValueError(`Task event ${type} has no task_id`, { data: { type } });

  const contextIds = runIdsOf(context);
  // Ids from the event itself, then the context, then a final status's task. An explicit agentName
  // outranks the context's agent_chain, but not the event's own name.
  const runId = first3(str(source.run_id), contextIds.run_id, fromTask.run_id);
  const sessionId = first3(str(source.session_id), contextIds.session_id, fromTask.session_id);
  const traceId = first3(str(source.trace_id), contextIds.trace_id, fromTask.trace_id);
  const agent = first3(str(source.agent_name), str(agentName) ?? contextIds.agent_name, fromTask.agent_name);

  const action = actionOf(source);
  const step = stepOf(source.step);
  const spanId = str(source.span_id);
  const parentSpanId = str(source.parent_span_id);
  const actionId = str(source.action_id) ?? (action ? str(action.action_id) : null);
  const parentActionId = str(source.parent_action_id);
  const delegationId = str(source.delegation_id);
  const timestamp = str(source.timestamp) ?? nowIso();
  // The copy is a fresh plain object: the envelope's fields are written into it, existing keys
  // keeping their place and new ones appended, in PROMOTED_ID_FIELDS order.
  const payload = snapshot(source);
  payload.task_id = taskId;
  payload.timestamp = timestamp;
  if (runId !== null) payload.run_id = runId;
  if (sessionId !== null) payload.session_id = sessionId;
  if (traceId !== null) payload.trace_id = traceId;
  if (agent !== null) payload.agent_name = agent;
  if (step !== null) payload.step = step;
  if (spanId !== null) payload.span_id = spanId;
  if (parentSpanId !== null) payload.parent_span_id = parentSpanId;
  if (actionId !== null) payload.action_id = actionId;
  if (parentActionId !== null) payload.parent_action_id = parentActionId;
  if (delegationId !== null) payload.delegation_id = delegationId;
  if (action && !isRecord(payload.action)) payload.action = snapshot(action);
  return envelopeOf(payload as BasePayload, 0);
}

function stepOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * The event whose payload is `payload`: every envelope field is read from the payload (where
 * {@link fromTaskEvent} wrote the ids it found) or follows from its type. The one derivation of an
 * envelope, so that a stored report can keep an event as its payload alone and read it back the
 * same (see {@link isEnvelopeOf}). `payload` is used, not copied.
 */
export function envelopeOf(payload: BasePayload, sequence: number): RunEvent {
  const source = payload as Record<string, unknown>;
  const type = payload.type;
  const event: Record<string, unknown> = {
    version: RUN_EVENT_VERSION,
    type,
    run_id: str(source.run_id),
    task_id: payload.task_id,
    agent_name: str(source.agent_name),
    session_id: str(source.session_id),
    trace_id: str(source.trace_id),
    sequence,
    step: stepOf(source.step),
    span_id: str(source.span_id),
    parent_span_id: str(source.parent_span_id),
    action_id: actionIdOf(source),
    parent_action_id: str(source.parent_action_id),
    delegation_id: str(source.delegation_id),
    severity: severityOf(type),
    summary: summaryOf(type, source),
    timestamp: payload.timestamp,
    payload,
    final: finalOf(type, source),
  };
  // The payload's objects an envelope also carries at its top, when the payload has them; by name,
  // as everywhere here: computed keys took V8's slower paths.
  if (isRecord(source.manifest)) event.manifest = source.manifest;
  if (isRecord(source.action)) event.action = source.action;
  if (isRecord(source.request)) event.request = source.request;
  if (isRecord(source.decision)) event.decision = source.decision;
  return event as unknown as RunEvent;
}

/**
 * Envelopes {@link sealedEnvelopeOf} made for data nobody changes: {@link isEnvelopeOf} knows its
 * answer for them without comparing a field.
 */
const sealedEnvelopes = new WeakSet<object>();

/**
 * `envelopeOf` for an event that is never changed afterwards: a report's own, which it only ever
 * hands out as copies. A store writing that report then keeps it as its payload at once.
 */
export function sealedEnvelopeOf(payload: BasePayload, sequence: number): RunEvent {
  const event = envelopeOf(payload, sequence);
  sealedEnvelopes.add(event);
  return event;
}

/**
 * The events a report lists as its fold keeps them: each entry an event whole (its `sequences`
 * entry -1), or only the payload of one that is exactly `envelopeOf(payload, sequence)`, half of
 * what the whole event holds. A store writes such a payload as it is, with its sequence, so the
 * envelope is made only when someone reads the events.
 */
export interface ListedEvents {
  readonly entries: readonly (RunEvent | BasePayload)[];
  readonly sequences: readonly number[];
}

/** The events of a listing, each a whole event: the sealed envelope of a payload kept alone. */
export function envelopesOfListed(listed: ListedEvents): RunEvent[] {
  const { entries, sequences } = listed;
  return entries.map((entry, index) => {
    const sequence = sequences[index]!;
    return sequence < 0 ? (entry as RunEvent) : sealedEnvelopeOf(entry as BasePayload, sequence);
  });
}

/** The envelope's `action_id`: the payload's own, else its action's. */
function actionIdOf(source: Record<string, unknown>): string | null {
  const action = actionOf(source);
  return str(source.action_id) ?? (action ? str(action.action_id) : null);
}

/** The envelope's `summary`: the payload's own or its type's default, cut to 200 characters. */
function summaryOf(type: RunEventType, source: Record<string, unknown>): string | null {
  const summary = str(source.summary) ?? defaultSummary(type, source);
  return summary === null ? null : summary.length > 200 ? `${summary.slice(0, 199)}…` : summary;
}

/** The envelope's `final`: only a status says it. */
function finalOf(type: RunEventType, source: Record<string, unknown>): boolean {
  return type === 'task.status' && source.final === true;
}

/**
 * True when `event` is exactly what {@link envelopeOf} makes of its payload and sequence: the same
 * fields with the same values, its promoted objects the payload's own or copies with the same JSON
 * text. Every event `fromTaskEvent` built is, and stays so through copies, until someone changes it.
 * Each field is compared with what envelopeOf derives for it, by the same function, without building
 * the envelope: this runs for every event a report stores.
 */
export function isEnvelopeOf(event: RunEvent): boolean {
  if (sealedEnvelopes.has(event)) return true;
  const payload: unknown = event.payload;
  if (!isRecord(payload) || !isRunEventType(payload.type) || typeof payload.task_id !== 'string')
    return false;
  if (typeof payload.timestamp !== 'string' || payload.timestamp === '') return false;
  const type = payload.type;
  // Field by field, by name: reading the fields by computed keys took three times as long.
  if (!(
    event.version === RUN_EVENT_VERSION &&
    event.type === type &&
    event.run_id === str(payload.run_id) &&
    event.task_id === payload.task_id &&
    event.agent_name === str(payload.agent_name) &&
    event.session_id === str(payload.session_id) &&
    event.trace_id === str(payload.trace_id) &&
    event.step === stepOf(payload.step) &&
    event.span_id === str(payload.span_id) &&
    event.parent_span_id === str(payload.parent_span_id) &&
    event.action_id === actionIdOf(payload) &&
    event.parent_action_id === str(payload.parent_action_id) &&
    event.delegation_id === str(payload.delegation_id) &&
    event.severity === severityOf(type) &&
    event.summary === summaryOf(type, payload) &&
    event.timestamp === payload.timestamp &&
    event.final === finalOf(type, payload)
  ))
    return false;
  const manifest = promotion(event.manifest, payload.manifest);
  const action = promotion(event.action, payload.action);
  const request = promotion(event.request, payload.request);
  const decision = promotion(event.decision, payload.decision);
  if (manifest < 0 || action < 0 || request < 0 || decision < 0) return false;
  return ownKeyCount(event) === ENVELOPE_FIELDS + manifest + action + request + decision;
}

/**
 * How many keys `for…in` lists on `value`: its own enumerable ones, unless someone gave
 * Object.prototype an enumerable property. `Object.keys` made an array per event of every report
 * stored (~100 bytes each) where this reads the object's cached key list.
 */
function ownKeyCount(value: object): number {
  let count = 0;
  for (const key in value) if (Object.hasOwn(value, key)) count += 1;
  return count;
}

/** The fields {@link envelopeOf} writes for any payload, promoted objects aside: read from one it made. */
const ENVELOPE_FIELDS = Object.keys(
  envelopeOf({ type: 'task.status', task_id: '', timestamp: '' } as BasePayload, 0),
).length;

/**
 * How the envelope carries one of the payload's promoted objects: 0 when neither has it, 1 when it
 * carries the payload's own or a copy with the same JSON text, -1 when it carries anything else or
 * lacks it.
 */
function promotion(own: unknown, inPayload: unknown): number {
  if (!isRecord(inPayload)) return own === undefined ? 0 : -1;
  return own === inPayload || (isRecord(own) && JSON.stringify(own) === JSON.stringify(inPayload)) ? 1 : -1;
}

/** Structural check used where events arrive from storage or another process. */
function isRunEvent(value: unknown): value is RunEvent {
  return (
    isRecord(value) &&
    value.version === RUN_EVENT_VERSION &&
    isRunEventType(value.type) &&
    typeof value.task_id === 'string' &&
    typeof value.sequence === 'number' &&
    isRecord(value.payload)
  );
}

/**
 * Validates an event from outside (a stored report, another process) and returns a copy.
 * @throws ValueError naming the first bad field.
 */
function parseRunEvent(value: unknown): RunEvent {
  if (!isRecord(value)) throw new ValueError('A RunEvent must be an object');
  if (value.version !== RUN_EVENT_VERSION) {
    throw new ValueError(
      `Unsupported RunEvent version ${JSON.stringify(value.version)}; this library reads "${RUN_EVENT_VERSION}"`,
      {
        data: { field: 'version' },
      },
    );
  }
  if (!isRunEventType(value.type))
    throw new ValueError(`Unknown RunEvent type ${JSON.stringify(value.type)}`, { data: { field: 'type' } });
  if (typeof value.task_id !== 'string')
    throw new ValueError('RunEvent.task_id must be a string', { data: { field: 'task_id' } });
  if (typeof value.sequence !== 'number' || !Number.isInteger(value.sequence) || value.sequence < 0) {
    throw new ValueError('RunEvent.sequence must be a non-negative integer', { data: { field: 'sequence' } });
  }
  if (!isRecord(value.payload))
    throw new ValueError('RunEvent.payload must be an object', { data: { field: 'payload' } });
  return snapshot(value) as unknown as RunEvent;
}

/** The value side of `RunEvent`: construction and checks. */
export const RunEvent = Object.freeze({
  version: RUN_EVENT_VERSION,
  types: RUN_EVENT_TYPES,
  fromTaskEvent,
  is: isRunEvent,
  parse: parseRunEvent,
  severityOf,
});
