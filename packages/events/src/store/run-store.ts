/**
 * RunStore: durable task snapshots and run reports, stored as JSON with indexed ids. Separate from
 * the key/value `Storage` for agent state: this one is append-mostly, indexed and prunable.
 */
import {
  ANONYMOUS_PRINCIPAL,
  type AgentError,
  type JsonObject,
  type RunContextData,
  type Task,
  type TaskEvent,
} from '@agent/core';
import type { RunReport } from '../run-report.js';
import type { TaskCoordination } from './task-coordination.js';

/** Who a task belongs to. Records of one owner are invisible to every other owner. */
export interface TaskOwner {
  tenant: string;
  principal_id: string;
}

/** The owner of everything saved or read without an explicit owner (single-owner use). */
export const DEFAULT_OWNER: Readonly<TaskOwner> = Object.freeze({
  tenant: '',
  principal_id: ANONYMOUS_PRINCIPAL,
});

/** A stored task snapshot: the indexed columns plus the whole (redacted) task. */
export interface TaskRecord {
  tenant: string;
  principal_id: string;
  task_id: string;
  state: string;
  run_id: string | null;
  session_id: string | null;
  trace_id: string | null;
  agent_name: string | null;
  /** The task's own `created_at`. */
  created_at: string;
  /** When the snapshot was last saved (UTC ISO 8601); retention uses it. */
  updated_at: string;
  task: Task;
}

export interface SaveTaskSnapshotOptions {
  /** The run context; default: the task's `metadata.run_context`. */
  runContext?: RunContextData | null;
  /** Default: the last `agent_chain` entry of the run context. */
  agentName?: string;
  /** Default: {@link DEFAULT_OWNER}. */
  owner?: TaskOwner;
}

export interface TaskRecordQuery {
  /** Default: {@link DEFAULT_OWNER}. */
  owner?: TaskOwner;
  sessionId?: string;
  state?: string;
  runId?: string;
  traceId?: string;
  agentName?: string;
  /** Most records returned, 1..10000. Default: all. */
  limit?: number;
}

export interface RunReportQuery {
  sessionId?: string;
  traceId?: string;
  agentName?: string;
  taskId?: string;
  /** Most reports returned, 1..10000. Default: all. */
  limit?: number;
}

/** One page of {@link RunStore.pageTaskRecords}. */
export interface TaskPageQuery {
  /** Default: {@link DEFAULT_OWNER}. */
  owner?: TaskOwner;
  sessionId?: string;
  state?: string;
  /** 1..100, default 50. */
  pageSize?: number;
  /** The `next_page_token` of the previous page; absent or `''` for the first page. */
  pageToken?: string;
}

export interface TaskPage {
  records: TaskRecord[];
  /** `''` on the last page. */
  next_page_token: string;
}

export interface TaskEventQuery {
  /** Only events with a larger sequence. Default `0` (all). */
  after?: number;
  /** Most events returned, 1..10000. Default: all. */
  limit?: number;
}

/** One write of {@link RunStore.writeTask}: the task's snapshot, or events for its log. */
export type TaskWrite = { snapshot: Task } | { events: TaskEvent[] };

export interface StoredTaskEvent {
  /** 1-based, per task and owner, without gaps. */
  sequence: number;
  event: TaskEvent;
}

/**
 * Every method validates its input and rejects with a ValueError on bad arguments. Writes are
 * idempotent upserts (by owner and `task_id`, by `run_id`). Lists are newest first.
 */
export interface RunStore {
  /** Upserts the snapshot of a task, keyed by its owner and `task.id`. */
  saveTaskSnapshot(task: Task, options?: SaveTaskSnapshotOptions): Promise<void>;
  /** Upserts a report, keyed by its `runId` (a report without one is rejected). */
  saveRunReport(report: RunReport): Promise<void>;
  /** `null` for an unknown id, and for another owner's task. */
  getTaskRecord(taskId: string, owner?: TaskOwner): Promise<TaskRecord | null>;
  /** One owner's records, newest `updated_at` first. */
  listTaskRecords(query?: TaskRecordQuery): Promise<TaskRecord[]>;
  /** One owner's records by keyset pages: newest `updated_at` first, then `task_id`. */
  pageTaskRecords(query?: TaskPageQuery): Promise<TaskPage>;
  /**
   * Appends events to the log of a saved task, all or none, and returns the sequences given to them.
   * @throws TaskNotFoundError when the owner has no record of the task.
   */
  appendTaskEvents(owner: TaskOwner, taskId: string, events: TaskEvent[]): Promise<number[]>;
  /**
   * Applies one task's snapshots and event appends in the order given, all or none: what
   * `saveTaskSnapshot(task, { owner })` and `appendTaskEvents(owner, taskId, events)` do, called in
   * turn, but as one write (one commit for a database). Optional: a store without it gets those
   * calls one by one instead. A server's first call for a task new to the store may carry the
   * task's ending first, then every event of its run (one that ended before anything of it was
   * written): a record's log takes events until it holds a final status, whatever the record says.
   * @throws ValueError when a snapshot is of another task, or on what either call refuses.
   * @throws TaskNotFoundError when events come before the owner has a record of the task.
   */
  writeTask?(owner: TaskOwner, taskId: string, writes: readonly TaskWrite[]): Promise<void>;
  /** The task's events in order; `[]` for an unknown task or another owner's. */
  listTaskEvents(owner: TaskOwner, taskId: string, query?: TaskEventQuery): Promise<StoredTaskEvent[]>;
  /** `null` for an unknown id. */
  getRunReport(runId: string): Promise<RunReport | null>;
  /** Newest `created_at` first. */
  listRunReports(query?: RunReportQuery): Promise<RunReport[]>;
  /**
   * Deletes snapshots updated (with their events), and reports created, before the instant; returns
   * how many snapshots and reports went.
   */
  deleteBefore(isoTimestamp: string): Promise<number>;
  /** Releases the store; later calls reject. Idempotent. */
  close(): Promise<void> | void;
  /**
   * Finishes `failed` every task a previous process left running (`submitted` or `working`): one
   * `task.error` and one final status each, carrying `error`'s code and message, and the failed
   * snapshot. Returns their records as now stored. For a store that outlives the one process using
   * it (a SQLite file), called at start before any task runs; a store replicas share leaves this to
   * its coordination's leases. Tasks waiting for input are not running and stay as they are.
   */
  finishInterruptedTasks?(error: AgentError): Promise<TaskRecord[]>;
  /** Present on a store several processes share: how each reaches the tasks the others run. */
  readonly coordination?: TaskCoordination;
}

/** The indexed columns of a stored report. */
export interface RunReportRow {
  run_id: string;
  task_id: string | null;
  session_id: string | null;
  trace_id: string | null;
  agent_name: string | null;
  created_at: string;
  report: JsonObject;
}
