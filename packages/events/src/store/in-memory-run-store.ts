/**
 * A RunStore in process memory: for tests, demos and single-process servers that need no history
 * across restarts. Bounded: finished tasks are evicted by count, size and age.
 */
import { ResourceExhaustedError, UnavailableError, type Task, type TaskEvent } from '@agent/core';
import { checkOptionNames, numberOption, optionNames, ownerKey } from '@agent/core/internal';
import { RedactionPolicy } from '../redaction.js';
import type { RunReport } from '../run-report.js';
import { reportOfStoredText } from './stored-report.js';
import {
  checkId,
  clockOf,
  DAY_MS,
  eventTextsOf,
  eventQueryOf,
  isAfter,
  isTerminal,
  normalizeTimestamp,
  ownerOf,
  pageQueryOf,
  pageTokenOf,
  reportQueryOf,
  recordOf,
  reportRowOf,
  reportTextOf,
  retentionOf,
  taskNotFound,
  taskQueryOf,
  taskRowOf,
  taskWriteRowsOf,
  type PageCursor,
  type ReportRow,
  type TaskColumns,
  type TaskRow,
} from './records.js';
import { InsertionQueue } from './insertion-queue.js';
import { compressText, decompressText, PackQueue, type HeldText, type PackedText } from './packed-text.js';
import { logBytesOf, TaskEventLog } from './task-event-log.js';
import type {
  RunReportQuery,
  RunStore,
  SaveTaskSnapshotOptions,
  StoredTaskEvent,
  TaskEventQuery,
  TaskOwner,
  TaskPage,
  TaskPageQuery,
  TaskRecord,
  TaskRecordQuery,
  TaskWrite,
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
  /**
   * Most bytes kept: the JSON size of task records, their events and run reports (a compressed record
   * counts its compressed size). Default 256 MiB.
   */
  maxBytes?: number;
  /**
   * A finished task's text, its event log or a run report larger than this many bytes of JSON is
   * compressed in the background, in slices between event-loop turns, and decompressed when read.
   * Default 256 KiB: the records that fill a store fast, where compressing costs a tenth of what
   * producing them did; `Infinity` keeps everything as text.
   */
  compressAboveBytes?: number;
}

const OPTION_NAMES = optionNames<InMemoryRunStoreOptions>({
  redactionPolicy: true,
  taskRetentionMs: true,
  now: true,
  maxTasks: true,
  maxBytes: true,
  compressAboveBytes: true,
});

export const DEFAULT_MAX_TASKS = 10_000;
export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
export const DEFAULT_COMPRESS_ABOVE_BYTES = 256 * 1024;

/**
 * One task as the store keeps it: columns to filter and sort on, and the task and its events as
 * JSON text (compressed once finished and large), parsed on every read. Text is compact to hold, cheap
 * to write (no copy to build), and a read always hands out a fresh object.
 */
interface Entry {
  record: TaskColumns;
  task: HeldText;
  /** Shared by the entries a task's successive snapshots make. */
  events: TaskEventLog;
  /** Bytes of the record plus its events. */
  bytes: number;
}

