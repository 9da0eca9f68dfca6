/**
 * Turning tasks and reports into store rows, and checking store arguments: one implementation
 * that every RunStore uses, so the backends cannot drift apart.
 */
import {
  parseIsoTimestamp,
  TaskNotFoundError,
  TERMINAL_TASK_STATES,
  ValueError,
  type JsonObject,
  type Task,
} from '@agent/core';
import {
  checkOptionNames,
  copyWith,
  isoOfMs,
  isRecord,
  numberOption,
  optionNames,
} from '@agent/core/internal';
import { plainRedactedJson, redactedJsonSharing, type RedactionPolicy } from '../redaction.js';
import { mergeRunIds, runIdsOf, runIdsOfTask } from '../run-context.js';
import { rawReportParts, type ReportParts, type RunReport } from '../run-report.js';
import { decodePageToken, encodePageToken, queryFingerprint } from './page-token.js';
import { storedReportOf } from './stored-report.js';
import {
  DEFAULT_OWNER,
  type RunReportQuery,
  type RunReportRow,
  type SaveTaskSnapshotOptions,
  type TaskEventQuery,
  type TaskOwner,
  type TaskPageQuery,
  type TaskRecord,
  type TaskRecordQuery,
} from './run-store.js';

export const MAX_LIST_LIMIT = 10_000;
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;
export const TERMINAL_STATES: readonly string[] = TERMINAL_TASK_STATES;
export const DAY_MS = 24 * 60 * 60 * 1000;

export function isTerminal(state: string): boolean {
  return TERMINAL_STATES.includes(state);
}

/** Reads the `now` option shared by the stores: milliseconds since the epoch. */
export function clockOf(now: unknown, owner: string): () => number {
  if (now === undefined) return Date.now;
  if (typeof now !== 'function') throw new ValueError(`${owner} option now must be a function`);
  return now as () => number;
}

/** `taskRetentionMs`: a positive number of milliseconds, or `Infinity` for no time limit. */
export function retentionOf(value: number | undefined, fallback: number): number {
  if (value === Infinity) return value;
  return numberOption('taskRetentionMs', value, fallback, { exclusive: true });
}

/** Accepts only the two owner fields' types; extra fields are ignored (an auth context may carry more). */
export function ownerOf(owner: unknown): TaskOwner {
  if (owner === undefined || owner === null) return DEFAULT_OWNER;
  if (!isRecord(owner)) throw new ValueError('owner must be an object { tenant, principal_id }');
  if (typeof owner.tenant !== 'string')
    throw new ValueError('owner.tenant must be a string', { data: { field: 'tenant' } });
  if (typeof owner.principal_id !== 'string' || owner.principal_id === '')
    throw new ValueError('owner.principal_id must be a non-empty string', {
      data: { field: 'principal_id' },
    });
  return { tenant: owner.tenant, principal_id: owner.principal_id };
}

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
  const iso = isoOfMs(parsed.getTime());
  if (normalized.size >= MAX_NORMALIZED) normalized.clear();
  normalized.set(value, iso);
  return iso;
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

/** A task snapshot as a backend writes it: its columns, and the masked task as JSON text. */
export interface TaskRow {
  columns: TaskColumns;
  task: string;
}

export function taskRowOf(
  task: Task,
  options: SaveTaskSnapshotOptions,
  policy: RedactionPolicy | null,
  now: () => number = Date.now,
  textOf: (task: Task) => string = (checked) => storedJson(checked, policy, 'Task'),
): TaskRow {
  checkTask(task);
  const owner = ownerOf(isRecord(options) ? options.owner : undefined);
  const explicit = runIdsOf(options.runContext ?? null);
  const ids = mergeRunIds(explicit, runIdsOfTask(task));
  let createdAt: string;
  try {
    createdAt = normalizeTimestamp(task.created_at, 'Task.created_at');
  } catch {
    // A snapshot is still worth keeping when a peer sent a sloppy timestamp.
    createdAt = isoOfMs(now());
  }
  const text = textOf(task);
  return {
    columns: {
      tenant: owner.tenant,
      principal_id: owner.principal_id,
      task_id: task.id,
      state: task.state,
      run_id: ids.run_id,
      session_id: ids.session_id,
      trace_id: ids.trace_id,
      agent_name:
        typeof options.agentName === 'string' && options.agentName !== ''
          ? options.agentName
          : ids.agent_name,
      created_at: createdAt,
      updated_at: isoOfMs(now()),
    },
    task: text,
  };
}

/** The record a stored row reads back as: a fresh task parsed from its text, shared with nobody. */
export function recordOf(row: TaskRow): TaskRecord {
  return copyWith(row.columns, 'task', JSON.parse(row.task) as Task);
}

/** A run report as a backend writes it: its columns, and the masked report dict as JSON text. */
export interface ReportTextRow {
  columns: Omit<RunReportRow, 'report'>;
  report: string;
}

export function reportTextRowOf(report: RunReport, policy: RedactionPolicy | null): ReportTextRow {
  const row = reportRowOf(report);
  return { columns: row.columns, report: reportTextOf(row, policy) };
}

