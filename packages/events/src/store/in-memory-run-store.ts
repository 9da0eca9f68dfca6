/**
 * A RunStore in process memory: for tests, demos and single-process servers that need no history
 * across restarts.
 */
import { UnavailableError } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { snapshot } from '../clone.js';
import { RedactionPolicy } from '../redaction.js';
import { RunReport } from '../run-report.js';
import {
  checkId,
  normalizeTimestamp,
  reportQueryOf,
  reportRowOf,
  taskQueryOf,
  taskRecordOf,
} from './records.js';
import type {
  RunReportQuery,
  RunReportRow,
  RunStore,
  SaveTaskSnapshotOptions,
  TaskRecord,
  TaskRecordQuery,
} from './run-store.js';
import type { Task } from '@agent/core';

export interface RunStoreOptions {
  /** Masking applied before anything is stored. Default `RedactionPolicy.default()`; `null` stores raw data. */
  redactionPolicy?: RedactionPolicy | null;
}

const OPTION_NAMES = optionNames<RunStoreOptions>({ redactionPolicy: true });

function newestFirst(a: { at: string; id: string }, b: { at: string; id: string }): number {
  return a.at < b.at ? 1 : a.at > b.at ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export class InMemoryRunStore implements RunStore {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #reports = new Map<string, RunReportRow>();
  readonly #policy: RedactionPolicy | null;
  #closed = false;

  constructor(options: RunStoreOptions = {}) {
    checkOptionNames('InMemoryRunStore', options, OPTION_NAMES);
    this.#policy =
      options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
  }

  #open(): void {
    if (this.#closed) throw new UnavailableError('The run store is closed');
  }

  async saveTaskSnapshot(task: Task, options: SaveTaskSnapshotOptions = {}): Promise<void> {
    this.#open();
    const record = taskRecordOf(task, options, this.#policy);
    this.#tasks.set(record.task_id, record);
  }

  async saveRunReport(report: RunReport): Promise<void> {
    this.#open();
    const row = reportRowOf(report, this.#policy);
    this.#reports.set(row.run_id, row);
  }

  async getTaskRecord(taskId: string): Promise<TaskRecord | null> {
    this.#open();
    const record = this.#tasks.get(checkId(taskId, 'taskId'));
    return record ? snapshot(record) : null;
  }

  async listTaskRecords(query?: TaskRecordQuery): Promise<TaskRecord[]> {
    this.#open();
    const q = taskQueryOf(query);
    const matches = [...this.#tasks.values()].filter(
      (r) =>
        (q.session_id === undefined || r.session_id === q.session_id) &&
        (q.state === undefined || r.state === q.state) &&
        (q.run_id === undefined || r.run_id === q.run_id) &&
        (q.trace_id === undefined || r.trace_id === q.trace_id) &&
        (q.agent_name === undefined || r.agent_name === q.agent_name),
    );
    matches.sort((a, b) =>
      newestFirst({ at: a.updated_at, id: a.task_id }, { at: b.updated_at, id: b.task_id }),
    );
    return snapshot(matches.slice(0, q.limit));
  }

  async getRunReport(runId: string): Promise<RunReport | null> {
    this.#open();
    const row = this.#reports.get(checkId(runId, 'runId'));
    return row ? RunReport.fromDict(row.report) : null;
  }

  async listRunReports(query?: RunReportQuery): Promise<RunReport[]> {
    this.#open();
    const q = reportQueryOf(query);
    const matches = [...this.#reports.values()].filter(
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
    for (const [id, record] of this.#tasks) {
      if (record.updated_at < cutoff) {
        this.#tasks.delete(id);
        deleted += 1;
      }
    }
    for (const [id, row] of this.#reports) {
      if (row.created_at < cutoff) {
        this.#reports.delete(id);
        deleted += 1;
      }
    }
    return deleted;
  }

  close(): void {
    this.#closed = true;
    this.#tasks.clear();
    this.#reports.clear();
  }
}
