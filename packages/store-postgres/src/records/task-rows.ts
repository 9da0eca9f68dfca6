/**
 * Tasks, events and reports as this package stores them: the indexed columns and the redacted JSON
 * text, built by the same rules as the SQLite and in-memory stores of `@agent/events`, so a record
 * reads back the same from every backend.
 */
import { parseIsoTimestamp, ValueError, type Task } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import type { RedactionPolicy, RunReport, SaveTaskSnapshotOptions, TaskRecord } from '@agent/events';
import { ownerOf } from './arguments.js';

/** Timestamps normalized lately: a task's `created_at` comes by on each of its saves. */
const normalized = new Map<string, string>();
const MAX_NORMALIZED = 1024;

/** A UTC ISO string for a timestamp, so stored values compare correctly as text. */
export function normalizeTimestamp(value: string, field: string): string {
  const known = typeof value === 'string' ? normalized.get(value) : undefined;
  if (known !== undefined) return known;
  const parsed = typeof value === 'string' ? parseIsoTimestamp(value) : undefined;
  if (parsed === undefined)
    throw new ValueError(`${field} must be an ISO 8601 timestamp, got ${JSON.stringify(value)}`, {
      data: { field },
    });
  if (parsed === null)
    throw new ValueError(`${field} must carry a timezone (Z or ±hh:mm), got ${JSON.stringify(value)}`, {
      data: { field },
    });
  const iso = parsed.toISOString();
  if (normalized.size >= MAX_NORMALIZED) normalized.clear();
  normalized.set(value, iso);
  return iso;
}

/**
 * What the store keeps of a value: its JSON text, masked by `policy` (nothing when null).
 * @throws ValueError when the value cannot be serialized.
 */
export function storedJson(value: unknown, policy: RedactionPolicy | null, what: string): string {
  let text: string | undefined;
  try {
    text = policy === null ? JSON.stringify(value) : policy.redactedJson(value);
  } catch (error) {
    throw new ValueError(`${what} is not JSON-serializable: ${(error as Error).message}`, { cause: error });
  }
  if (text === undefined) throw new ValueError(`${what} is not JSON-serializable: it is undefined`);
  return text;
}

interface RunIds {
  run_id: string | null;
  session_id: string | null;
  trace_id: string | null;
  agent_name: string | null;
}

const NO_IDS: RunIds = { run_id: null, session_id: null, trace_id: null, agent_name: null };

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Ids of a serialized run context (or anything with `toDict()`), tolerating partial shapes. */
function runIdsOf(context: unknown): RunIds {
  const maybe = context as { toDict?: unknown } | null | undefined;
  const data: unknown =
    maybe !== null && maybe !== undefined && typeof maybe.toDict === 'function'
      ? (maybe.toDict as () => unknown).call(context)
      : context;
  if (!isRecord(data)) return NO_IDS;
  const chain = Array.isArray(data.agent_chain) ? (data.agent_chain as unknown[]) : [];
  return {
    run_id: str(data.run_id),
    session_id: str(data.session_id),
    trace_id: str(data.trace_id),
    agent_name: str(chain.length > 0 ? chain[chain.length - 1] : undefined),
  };
}

/** Ids of a task's `metadata.run_context`, with the legacy `metadata.session_id` as a fallback. */
function runIdsOfTask(task: Task): RunIds {
  const metadata: unknown = task.metadata;
  if (!isRecord(metadata)) return NO_IDS;
  const ids = runIdsOf(isRecord(metadata.run_context) ? metadata.run_context : null);
  return ids.session_id === null && typeof metadata.session_id === 'string' && metadata.session_id !== ''
    ? { ...ids, session_id: metadata.session_id }
    : ids;
}

function firstOf(first: string | null, second: string | null): string | null {
  return first !== null ? first : second;
}

function checkTask(task: unknown): asserts task is Task {
  if (!isRecord(task)) throw new ValueError('saveTaskSnapshot needs a Task object');
  if (typeof task.id !== 'string' || task.id === '')
    throw new ValueError('Task.id must be a non-empty string', { data: { field: 'id' } });
  if (typeof task.state !== 'string')
    throw new ValueError('Task.state must be a string', { data: { field: 'state' } });
}

/** The columns of a stored task snapshot: everything of a TaskRecord but the task. */
export type TaskColumns = Omit<TaskRecord, 'task'>;

/** A task snapshot as it is written: its columns, and the masked task as JSON text. */
export interface TaskRow {
  columns: TaskColumns;
  task: string;
}

export function taskRowOf(
  task: Task,
  options: SaveTaskSnapshotOptions,
  policy: RedactionPolicy | null,
  now: () => number,
): TaskRow {
  checkTask(task);
  const owner = ownerOf(isRecord(options) ? options.owner : undefined);
  const explicit = runIdsOf(options.runContext ?? null);
  const implied = runIdsOfTask(task);
  let createdAt: string;
  try {
    createdAt = normalizeTimestamp(task.created_at, 'Task.created_at');
  } catch {
    // A snapshot is still worth keeping when a peer sent a sloppy timestamp.
    createdAt = new Date(now()).toISOString();
  }
  const text = storedJson(task, policy, 'Task');
  return {
    columns: {
      tenant: owner.tenant,
      principal_id: owner.principal_id,
      task_id: task.id,
      state: task.state,
      run_id: firstOf(explicit.run_id, implied.run_id),
      session_id: firstOf(explicit.session_id, implied.session_id),
      trace_id: firstOf(explicit.trace_id, implied.trace_id),
      agent_name:
        typeof options.agentName === 'string' && options.agentName !== ''
          ? options.agentName
          : firstOf(explicit.agent_name, implied.agent_name),
      created_at: createdAt,
      updated_at: new Date(now()).toISOString(),
    },
    task: text,
  };
}

/** A run report as it is written: its columns, and the masked report dict as JSON text. */
export interface ReportRow {
  run_id: string;
  task_id: string | null;
  session_id: string | null;
  trace_id: string | null;
  agent_name: string | null;
  created_at: string;
  report: string;
}

export function reportRowOf(report: RunReport, policy: RedactionPolicy | null): ReportRow {
  if (!report || typeof report.toDict !== 'function') throw new ValueError('saveRunReport needs a RunReport');
  if (report.runId === null)
    throw new ValueError('A RunReport without run_id cannot be stored', { data: { field: 'run_id' } });
  return {
    run_id: report.runId,
    task_id: report.taskId,
    session_id: report.sessionId,
    trace_id: report.traceId,
    agent_name: report.agentName,
    created_at: normalizeTimestamp(report.createdAt, 'RunReport.created_at'),
    report: storedJson(report.toDict({ redactionPolicy: null }), policy, 'RunReport'),
  };
}

/** The events of one append, checked (a type, this task's id) and stored as masked JSON text. */
export function eventTextsOf(taskId: string, events: unknown, policy: RedactionPolicy | null): string[] {
  if (!Array.isArray(events)) throw new ValueError('events must be an array of TaskEvents');
  return events.map((event: unknown, index) => {
    if (!isRecord(event) || typeof event.type !== 'string' || event.type === '')
      throw new ValueError(`events[${index}] is not a TaskEvent (no type)`, { data: { index } });
    if (event.task_id !== taskId)
      throw new ValueError(
        `events[${index}] belongs to task ${JSON.stringify(event.task_id)}, not ${taskId}`,
        { data: { index, field: 'task_id' } },
      );
    return storedJson(event, policy, 'TaskEvent');
  });
}
