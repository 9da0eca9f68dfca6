/**
 * Turning tasks and reports into store rows, and checking store arguments: one implementation
 * that every RunStore uses, so the backends cannot drift apart.
 */
import { nowIso, parseIsoTimestamp, ValueError, type JsonObject, type Task } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { type RedactionPolicy } from '../redaction.js';
import { mergeRunIds, runIdsOf, runIdsOfTask } from '../run-context.js';
import type { RunReport } from '../run-report.js';
import type {
  RunReportQuery,
  RunReportRow,
  SaveTaskSnapshotOptions,
  TaskRecord,
  TaskRecordQuery,
} from './run-store.js';

export const MAX_LIST_LIMIT = 10_000;

/** A UTC ISO string for a timestamp, so stored values compare correctly as text. */
export function normalizeTimestamp(value: string, field: string): string {
  const parsed = typeof value === 'string' ? parseIsoTimestamp(value) : undefined;
  if (parsed === undefined)
    throw new ValueError(`${field} must be an ISO 8601 timestamp, got ${JSON.stringify(value)}`, {
      data: { field },
    });
  if (parsed === null)
    throw new ValueError(`${field} must carry a timezone (Z or ±hh:mm), got ${JSON.stringify(value)}`, {
      data: { field },
    });
  return parsed.toISOString();
}

function checkTask(task: unknown): asserts task is Task {
  if (!isRecord(task)) throw new ValueError('saveTaskSnapshot needs a Task object');
  if (typeof task.id !== 'string' || task.id === '')
    throw new ValueError('Task.id must be a non-empty string', { data: { field: 'id' } });
  if (typeof task.state !== 'string')
    throw new ValueError('Task.state must be a string', { data: { field: 'state' } });
}

export function taskRecordOf(
  task: Task,
  options: SaveTaskSnapshotOptions,
  policy: RedactionPolicy | null,
): TaskRecord {
  checkTask(task);
  const explicit = runIdsOf(options.runContext ?? null);
  const ids = mergeRunIds(explicit, runIdsOfTask(task));
  let createdAt: string;
  try {
    createdAt = normalizeTimestamp(task.created_at, 'Task.created_at');
  } catch {
    // A snapshot is still worth keeping when a peer sent a sloppy timestamp.
    createdAt = nowIso();
  }
  const copy = jsonCopy(policy === null ? task : policy.redact(task), 'Task') as unknown as Task;
  return {
    task_id: task.id,
    state: task.state,
    run_id: ids.run_id,
    session_id: ids.session_id,
    trace_id: ids.trace_id,
    agent_name:
      typeof options.agentName === 'string' && options.agentName !== '' ? options.agentName : ids.agent_name,
    created_at: createdAt,
    updated_at: nowIso(),
    task: copy,
  };
}

export function reportRowOf(report: RunReport, policy: RedactionPolicy | null): RunReportRow {
  if (!report || typeof report.toDict !== 'function') throw new ValueError('saveRunReport needs a RunReport');
  if (report.runId === null)
    throw new ValueError('A RunReport without run_id cannot be stored', { data: { field: 'run_id' } });
  const dict = jsonCopy(report.toDict({ redactionPolicy: policy }), 'RunReport');
  return {
    run_id: report.runId,
    task_id: report.taskId,
    session_id: report.sessionId,
    trace_id: report.traceId,
    agent_name: report.agentName,
    created_at: normalizeTimestamp(report.createdAt, 'RunReport.created_at'),
    report: dict as unknown as JsonObject,
  };
}

/**
 * A JSON round trip: what every backend stores, so the in-memory store returns exactly what a
 * database would (no `undefined`, no class instances).
 * @throws ValueError when the value cannot be serialized (a cycle, a BigInt).
 */
export function jsonCopy(value: unknown, what: string): JsonObject {
  try {
    return JSON.parse(JSON.stringify(value)) as JsonObject;
  } catch (error) {
    throw new ValueError(`${what} is not JSON-serializable: ${(error as Error).message}`, { cause: error });
  }
}

export function checkId(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '')
    throw new ValueError(`${name} must be a non-empty string`, { data: { field: name } });
  return value;
}

function optionalFilter(query: Record<string, unknown>, key: string): string | undefined {
  const value = query[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new ValueError(`Query field ${key} must be a string`, { data: { field: key } });
  return value;
}

function limitOf(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_LIST_LIMIT) {
    throw new ValueError(
      `limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${JSON.stringify(value)}`,
      { data: { field: 'limit' } },
    );
  }
  return value;
}

export interface NormalizedTaskQuery {
  session_id?: string;
  state?: string;
  run_id?: string;
  trace_id?: string;
  agent_name?: string;
  limit?: number;
}

export function taskQueryOf(query: TaskRecordQuery | undefined): NormalizedTaskQuery {
  if (query === undefined || query === null) return {};
  if (!isRecord(query)) throw new ValueError('The query must be an object');
  const q = query as Record<string, unknown>;
  return strip({
    session_id: optionalFilter(q, 'sessionId'),
    state: optionalFilter(q, 'state'),
    run_id: optionalFilter(q, 'runId'),
    trace_id: optionalFilter(q, 'traceId'),
    agent_name: optionalFilter(q, 'agentName'),
    limit: limitOf(q.limit),
  });
}

export interface NormalizedReportQuery {
  session_id?: string;
  trace_id?: string;
  agent_name?: string;
  task_id?: string;
  limit?: number;
}

export function reportQueryOf(query: RunReportQuery | undefined): NormalizedReportQuery {
  if (query === undefined || query === null) return {};
  if (!isRecord(query)) throw new ValueError('The query must be an object');
  const q = query as Record<string, unknown>;
  return strip({
    session_id: optionalFilter(q, 'sessionId'),
    trace_id: optionalFilter(q, 'traceId'),
    agent_name: optionalFilter(q, 'agentName'),
    task_id: optionalFilter(q, 'taskId'),
    limit: limitOf(q.limit),
  });
}

function strip<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
