/**
 * A RunStore in process memory: for tests, demos and single-process servers that need no history
 * across restarts. Bounded: finished tasks are evicted by count, size and age.
 */
import { TaskNotFoundError, UnavailableError, type Task, type TaskEvent } from '@agent/core';
import { checkOptionNames, numberOption, optionNames } from '@agent/core/internal';
import { snapshot } from '../clone.js';
import { RedactionPolicy } from '../redaction.js';
import { RunReport } from '../run-report.js';
import {
  checkId,
  clockOf,
  DAY_MS,
  eventCopiesOf,
  eventQueryOf,
  isAfter,
  isTerminal,
  normalizeTimestamp,
  ownerOf,
  pageQueryOf,
  pageTokenOf,
  reportQueryOf,
  reportRowOf,
  retentionOf,
  taskQueryOf,
  taskRecordOf,
  type PageCursor,
} from './records.js';
import type {
  RunReportQuery,
  RunReportRow,
  RunStore,
  SaveTaskSnapshotOptions,
  StoredTaskEvent,
  TaskEventQuery,
  TaskOwner,
  TaskPage,
  TaskPageQuery,
  TaskRecord,
  TaskRecordQuery,
} from './run-store.js';

/** The options every RunStore backend shares. */
export interface RunStoreOptions {
  /** Masking applied before anything is stored. Default `RedactionPolicy.default()`; `null` stores raw data. */
  redactionPolicy?: RedactionPolicy | null;
  /**
   * Finished tasks (and their events) last saved longer ago than this are deleted, in
   * milliseconds; `Infinity` keeps them. Default: 24 hours in memory, no limit in SQLite.
   */
  taskRetentionMs?: number;
  /** The clock stamping `updated_at` and driving retention, in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
}

export interface InMemoryRunStoreOptions extends RunStoreOptions {
  /** Most task records kept, and most run reports. Default `10000`. */
  maxTasks?: number;
  /** Most bytes kept: the JSON size of task records, their events and run reports. Default 256 MiB. */
  maxBytes?: number;
}

const OPTION_NAMES = optionNames<InMemoryRunStoreOptions>({
  redactionPolicy: true,
  taskRetentionMs: true,
  now: true,
  maxTasks: true,
  maxBytes: true,
});

export const DEFAULT_MAX_TASKS = 10_000;
export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;

interface Entry {
  record: TaskRecord;
  events: StoredTaskEvent[];
  /** JSON bytes of the events, kept so a snapshot save does not re-measure the log. */
  eventBytes: number;
  /** JSON bytes of the record plus its events. */
  bytes: number;
}

