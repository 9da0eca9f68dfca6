/**
 * RunReport: the durable summary of one run, built from its RunEvents: context manifests, actions,
 * approval checkpoints, artifacts, LLM metrics and the final task when the final event carries it.
 * The class is camelCase; `toDict()` is the snake_case JSON that stores persist.
 */
import {
  ValueError,
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
import { RedactionPolicy } from './redaction.js';
import {
  envelopesOfListed,
  RUN_EVENT_VERSION,
  RunEvent,
  type ListedEvents,
  type PolicyDecisionData,
} from './run-event.js';

/** Where an action got to; the last event seen for it decides. */
export type ActionStatus =
  | 'requested'
  | 'evaluated'
  | 'awaiting_approval'
  | 'approved'
  | 'started'
  | 'completed'
  | 'denied'
  | 'failed';

/** One RunAction's path through policy, approval and execution. */
export interface ActionRecord {
  action_id: string;
  kind: string | null;
  name: string | null;
  capabilities: string[];
  status: ActionStatus;
  /** The last serialized RunAction seen (previews included). */
  action: RunActionData | null;
  /** The `action.policy` decision, when one was emitted. */
  policy: PolicyDecisionData | null;
  approval_request_id: string | null;
  /** `true`/`false` once an approval was decided; `null` when none was needed or it is pending. */
  approved: boolean | null;
  result: unknown;
  error: ErrorBody | null;
  parent_action_id: string | null;
  delegation_id: string | null;
  step: number | null;
  requested_at: string | null;
  started_at: string | null;
  ended_at: string | null;
}

/** One approval checkpoint: the request and, once given, the decision. */
export interface ApprovalCheckpoint {
  request_id: string;
  action_id: string | null;
  request: ApprovalRequestData;
  decision: ApprovalDecisionData | null;
  status: 'pending' | 'approved' | 'rejected';
  requested_at: string;
  decided_at: string | null;
}

export interface ModelMetrics {
  provider: string | null;
  model: string | null;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  total_latency_ms: number;
}

/** Model-call metrics summed over `llm.call.completed` events. */
export interface LLMMetrics {
  /** Completed calls. */
  calls: number;
  /** Started calls (more than `calls` when a call failed or was canceled). */
  started_calls: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Sum of `latency_ms` (milliseconds). */
  total_latency_ms: number;
  max_latency_ms: number;
  /** Keyed `provider/model`. */
  by_model: Record<string, ModelMetrics>;
}

export interface BudgetRecord {
  type: 'budget.warning' | 'budget.exceeded';
  limit: string | null;
  used: number | null;
  max: number | null;
  timestamp: string;
}

export interface ErrorRecord extends ErrorBody {
  /** The event that carried it: `task.error`, `action.failed` or `action.denied`. */
  type: string;
  action_id: string | null;
  timestamp: string;
}

/** The JSON form of a report (README "RunReport fields"). */
export interface RunReportData {
  version: typeof RUN_EVENT_VERSION;
  run_id: string | null;
  task_id: string | null;
  session_id: string | null;
  trace_id: string | null;
  agent_name: string | null;
  /** The final task state, else the last `task.status` state. */
  status: TaskState | null;
  /** First and last event timestamps. */
  started_at: string | null;
  ended_at: string | null;
  /** `ended_at - started_at` in seconds; 0 without events. */
  duration_seconds: number;
  /** When the report was built. */
  created_at: string;
  /**
   * The run's events in recording order: all of them, except that events of the streamed types
   * (`task.artifact`, `llm.stream`, `task.progress`) past the recorder's `maxStreamedEvents` are
   * left out.
   */
  events: RunEvent[];
  /** How many streamed events `events` leaves out; they are still folded into the other fields. */
  dropped_events: number;
  context_manifests: ContextManifestData[];
  actions: ActionRecord[];
  approvals: ApprovalCheckpoint[];
  artifacts: Artifact[];
  llm_metrics: LLMMetrics;
  budget_events: BudgetRecord[];
  errors: ErrorRecord[];
  /** The serialized task of the final `task.status`, when the stream carried it. */
  final_task: Task | null;
  metadata: JsonObject;
}

export interface RunReportDictOptions {
  /** Masking applied to the output. Default `RedactionPolicy.default()`; `null` returns the raw data. */
  redactionPolicy?: RedactionPolicy | null;
}

export function emptyLLMMetrics(): LLMMetrics {
  return {
    calls: 0,
    started_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    total_latency_ms: 0,
    max_latency_ms: 0,
    by_model: {},
  };
}

const clone = snapshot;

function optionalString(data: Record<string, unknown>, key: string): string | null {
  const value = data[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string')
    throw new ValueError(`RunReport.${key} must be a string or null`, { data: { field: key } });
  return value;
}

function list<T>(data: Record<string, unknown>, key: string): T[] {
  const value = data[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new ValueError(`RunReport.${key} must be an array`, { data: { field: key } });
  return value as T[];
}

/**
 * Set while {@link adoptListedRunReport} constructs: the listing the adopted data's events come
 * from. The constructor then keeps the data it is given.
 */
let adopting: ListedEvents | null = null;
let partsOf: (report: RunReport) => ReportParts;

/** A report's own data and, while its events were never read, the listing they come from. */
export interface ReportParts {
  /** With `listed`, `events` is an empty list standing in their place. */
  data: RunReportData;
  listed: ListedEvents | null;
}

export class RunReport {
  readonly #data: RunReportData;
  /**
   * A report built by a recorder keeps its events as the recorder's fold does until they are read:
   * a report that is only stored (the runtime's) never makes their envelopes, which a store would
   * take apart again. `#data.events` is an empty list, in its place in the key order, meanwhile.
   */
  #listed: ListedEvents | null;

  static {
    partsOf = (report) => ({ data: report.#data, listed: report.#listed });
  }

  /** Reports are built by `RunRecorder.toReport()` or restored with `RunReport.fromDict()`. */
  constructor(data: RunReportData) {
    const listed = adopting;
    adopting = null;
    this.#data = listed === null ? clone(data) : data;
    this.#listed = listed;
    // Data written before reports counted what they left out lists every event.
    if (typeof this.#data.dropped_events !== 'number') this.#data.dropped_events = 0;
  }

  get version(): string {
    return this.#data.version;
  }
  get runId(): string | null {
    return this.#data.run_id;
  }
  get taskId(): string | null {
    return this.#data.task_id;
  }
  get sessionId(): string | null {
    return this.#data.session_id;
  }
  get traceId(): string | null {
    return this.#data.trace_id;
  }
  get agentName(): string | null {
    return this.#data.agent_name;
  }
  get status(): TaskState | null {
    return this.#data.status;
  }
  get startedAt(): string | null {
    return this.#data.started_at;
  }
  get endedAt(): string | null {
    return this.#data.ended_at;
  }
  get durationSeconds(): number {
    return this.#data.duration_seconds;
  }
  get createdAt(): string {
    return this.#data.created_at;
  }
  /** Copies: a report is a record of the past. */
  get events(): RunEvent[] {
    return clone(this.#full().events);
  }
  get contextManifests(): ContextManifestData[] {
    return clone(this.#data.context_manifests);
  }
  get actions(): ActionRecord[] {
    return clone(this.#data.actions);
  }
  get approvals(): ApprovalCheckpoint[] {
    return clone(this.#data.approvals);
  }
  get artifacts(): Artifact[] {
    return clone(this.#data.artifacts);
  }
  get llmMetrics(): LLMMetrics {
    return clone(this.#data.llm_metrics);
  }
  get budgetEvents(): BudgetRecord[] {
    return clone(this.#data.budget_events);
  }
  get errors(): ErrorRecord[] {
    return clone(this.#data.errors);
  }
  get finalTask(): Task | null {
    return clone(this.#data.final_task);
  }
  get metadata(): JsonObject {
    return clone(this.#data.metadata);
  }
  /** The events the report lists (see {@link droppedEvents}). */
  get eventCount(): number {
    return this.#listed === null ? this.#data.events.length : this.#listed.entries.length;
  }
  /** Streamed events the report does not list: folded into its artifacts and task, then dropped. */
  get droppedEvents(): number {
    return this.#data.dropped_events;
  }

  /**
   * The JSON form. Redacted with the default policy unless told otherwise, because this is what
   * gets persisted and exported.
   */
  toDict(options: RunReportDictOptions = {}): RunReportData {
    const policy =
      options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
    const data = this.#full();
    return policy === null ? clone(data) : policy.redact(data);
  }

  /** The data with its events made, once. */
  #full(): RunReportData {
    if (this.#listed !== null) {
      this.#data.events = envelopesOfListed(this.#listed);
      this.#listed = null;
    }
    return this.#data;
  }

  /** `JSON.stringify(report)` gives the redacted dict. */
  toJSON(): RunReportData {
    return this.toDict();
  }

  /**
   * Restores a report from `toDict()` output (a stored row, a file).
   * @throws ValueError naming the first malformed field.
   */
  static fromDict(data: unknown): RunReport {
    if (!isRecord(data)) throw new ValueError('RunReport.fromDict needs an object');
    if (data.version !== RUN_EVENT_VERSION) {
      throw new ValueError(
        `Unsupported RunReport version ${JSON.stringify(data.version)}; this library reads "${RUN_EVENT_VERSION}"`,
        {
          data: { field: 'version' },
        },
      );
    }
    const events = list<unknown>(data, 'events').map((event, index) => {
      try {
        return RunEvent.parse(event);
      } catch (error) {
        throw new ValueError(`RunReport.events[${index}]: ${(error as Error).message}`, {
          data: { field: `events[${index}]` },
        });
      }
    });
    const dropped = data.dropped_events ?? 0;
    if (typeof dropped !== 'number' || !Number.isInteger(dropped) || dropped < 0) {
      throw new ValueError('RunReport.dropped_events must be a non-negative integer', {
        data: { field: 'dropped_events' },
      });
    }
    const createdAt = optionalString(data, 'created_at');
    if (createdAt === null)
      throw new ValueError('RunReport.created_at must be a string', { data: { field: 'created_at' } });
    const duration = data.duration_seconds ?? 0;
    if (typeof duration !== 'number' || !Number.isFinite(duration)) {
      throw new ValueError('RunReport.duration_seconds must be a number', {
        data: { field: 'duration_seconds' },
      });
    }
    const metrics = data.llm_metrics ?? emptyLLMMetrics();
    if (!isRecord(metrics))
      throw new ValueError('RunReport.llm_metrics must be an object', { data: { field: 'llm_metrics' } });
    const metadata = data.metadata ?? {};
    if (!isRecord(metadata))
      throw new ValueError('RunReport.metadata must be an object', { data: { field: 'metadata' } });
    const finalTask = data.final_task ?? null;
    if (finalTask !== null && !isRecord(finalTask))
      throw new ValueError('RunReport.final_task must be an object or null', {
        data: { field: 'final_task' },
      });
    return new RunReport({
      version: RUN_EVENT_VERSION,
      run_id: optionalString(data, 'run_id'),
      task_id: optionalString(data, 'task_id'),
      session_id: optionalString(data, 'session_id'),
      trace_id: optionalString(data, 'trace_id'),
      agent_name: optionalString(data, 'agent_name'),
      status: optionalString(data, 'status') as TaskState | null,
      started_at: optionalString(data, 'started_at'),
      ended_at: optionalString(data, 'ended_at'),
      duration_seconds: duration,
      created_at: createdAt,
      events,
      dropped_events: dropped,
      context_manifests: list(data, 'context_manifests'),
      actions: list(data, 'actions'),
      approvals: list(data, 'approvals'),
      artifacts: list(data, 'artifacts'),
      llm_metrics: { ...emptyLLMMetrics(), ...(metrics as Partial<LLMMetrics>) },
      budget_events: list(data, 'budget_events'),
      errors: list(data, 'errors'),
      final_task: finalTask as Task | null,
      metadata: metadata as JsonObject,
    });
  }
}

/**
 * A report that keeps `data` itself rather than a copy, for the output of `ReportFold.buildListed`
 * (fresh, held by nothing else, never changed again): `data.events` stands empty for the events of
 * `listed`, made when first read. Internal to the package.
 */
export function adoptListedRunReport(data: RunReportData, listed: ListedEvents): RunReport {
  adopting = listed;
  try {
    return new RunReport(data);
  } finally {
    adopting = null;
  }
}

/**
 * What `report.toDict({ redactionPolicy: null })` serializes to, without the copy: the report's own
 * data, to be serialized at once and never changed, and the listing of its events while it never
 * made them (`data.events` then stands empty in their place). A subclass that overrides `toDict`
 * gets its `toDict`. Internal to the package.
 */
export function rawReportParts(report: RunReport): ReportParts {
  if (report instanceof RunReport && report.toDict === RunReport.prototype.toDict) return partsOf(report);
  return { data: report.toDict({ redactionPolicy: null }), listed: null };
}