/**
 * A run report checked and read for storing: its columns, and the data its text is written from:
 * the report's own (never changed again) or a copy of its own, see {@link rawReportParts}.
 */
export interface ReportRow extends ReportParts {
  columns: Omit<RunReportRow, 'report'>;
}

/**
 * The columns of a report, checked, and its data: everything {@link reportTextRowOf} reads of the
 * report, so that the text may be written later ({@link reportTextOf}) from what was read now.
 * @throws ValueError when it is not a report, or has no run id.
 */
export function reportRowOf(report: RunReport): ReportRow {
  if (!report || typeof report.toDict !== 'function') throw new ValueError('saveRunReport needs a RunReport');
  if (report.runId === null)
    throw new ValueError('A RunReport without run_id cannot be stored', { data: { field: 'run_id' } });
  return {
    columns: {
      run_id: report.runId,
      task_id: report.taskId,
      session_id: report.sessionId,
      trace_id: report.traceId,
      agent_name: report.agentName,
      created_at: normalizeTimestamp(report.createdAt, 'RunReport.created_at'),
    },
    ...rawReportParts(report),
  };
}

/** The masked text a store keeps of a report's data. */
export function reportTextOf(parts: ReportParts, policy: RedactionPolicy | null): string {
  return storedJson(storedReportOf(parts.data, parts.listed), policy, 'RunReport');
}

/**
 * A value a write has stored already in the same synchronous call, with its masked text as the
 * one-pass writer made it: what another value of that call that holds it writes in its place.
 */
export interface SharedText {
  value: object;
  text: string;
}

/**
 * What a backend stores of a value: its JSON text, masked by `policy` (nothing when null) in the
 * same pass. Text is what a database holds; the memory store keeps it too and parses it on every
 * read, so no caller ever shares an object with the store.
 * @throws ValueError when the value cannot be serialized.
 */
export function storedJson(
  value: unknown,
  policy: RedactionPolicy | null,
  what: string,
  shared: SharedText | null = null,
): string {
  let text: string | undefined;
  try {
    text =
      policy === null
        ? JSON.stringify(value)
        : shared === null
          ? policy.redactedJson(value)
          : redactedJsonSharing(policy, value, shared.value, shared.text);
  } catch (error) {
    throw new ValueError(`${what} is not JSON-serializable: ${(error as Error).message}`, { cause: error });
  }
  if (text === undefined) throw new ValueError(`${what} is not JSON-serializable: it is undefined`);
  return text;
}

/** One write of `writeTask` as a backend stores it: a task row, or the texts of events to append. */
export type TaskWriteRow = { row: TaskRow } | { texts: string[] };

/**
 * Checks and encodes the writes of `writeTask`, every one before any is applied, so that bad input
 * refuses the whole call and leaves the store as it was.
 * @throws ValueError on a write that is neither a snapshot nor events, or a snapshot of another task.
 */
export function taskWriteRowsOf(
  owner: TaskOwner,
  taskId: string,
  writes: unknown,
  policy: RedactionPolicy | null,
  now: () => number,
): TaskWriteRow[] {
  if (!Array.isArray(writes)) throw new ValueError('writes must be an array of task writes');
  const rows: TaskWriteRow[] = new Array<TaskWriteRow>(writes.length);
  // Snapshots first: a run's ending logs a final status that carries the very task its last
  // snapshot saves, and that task's text is then written once, for both.
  let shared: SharedText | null = null;
  writes.forEach((write: unknown, index) => {
    if (!isRecord(write) || !('snapshot' in write) || 'events' in write) return;
    const task = (write as { snapshot: Task }).snapshot;
    if (isRecord(task) && task.id !== taskId) {
      const id = JSON.stringify(task.id);
      throw new ValueError(`writes[${index}] is a snapshot of task ${id}, not ${taskId}`, {
        data: { index, field: 'id' },
      });
    }
    const shareable =
      policy === null
        ? undefined
        : (checked: Task): string => {
            const { text, plain } = plainRedactedJson(policy, checked);
            shared = plain ? { value: checked, text } : null;
            return text;
          };
    rows[index] = { row: taskRowOf(task, { owner }, policy, now, shareable) };
  });
  writes.forEach((write: unknown, index) => {
    if (rows[index] !== undefined) return;
    if (isRecord(write) && 'events' in write && !('snapshot' in write)) {
      rows[index] = { texts: eventTextsOf(taskId, (write as { events: unknown }).events, policy, shared) };
      return;
    }
    throw new ValueError(`writes[${index}] is neither { snapshot } nor { events }`, { data: { index } });
  });
  return rows;
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

/** What an append to a task the owner has no (live) record of gets, from every backend. */
export function taskNotFound(taskId: string): TaskNotFoundError {
  return new TaskNotFoundError(`No task ${taskId}`, { data: { task_id: taskId } });
}

export function checkId(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '')
    throw new ValueError(`${name} must be a non-empty string`, { data: { field: name } });
  return value;
}