function newestFirst(a: { at: string; id: string }, b: { at: string; id: string }): number {
  return a.at < b.at ? 1 : a.at > b.at ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function byRecency(a: TaskRecord, b: TaskRecord): number {
  return newestFirst({ at: a.updated_at, id: a.task_id }, { at: b.updated_at, id: b.task_id });
}

type FilterColumn = 'session_id' | 'state' | 'run_id' | 'trace_id' | 'agent_name';

function keyOf(owner: TaskOwner, taskId: string): string {
  return JSON.stringify([owner.tenant, owner.principal_id, taskId]);
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

export class InMemoryRunStore implements RunStore {
  readonly #tasks = new Map<string, Entry>();
  /**
   * The evictable entries, oldest `updated_at` first (ties in save order): a saved entry is
   * re-inserted at the end, so eviction takes from the front without sorting, unless the clock went
   * backwards (then sorted once).
   */
  readonly #terminal = new Map<string, Entry>();
  #terminalSorted = true;
  #lastTerminal: TaskRecord | null = null;
  /** Run reports in save order (a re-saved report moves to the end), with their JSON bytes. */
  readonly #reports = new Map<string, { row: RunReportRow; bytes: number }>();
  readonly #policy: RedactionPolicy | null;
  readonly #maxTasks: number;
  readonly #maxBytes: number;
  readonly #retentionMs: number;
  readonly #now: () => number;
  #bytes = 0;
  #closed = false;

  constructor(options: InMemoryRunStoreOptions = {}) {
    checkOptionNames('InMemoryRunStore', options, OPTION_NAMES);
    this.#policy =
      options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
    this.#maxTasks = numberOption('maxTasks', options.maxTasks, DEFAULT_MAX_TASKS, { min: 1, integer: true });
    this.#maxBytes = numberOption('maxBytes', options.maxBytes, DEFAULT_MAX_BYTES, { min: 1, integer: true });
    this.#retentionMs = retentionOf(options.taskRetentionMs, DAY_MS);
    this.#now = clockOf(options.now, 'InMemoryRunStore');
  }

  /** What the store holds now: task records, run reports, and the JSON bytes of all of it. */
  get usage(): { tasks: number; reports: number; bytes: number } {
    return { tasks: this.#tasks.size, reports: this.#reports.size, bytes: this.#bytes };
  }

  /** Rejects after close, and drops expired entries so no call can see one. */
  #open(): void {
    if (this.#closed) throw new UnavailableError('The run store is closed');
    this.#expire();
  }

  #sortTerminal(): void {
    if (this.#terminalSorted) return;
    // Stable sort: equal timestamps keep their save order.
    const sorted = [...this.#terminal].sort(([, a], [, b]) =>
      a.record.updated_at < b.record.updated_at ? -1 : a.record.updated_at > b.record.updated_at ? 1 : 0,
    );
    this.#terminal.clear();
    for (const [key, entry] of sorted) this.#terminal.set(key, entry);
    this.#terminalSorted = true;
  }

  #expire(): void {
    if (this.#retentionMs === Infinity) return;
    const cutoff = new Date(this.#now() - this.#retentionMs).toISOString();
    for (const [id, report] of this.#reports) {
      if (report.row.created_at >= cutoff) break;
      this.#removeReport(id, report.bytes);
    }
    if (this.#terminal.size === 0) return;
    this.#sortTerminal();
    for (const [key, entry] of this.#terminal) {
      if (entry.record.updated_at >= cutoff) break;
      this.#remove(key, entry);
    }
  }

  /**
   * Evicts while over a bound: the oldest finished tasks first, then the oldest reports; live
   * entries are never evicted.
   */
  #evict(): void {
    for (const [id, report] of this.#reports) {
      if (this.#reports.size <= this.#maxTasks) break;
      this.#removeReport(id, report.bytes);
    }
    if (this.#tasks.size <= this.#maxTasks && this.#bytes <= this.#maxBytes) return;
    this.#sortTerminal();
    for (const [key, entry] of this.#terminal) {
      if (this.#tasks.size <= this.#maxTasks && this.#bytes <= this.#maxBytes) break;
      this.#remove(key, entry);
    }
    for (const [id, report] of this.#reports) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#removeReport(id, report.bytes);
    }
  }

  #removeReport(runId: string, bytes: number): void {
    this.#reports.delete(runId);
    this.#bytes -= bytes;
  }

  #remove(key: string, entry: Entry): void {
    this.#tasks.delete(key);
    this.#terminal.delete(key);
    this.#bytes -= entry.bytes;
  }

  #put(key: string, entry: Entry): void {
    const previous = this.#tasks.get(key);
    if (previous) this.#remove(key, previous);
    this.#tasks.set(key, entry);
    this.#bytes += entry.bytes;
    if (!isTerminal(entry.record.state)) return;
    // A stale (already removed) last entry can only cause one needless sort.
    if (this.#lastTerminal && entry.record.updated_at < this.#lastTerminal.updated_at)
      this.#terminalSorted = false;
    this.#lastTerminal = entry.record;
    this.#terminal.set(key, entry);
  }

  async saveTaskSnapshot(task: Task, options: SaveTaskSnapshotOptions = {}): Promise<void> {
    this.#open();
    const record = taskRecordOf(task, options, this.#policy, this.#now);
    const key = keyOf(record, record.task_id);
    const { events = [], eventBytes = 0 } = this.#tasks.get(key) ?? {};
    this.#put(key, { record, events, eventBytes, bytes: jsonBytes(record) + eventBytes });
    this.#evict();
  }

  async saveRunReport(report: RunReport): Promise<void> {
    this.#open();
    const row = reportRowOf(report, this.#policy);
    const previous = this.#reports.get(row.run_id);
    if (previous) this.#removeReport(row.run_id, previous.bytes);
    const bytes = jsonBytes(row);
    this.#reports.set(row.run_id, { row, bytes });
    this.#bytes += bytes;
    this.#evict();
  }

  async getTaskRecord(taskId: string, owner?: TaskOwner): Promise<TaskRecord | null> {
    this.#open();
    const entry = this.#tasks.get(keyOf(ownerOf(owner), checkId(taskId, 'taskId')));
    return entry ? snapshot(entry.record) : null;
  }

  /** One owner's records with every given column value (and after the cursor), newest first. */
  #matching(
    owner: TaskOwner,
    filters: Partial<Record<FilterColumn, string>>,
    after?: PageCursor,
  ): TaskRecord[] {
    const wanted = Object.entries(filters).filter(([, value]) => value !== undefined) as [
      FilterColumn,
      string,
    ][];
    const matches: TaskRecord[] = [];
    for (const { record } of this.#tasks.values()) {
      if (record.tenant !== owner.tenant || record.principal_id !== owner.principal_id) continue;
      if (!wanted.every(([column, value]) => record[column] === value)) continue;
      if (after === undefined || isAfter(record, after)) matches.push(record);
    }
    return matches.sort(byRecency);
  }

  async listTaskRecords(query?: TaskRecordQuery): Promise<TaskRecord[]> {
    this.#open();
    const { owner, limit, ...filters } = taskQueryOf(query);
    return snapshot(this.#matching(owner, filters).slice(0, limit));
  }

  async pageTaskRecords(query?: TaskPageQuery): Promise<TaskPage> {
    this.#open();
    const q = pageQueryOf(query);
    const matches = this.#matching(q.owner, { session_id: q.session_id, state: q.state }, q.after);
    const records = matches.slice(0, q.page_size);
    const more = matches.length > q.page_size;
    return {
      records: snapshot(records),
      next_page_token: more ? pageTokenOf(q, records[records.length - 1]!) : '',
    };
  }

  async appendTaskEvents(owner: TaskOwner, taskId: string, events: TaskEvent[]): Promise<number[]> {
    this.#open();
    const who = ownerOf(owner);
    const key = keyOf(who, checkId(taskId, 'taskId'));
    const copies = eventCopiesOf(taskId, events, this.#policy);
    const entry = this.#tasks.get(key);
    if (!entry) throw new TaskNotFoundError(`No task ${taskId}`, { data: { task_id: taskId } });
    const sequences: number[] = [];
    for (const event of copies) {
      const stored = { sequence: entry.events.length + 1, event };
      entry.events.push(stored);
      const size = jsonBytes(stored);
      entry.eventBytes += size;
      entry.bytes += size;
      this.#bytes += size;
      sequences.push(stored.sequence);
    }
    this.#evict();
    return sequences;
  }

  async listTaskEvents(owner: TaskOwner, taskId: string, query?: TaskEventQuery): Promise<StoredTaskEvent[]> {
    this.#open();
    const key = keyOf(ownerOf(owner), checkId(taskId, 'taskId'));
    const q = eventQueryOf(query);
    const events = this.#tasks.get(key)?.events ?? [];
    // Sequences are the array positions plus one, so `after` is an index.
    const end = q.limit === undefined ? undefined : q.after + q.limit;
    return snapshot(events.slice(q.after, end));
  }

  async getRunReport(runId: string): Promise<RunReport | null> {
    this.#open();
    const row = this.#reports.get(checkId(runId, 'runId'))?.row;
    return row ? RunReport.fromDict(row.report) : null;
  }

  async listRunReports(query?: RunReportQuery): Promise<RunReport[]> {
    this.#open();
    const q = reportQueryOf(query);
    const matches = [...this.#reports.values()]
      .map((entry) => entry.row)
      .filter(
        (r) =>
          (q.session_id === undefined || r.session_id === q.session_id) &&
          (q.trace_id === undefined || r.trace_id === q.trace_id) &&
          (q.agent_name === undefined || r.agent_name === q.agent_name) &&
          (q.task_id === undefined || r.task_id === q.task_id),
      );
    matches.sort((a, b) =>
      newestFirst({ at: a.created_at, id: a.run_id }, { at: b.created_at, id: b.run_id }),
    );
    return matches.slice(0, q.limit).map((row) => RunReport.fromDict(row.report));
  }

  async deleteBefore(isoTimestamp: string): Promise<number> {
    this.#open();
    const cutoff = normalizeTimestamp(isoTimestamp, 'deleteBefore timestamp');
    let deleted = 0;
    for (const [key, entry] of this.#tasks) {
      if (entry.record.updated_at < cutoff) {
        this.#remove(key, entry);
        deleted += 1;
      }
    }
    for (const [id, report] of this.#reports) {
      if (report.row.created_at < cutoff) {
        this.#removeReport(id, report.bytes);
        deleted += 1;
      }
    }
    return deleted;
  }

  close(): void {
    this.#closed = true;
    this.#tasks.clear();
    this.#terminal.clear();
    this.#lastTerminal = null;
    this.#reports.clear();
    this.#bytes = 0;
  }
}
