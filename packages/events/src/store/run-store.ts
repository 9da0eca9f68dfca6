/**
 * RunStore: durable task snapshots and run reports, stored as JSON with indexed ids. Separate from
 * the key/value `Storage` for agent state: this one is append-mostly, indexed and prunable.
 */
import type { JsonObject, RunContextData, Task } from '@agent/core';
import type { RunReport } from '../run-report.js';

/** A stored task snapshot: the indexed columns plus the whole (redacted) task. */
export interface TaskRecord {
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
}

export interface TaskRecordQuery {
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

/**
 * Every method validates its input and rejects with a ValueError on bad arguments. Writes are
 * idempotent upserts (by `task_id`, by `run_id`). Lists are newest first.
 */
export interface RunStore {
  /** Upserts the snapshot of a task, keyed by `task.id`. */
  saveTaskSnapshot(task: Task, options?: SaveTaskSnapshotOptions): Promise<void>;
  /** Upserts a report, keyed by its `runId` (a report without one is rejected). */
  saveRunReport(report: RunReport): Promise<void>;
  /** `null` for an unknown id. */
  getTaskRecord(taskId: string): Promise<TaskRecord | null>;
  /** Newest `updated_at` first. */
  listTaskRecords(query?: TaskRecordQuery): Promise<TaskRecord[]>;
  /** `null` for an unknown id. */
  getRunReport(runId: string): Promise<RunReport | null>;
  /** Newest `created_at` first. */
  listRunReports(query?: RunReportQuery): Promise<RunReport[]>;
  /** Deletes snapshots updated, and reports created, before the instant; returns how many rows went. */
  deleteBefore(isoTimestamp: string): Promise<number>;
  /** Releases the store; later calls reject. Idempotent. */
  close(): Promise<void> | void;
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