export function optionalFilter(query: Record<string, unknown>, key: string): string | undefined {
  const value = query[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new ValueError(`Query field ${key} must be a string`, { data: { field: key } });
  return value;
}

export function limitOf(value: unknown, field = 'limit', max = MAX_LIST_LIMIT): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new ValueError(`${field} must be an integer from 1 to ${max}, got ${JSON.stringify(value)}`, {
      data: { field },
    });
  }
  return value;
}

export interface NormalizedTaskQuery {
  owner: TaskOwner;
  session_id?: string;
  state?: string;
  run_id?: string;
  trace_id?: string;
  agent_name?: string;
  limit?: number;
}

export function taskQueryOf(query: TaskRecordQuery | undefined): NormalizedTaskQuery {
  if (query === undefined || query === null) return { owner: DEFAULT_OWNER };
  if (!isRecord(query)) throw new ValueError('The query must be an object');
  const q = query as Record<string, unknown>;
  return strip({
    owner: ownerOf(q.owner),
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

export function strip<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

const PAGE_QUERY_NAMES = optionNames<TaskPageQuery>({
  owner: true,
  sessionId: true,
  state: true,
  pageSize: true,
  pageToken: true,
});

/** Where a page starts: after this row of the order `updated_at` descending, `task_id` ascending. */
export interface PageCursor {
  updated_at: string;
  task_id: string;
}

export interface NormalizedPageQuery {
  owner: TaskOwner;
  session_id?: string;
  state?: string;
  page_size: number;
  after?: PageCursor;
}

/**
 * Binds a token to its owner and filters without putting them in the token: a token replayed by
 * another owner or with other filters no longer matches.
 */
function fingerprint(q: Omit<NormalizedPageQuery, 'page_size' | 'after'>): string {
  return queryFingerprint([q.owner.tenant, q.owner.principal_id, q.session_id ?? null, q.state ?? null]);
}

function cursorOf(token: string, expected: string): PageCursor {
  const [updatedAt, taskId] = decodePageToken(token, expected, 2) as [string, string];
  return { updated_at: updatedAt, task_id: taskId };
}

export function pageQueryOf(query: TaskPageQuery | undefined): NormalizedPageQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  if (!isRecord(q)) throw new ValueError('The query must be an object');
  checkOptionNames('pageTaskRecords', q, PAGE_QUERY_NAMES);
  const base = strip({
    owner: ownerOf(q.owner),
    session_id: optionalFilter(q, 'sessionId'),
    state: optionalFilter(q, 'state'),
  });
  const token = optionalFilter(q, 'pageToken');
  return strip({
    ...base,
    page_size: limitOf(q.pageSize, 'pageSize', MAX_PAGE_SIZE) ?? DEFAULT_PAGE_SIZE,
    after: token === undefined || token === '' ? undefined : cursorOf(token, fingerprint(base)),
  });
}

/** The opaque token of the page after `last` (base64url JSON). */
export function pageTokenOf(query: NormalizedPageQuery, last: TaskColumns): string {
  return encodePageToken(fingerprint(query), [last.updated_at, last.task_id]);
}

/** True when `record` sorts after the cursor (newest `updated_at` first, then `task_id`). */
export function isAfter(record: TaskColumns, cursor: PageCursor): boolean {
  return (
    record.updated_at < cursor.updated_at ||
    (record.updated_at === cursor.updated_at && record.task_id > cursor.task_id)
  );
}

const EVENT_QUERY_NAMES = optionNames<TaskEventQuery>({ after: true, limit: true });

export interface NormalizedEventQuery {
  after: number;
  limit?: number;
}

export function eventQueryOf(query: TaskEventQuery | undefined): NormalizedEventQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  if (!isRecord(q)) throw new ValueError('The query must be an object');
  checkOptionNames('listTaskEvents', q, EVENT_QUERY_NAMES);
  const after = q.after ?? 0;
  if (typeof after !== 'number' || !Number.isInteger(after) || after < 0)
    throw new ValueError(`after must be a non-negative integer, got ${JSON.stringify(after)}`, {
      data: { field: 'after' },
    });
  return strip({ after, limit: limitOf(q.limit) });
}

/**
 * Checks and redacts a batch of events for one task before any is stored, so a bad event leaves
 * the log untouched. Returns each event's stored copy.
 */
/** The events of one append, checked (a type, this task's id) and stored as masked JSON text. */
export function eventTextsOf(
  taskId: string,
  events: unknown,
  policy: RedactionPolicy | null,
  shared: SharedText | null = null,
): string[] {
  if (!Array.isArray(events)) throw new ValueError('events must be an array of TaskEvents');
  return events.map((event: unknown, index) => {
    if (!isRecord(event) || typeof event.type !== 'string' || event.type === '')
      throw new ValueError(`events[${index}] is not a TaskEvent (no type)`, { data: { index } });
    if (event.task_id !== taskId)
      throw new ValueError(
        `events[${index}] belongs to task ${JSON.stringify(event.task_id)}, not ${taskId}`,
        {
          data: { index, field: 'task_id' },
        },
      );
    // Only an event that holds the shared task itself (a final status) is written with its text.
    return storedJson(
      event,
      policy,
      'TaskEvent',
      shared !== null && event.task === shared.value ? shared : null,
    );
  });
}