/** A report saved and not yet written: see `InMemoryRunStore.saveRunReport`. */
interface PendingReport {
  row: ReportRow;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Most reports waiting to be written: a turn that saves more (a burst, or a caller that never
 * yields to the event loop) writes its oldest at once instead of holding them all.
 */
const MAX_PENDING_REPORTS = 1024;

/** A run report as the store keeps it. */
interface ReportEntry {
  columns: ReportRow['columns'];
  report: HeldText;
  bytes: number;
}

function newestFirst(a: { at: string; id: string }, b: { at: string; id: string }): number {
  return a.at < b.at ? 1 : a.at > b.at ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function byRecency(a: TaskColumns, b: TaskColumns): number {
  return newestFirst({ at: a.updated_at, id: a.task_id }, { at: b.updated_at, id: b.task_id });
}

type FilterColumn = 'session_id' | 'state' | 'run_id' | 'trace_id' | 'agent_name';

/**
 * The JSON size of a row's columns (flat strings, numbers and nulls), escapes aside: counted from
 * the values, where serializing them only to measure the text was a tenth of a save.
 */
function columnBytes(columns: Readonly<Record<string, string | number | null>>): number {
  // `{}`, and per column `"key":` and its value, with a comma before all but the first.
  let bytes = 1;
  for (const key in columns) {
    const value = columns[key];
    bytes += key.length + 4;
    bytes += typeof value === 'string' ? Buffer.byteLength(value, 'utf8') + 2 : String(value).length;
  }
  return bytes;
}

/** What a task row counts for in the store, its event log aside: the task's text and its columns. */
function recordBytes(row: TaskRow, textBytes = Buffer.byteLength(row.task, 'utf8')): number {
  return textBytes + columnBytes(row.columns);
}

async function recordOfEntry(entry: Entry): Promise<TaskRecord> {
  return recordOf({ columns: entry.record, task: await decompressText(entry.task) });
}

async function reportOfEntry(entry: ReportEntry): Promise<RunReport> {
  return reportOfStoredText(await decompressText(entry.report));
}

export class InMemoryRunStore implements RunStore {
  readonly #tasks = new Map<string, Entry>();
  /**
   * The evictable entries, oldest `updated_at` first (ties in save order): a saved entry is
   * re-inserted at the end, so eviction takes from the front without sorting, unless the clock went
   * backwards (then sorted once).
   */
  readonly #terminal = new InsertionQueue<string, Entry>();
  #terminalSorted = true;
  #lastTerminal: TaskColumns | null = null;
  /** Run reports in save order (a re-saved report moves to the end), with their bytes. */
  readonly #reports = new InsertionQueue<string, ReportEntry>();
  /** Reports saved and not yet written as text, in save order, from `#pendingHead` on. */
  #pending: (PendingReport | undefined)[] = [];
  #pendingHead = 0;
  #writeScheduled = false;
  readonly #policy: RedactionPolicy | null;
  readonly #maxTasks: number;
  readonly #maxBytes: number;
  readonly #retentionMs: number;
  readonly #compressAbove: number;
  readonly #packs = new PackQueue();
  readonly #now: () => number;
  #bytes = 0;
  #closed = false;
  /** The retention cutoff of the last `now()` seen, so a burst of calls in one millisecond builds it once. */
  #cutoffNow = NaN;
  #cutoff = '';

  constructor(options: InMemoryRunStoreOptions = {}) {
    checkOptionNames('InMemoryRunStore', options, OPTION_NAMES);
    this.#policy =
      options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
    this.#maxTasks = numberOption('maxTasks', options.maxTasks, DEFAULT_MAX_TASKS, { min: 1, integer: true });
    this.#maxBytes = numberOption('maxBytes', options.maxBytes, DEFAULT_MAX_BYTES, { min: 1, integer: true });
    this.#retentionMs = retentionOf(options.taskRetentionMs, DAY_MS);
    this.#compressAbove =
      options.compressAboveBytes === Infinity
        ? Infinity
        : numberOption('compressAboveBytes', options.compressAboveBytes, DEFAULT_COMPRESS_ABOVE_BYTES, {
            min: 1,
            integer: true,
          });
    this.#now = clockOf(options.now, 'InMemoryRunStore');
  }

  /** What the store holds now: task records, run reports, and the bytes of all of it. */
  get usage(): { tasks: number; reports: number; bytes: number } {
    this.#writePending();
    return { tasks: this.#tasks.size, reports: this.#reports.size, bytes: this.#bytes };
  }

  /** Resolves once every record saved so far that is due for compression has been compressed. */
  settled(): Promise<void> {
    this.#writePending();
    return this.#packs.settled();
  }

  /** Rejects after close, and drops expired entries so no call can see one. */
  #open(): void {
    if (this.#closed) throw new UnavailableError('The run store is closed');
    this.#expire();
  }

  #sortTerminal(): void {
    if (this.#terminalSorted) return;
    // Stable sort: equal timestamps keep their save order.
    this.#terminal.sort((a, b) =>
      a.record.updated_at < b.record.updated_at ? -1 : a.record.updated_at > b.record.updated_at ? 1 : 0,
    );
    this.#terminalSorted = true;
  }

  #expire(): void {
    if (this.#retentionMs === Infinity) return;
    const now = this.#now();
    if (now !== this.#cutoffNow) {
      this.#cutoff = new Date(now - this.#retentionMs).toISOString();
      this.#cutoffNow = now;
    }
    const cutoff = this.#cutoff;
    for (let oldest = this.#reports.first(); oldest; oldest = this.#reports.first()) {
      if (oldest.value.columns.created_at >= cutoff) break;
      this.#removeReport(oldest.key, oldest.value.bytes);
    }
    if (this.#terminal.size === 0) return;
    this.#sortTerminal();
    for (let oldest = this.#terminal.first(); oldest; oldest = this.#terminal.first()) {
      if (oldest.value.record.updated_at >= cutoff) break;
      this.#remove(oldest.key, oldest.value);
    }
  }

  /**
   * Evicts while over a bound (less `room`, the bytes about to be added): the oldest finished tasks
   * first, then the oldest reports; live entries are never evicted.
   */
  #evict(room = 0): void {
    const limit = this.#maxBytes - room;
    while (this.#reports.size > this.#maxTasks) {
      const oldest = this.#reports.first()!;
      this.#removeReport(oldest.key, oldest.value.bytes);
    }
    if (this.#tasks.size <= this.#maxTasks && this.#bytes <= limit) return;
    this.#sortTerminal();
    while (this.#tasks.size > this.#maxTasks || this.#bytes > limit) {
      const oldest = this.#terminal.first();
      if (!oldest) break;
      this.#remove(oldest.key, oldest.value);
    }
    while (this.#bytes > limit) {
      const oldest = this.#reports.first();
      if (!oldest) break;
      this.#removeReport(oldest.key, oldest.value.bytes);
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
    this.#saveRow(taskRowOf(task, options, this.#policy, this.#now));
  }

  #saveRow(row: TaskRow): void {
    const record = row.columns;
    const key = ownerKey(record, record.task_id);
    const events = this.#tasks.get(key)?.events ?? new TaskEventLog();
    const textBytes = Buffer.byteLength(row.task, 'utf8');
    const entry: Entry = {
      record,
      task: row.task,
      events,
      bytes: recordBytes(row, textBytes) + events.bytes,
    };
    this.#put(key, entry);
    this.#evict();
    if (
      this.#tasks.get(key) === entry &&
      isTerminal(record.state) &&
      (textBytes > this.#compressAbove || events.unpackedBytes > this.#compressAbove)
    )
      this.#packs.add(() => this.#packTask(key, entry));
  }

  /** Compresses a finished task's text and event log, unless it was replaced or forgotten meanwhile. */
  async #packTask(key: string, entry: Entry): Promise<void> {
    const holdsLog = (): Entry | undefined => {
      const current = this.#tasks.get(key);
      return !this.#closed && current?.events === entry.events ? current : undefined;
    };
    if (!holdsLog()) return;
    if (entry.events.unpackedBytes > this.#compressAbove)
      await entry.events.pack((delta) => {
        const current = holdsLog();
        if (!current) return;
        current.bytes += delta;
        this.#bytes += delta;
      });
    const text = entry.task;
    if (typeof text !== 'string') return;
    const packed = await this.#smaller(text);
    const current = holdsLog();
    if (!packed || !current || current.task !== text) return;
    current.task = packed.data;
    current.bytes += packed.delta;
    this.#bytes += packed.delta;
  }

  /** `text` compressed and the change in bytes, when it is over the threshold and comes out smaller. */
  async #smaller(text: string): Promise<{ data: PackedText; delta: number } | null> {
    const textBytes = Buffer.byteLength(text, 'utf8');
    if (textBytes <= this.#compressAbove) return null;
    const data = await compressText(text);
    const delta = data.bytes - textBytes;
    return delta < 0 && !this.#closed ? { data, delta } : null;
  }

  /**
   * Checks the report and reads it now; its text is written after the current turn (see
   * {@link #writePending}), and the promise resolves then. Every read of reports writes the pending
   * ones first, so a saved report is found at once.
   */
  saveRunReport(report: RunReport): Promise<void> {
    let row: ReportRow;
    try {
      this.#open();
      row = reportRowOf(report);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<void>((resolve, reject) => {
      // A burst larger than the bound writes its oldest reports at once instead of holding them all.
      if (this.#pending.length - this.#pendingHead >= MAX_PENDING_REPORTS) this.#writePending(true);
      this.#pending.push({ row, resolve, reject });
      if (!this.#writeScheduled) {
        this.#writeScheduled = true;
        setImmediate(this.#writeTurn);
      }
    });
  }

  /**
   * Writes the reports saved during the turn, in its check phase: a run's report is written after
   * its callers were answered. A thousand tasks canceled at once get their answers first and their
   * reports (each with every event of its run) after, instead of one report between two answers.
   */
  readonly #writeTurn = (): void => {
    this.#writeScheduled = false;
    this.#writePending();
  };

  /** Writes pending reports in save order: all of them, or only the oldest with `oldestOnly`. */
  #writePending(oldestOnly = false): void {
    const pending = this.#pending;
    while (this.#pendingHead < pending.length) {
      const item = pending[this.#pendingHead]!;
      pending[this.#pendingHead++] = undefined;
      try {
        this.#putReport(item.row.columns, reportTextOf(item.row, this.#policy));
        item.resolve();
      } catch (error) {
        item.reject(error);
      }
      if (oldestOnly) break;
    }
    if (this.#pendingHead === pending.length) {
      this.#pending = [];
      this.#pendingHead = 0;
    }
  }

  #putReport(columns: ReportRow['columns'], text: string): void {
    const runId = columns.run_id;
    const previous = this.#reports.get(runId);
    if (previous) this.#removeReport(runId, previous.bytes);
    const textBytes = Buffer.byteLength(text, 'utf8');
    const entry: ReportEntry = {
      columns,
      report: text,
      bytes: textBytes + columnBytes(columns),
    };
    this.#reports.set(runId, entry);
    this.#bytes += entry.bytes;
    this.#evict();
    if (this.#reports.get(runId) === entry && textBytes > this.#compressAbove)
      this.#packs.add(() => this.#packReport(runId, entry));
  }

  async #packReport(runId: string, entry: ReportEntry): Promise<void> {
    if (this.#closed || this.#reports.get(runId) !== entry || typeof entry.report !== 'string') return;
    const packed = await this.#smaller(entry.report);
    if (!packed || this.#reports.get(runId) !== entry) return;
    entry.report = packed.data;
    entry.bytes += packed.delta;
    this.#bytes += packed.delta;
  }

  async getTaskRecord(taskId: string, owner?: TaskOwner): Promise<TaskRecord | null> {
    this.#open();
    const entry = this.#tasks.get(ownerKey(ownerOf(owner), checkId(taskId, 'taskId')));
    return entry ? recordOfEntry(entry) : null;
  }

  /** One owner's records with every given column value (and after the cursor), newest first. */
  #matching(owner: TaskOwner, filters: Partial<Record<FilterColumn, string>>, after?: PageCursor): Entry[] {
    const wanted = Object.entries(filters).filter(([, value]) => value !== undefined) as [
      FilterColumn,
      string,
    ][];
    const matches: Entry[] = [];
    for (const entry of this.#tasks.values()) {
      const record = entry.record;
      if (record.tenant !== owner.tenant || record.principal_id !== owner.principal_id) continue;
      if (!wanted.every(([column, value]) => record[column] === value)) continue;
      if (after === undefined || isAfter(record, after)) matches.push(entry);
    }
    return matches.sort((a, b) => byRecency(a.record, b.record));
  }

  async listTaskRecords(query?: TaskRecordQuery): Promise<TaskRecord[]> {
    this.#open();
    const { owner, limit, ...filters } = taskQueryOf(query);
    return Promise.all(this.#matching(owner, filters).slice(0, limit).map(recordOfEntry));
  }

  async pageTaskRecords(query?: TaskPageQuery): Promise<TaskPage> {
    this.#open();
    const q = pageQueryOf(query);
    const matches = this.#matching(q.owner, { session_id: q.session_id, state: q.state }, q.after);
    const page = matches.slice(0, q.page_size);
    const more = matches.length > q.page_size;
    return {
      records: await Promise.all(page.map(recordOfEntry)),
      next_page_token: more ? pageTokenOf(q, page[page.length - 1]!.record) : '',
    };
  }

  async appendTaskEvents(owner: TaskOwner, taskId: string, events: TaskEvent[]): Promise<number[]> {
    this.#open();
    const who = ownerOf(owner);
    const key = ownerKey(who, checkId(taskId, 'taskId'));
    const texts = eventTextsOf(taskId, events, this.#policy);
    const entry = this.#tasks.get(key);
    if (!entry) throw taskNotFound(taskId);
    const added = entry.events.measure(texts);
    this.#makeRoom(key, entry, added, taskId);
    return this.#appendTexts(key, entry, texts, added);
  }

  /**
   * Evicts finished entries until `added` more bytes fit. Only running tasks left to forget, and a
   * running task's log is never cut short: refused, so that the store stays within its bound
   * instead of growing with whatever runs. `entry` (the task's own, when it has one) must survive.
   */
  #makeRoom(key: string, entry: Entry | undefined, added: number, taskId: string): void {
    if (this.#bytes + added <= this.#maxBytes) return;
    this.#evict(added);
    if (this.#bytes + added > this.#maxBytes || (entry && this.#tasks.get(key) !== entry))
      throw new ResourceExhaustedError('The memory task store is full with the logs of running tasks', {
        data: { task_id: taskId, limit: 'maxBytes', max_bytes: this.#maxBytes },
      });
  }

  #appendTexts(key: string, entry: Entry, texts: string[], added: number): number[] {
    const sequences = entry.events.append(texts, added);
    entry.bytes += added;
    this.#bytes += added;
    // Events after the end (a push delivery's, say) pack like the rest once there are enough.
    if (isTerminal(entry.record.state) && entry.events.unpackedBytes > this.#compressAbove)
      this.#packs.add(() => this.#packTask(key, entry));
    return sequences;
  }

  /**
   * A task's snapshots and appends in one call, all or none. This store has no commit to share;
   * what it gains is the text of a run's ending: its final status carries the very task its last
   * snapshot saves, and that task is written once for both. What could refuse an append midway (no
   * record yet, no room) is settled before anything is applied.
   */
  async writeTask(owner: TaskOwner, taskId: string, writes: readonly TaskWrite[]): Promise<void> {
    this.#open();
    const who = ownerOf(owner);
    const key = ownerKey(who, checkId(taskId, 'taskId'));
    const rows = taskWriteRowsOf(who, taskId, writes, this.#policy, this.#now);
    const entry = this.#tasks.get(key);
    // The bytes each append adds: a snapshot keeps the task's log, so its numbering runs on.
    const added = new Array<number>(rows.length).fill(0);
    let count = entry?.events.count ?? 0;
    let appended = 0;
    let last: TaskRow | undefined;
    rows.forEach((row, index) => {
      if ('row' in row) last = row.row;
      else if (!entry && !last) throw taskNotFound(taskId);
      else {
        added[index] = logBytesOf(row.texts, count);
        appended += added[index]!;
        count += row.texts.length;
      }
    });
    if (appended > 0) {
      // The record the last snapshot leaves, in place of the one held now.
      const replaced = last && entry ? entry.bytes - entry.events.bytes : 0;
      const record = last ? recordBytes(last) : 0;
      this.#makeRoom(key, entry, Math.max(appended, appended + record - replaced), taskId);
    }
    for (const [index, row] of rows.entries()) {
      if ('row' in row) {
        this.#saveRow(row.row);
        continue;
      }
      const current = this.#tasks.get(key);
      // The bound on the number of tasks forgot this one as soon as its snapshot was saved: its
      // events go with it, as if appended and then forgotten.
      if (!current) return;
      this.#appendTexts(key, current, row.texts, added[index]!);
    }
  }

  async listTaskEvents(owner: TaskOwner, taskId: string, query?: TaskEventQuery): Promise<StoredTaskEvent[]> {
    this.#open();
    const key = ownerKey(ownerOf(owner), checkId(taskId, 'taskId'));
    const q = eventQueryOf(query);
    const entry = this.#tasks.get(key);
    if (!entry) return [];
    // Sequences are the array positions plus one, so `after` is an index.
    const end = q.limit === undefined ? undefined : q.after + q.limit;
    return entry.events
      .read(q.after, end)
      .map((text, index) => ({ sequence: q.after + index + 1, event: JSON.parse(text) as TaskEvent }));
  }

  async getRunReport(runId: string): Promise<RunReport | null> {
    this.#open();
    this.#writePending();
    const entry = this.#reports.get(checkId(runId, 'runId'));
    return entry ? reportOfEntry(entry) : null;
  }

  async listRunReports(query?: RunReportQuery): Promise<RunReport[]> {
    this.#open();
    this.#writePending();
    const q = reportQueryOf(query);
    const matches = this.#reports
      .values()
      .filter(
        ({ columns: r }) =>
          (q.session_id === undefined || r.session_id === q.session_id) &&
          (q.trace_id === undefined || r.trace_id === q.trace_id) &&
          (q.agent_name === undefined || r.agent_name === q.agent_name) &&
          (q.task_id === undefined || r.task_id === q.task_id),
      );
    matches.sort(({ columns: a }, { columns: b }) =>
      newestFirst({ at: a.created_at, id: a.run_id }, { at: b.created_at, id: b.run_id }),
    );
    return Promise.all(matches.slice(0, q.limit).map(reportOfEntry));
  }

  async deleteBefore(isoTimestamp: string): Promise<number> {
    this.#open();
    const cutoff = normalizeTimestamp(isoTimestamp, 'deleteBefore timestamp');
    this.#writePending();
    let deleted = 0;
    for (const [key, entry] of this.#tasks) {
      if (entry.record.updated_at < cutoff) {
        this.#remove(key, entry);
        deleted += 1;
      }
    }
    for (const report of this.#reports.values()) {
      if (report.columns.created_at < cutoff) {
        this.#removeReport(report.columns.run_id, report.bytes);
        deleted += 1;
      }
    }
    return deleted;
  }

  /** Reports saved before the close are written first: their saves resolve, as stored. */
  close(): void {
    this.#writePending();
    this.#closed = true;
    this.#packs.clear();
    this.#tasks.clear();
    this.#terminal.clear();
    this.#lastTerminal = null;
    this.#reports.clear();
    this.#bytes = 0;
  }
}
