/**
 * A RunStore in PostgreSQL: one database shared by every replica of an agent. Behaves as the SQLite
 * run store of `@agent/events` does (the shared suite runs against both), with two additions for
 * stores several processes write: an ending is final, and each write notifies the task's watchers.
 */
import { UnavailableError, type Task, type TaskEvent } from '@agent/core';
import { checkOptionNames } from '@agent/core/internal';
import {
  RedactionPolicy,
  type RunReport,
  type RunReportQuery,
  type RunStore,
  type RunStoreOptions,
  type SaveTaskSnapshotOptions,
  type StoredTaskEvent,
  type TaskEventQuery,
  type TaskOwner,
  type TaskPage,
  type TaskPageQuery,
  type TaskRecord,
  type TaskRecordQuery,
  type TaskWrite,
} from '@agent/events';
import { PostgresCoordination } from '../coordination/postgres-coordination.js';
import type { PostgresCoordinationOptions } from '../coordination/options.js';
import type { PostgresDatabase } from '../database.js';
import { postgresError } from '../errors.js';
import {
  checkId,
  clockOf,
  eventQueryOf,
  eventTextsOf,
  normalizeTimestamp,
  ownerOf,
  pageQueryOf,
  pageTokenOf,
  reportQueryOf,
  reportOfStoredText,
  reportTextRowOf,
  retentionOf,
  taskQueryOf,
  taskRowOf,
  taskWriteRowsOf,
  type TaskWriteRow,
} from '@agent/events/internal';
import { CONNECTION_OPTION_NAMES, databaseOf, type PostgresConnectionOptions } from '../store-database.js';
import { SqlFilter } from '../sql-filter.js';
import {
  appendEventsIn,
  appendToLiveTaskAtOnce,
  appendToTaskIn,
  lockExistingTask,
  saveSnapshotIn,
  saveWithEventsAtOnce,
  sweepExpired,
  TERMINAL_SQL,
  type LockedTask,
} from './task-writes.js';

/** How often, at most, a write first deletes the finished records retention has expired (ms). */
const SWEEP_EVERY_MS = 1000;

/** True when a write after `index` appends an event: its notification then covers the snapshot's. */
function appendsAfter(rows: readonly TaskWriteRow[], index: number): boolean {
  for (let next = index + 1; next < rows.length; next++) {
    const write = rows[next]!;
    if ('texts' in write && write.texts.length > 0) return true;
  }
  return false;
}

export interface PostgresRunStoreOptions extends RunStoreOptions, PostgresConnectionOptions {
  /**
   * Set when several replicas share the database (`{}` for the defaults): the store then carries a
   * {@link PostgresCoordination} (`coordination`), which the server pipeline uses to reach the
   * tasks other replicas run. It must be started (`coordination.start()`, done by
   * `openPostgresStores`) before the first task; `close()` closes it. Its redaction is the store's.
   */
  coordination?: Omit<PostgresCoordinationOptions, 'redactionPolicy'>;
}

const OPTION_NAMES = [
  ...CONNECTION_OPTION_NAMES,
  'redactionPolicy',
  'taskRetentionMs',
  'now',
  'coordination',
];

const TASK_SELECT = `SELECT tenant, principal_id, task_id, state, run_id, session_id, trace_id, agent_name,
  created_at, updated_at, task FROM agent_tasks`;

interface TaskRow extends Omit<TaskRecord, 'task'> {
  task: string;
}

function recordOf(row: TaskRow): TaskRecord {
  return { ...row, task: JSON.parse(row.task) as Task };
}

export class PostgresRunStore implements RunStore {
  readonly database: PostgresDatabase;
  /** What is masked before anything is stored (`null`: raw data). */
  readonly redactionPolicy: RedactionPolicy | null;
  /** Present with the `coordination` option: how replicas sharing the database reach each other's tasks. */
  readonly coordination?: PostgresCoordination;
  readonly #ownsDatabase: boolean;
  readonly #retentionMs: number;
  readonly #now: () => number;
  /** When the last sweep of expired records ran, by the store's clock. */
  #sweptAt: number | undefined;
  #closed = false;

  /**
   * Opens no connection: the first call does (and brings the schema up to date).
   * @throws ValueError for an unknown or bad option.
   */
  constructor(options: PostgresRunStoreOptions) {
    checkOptionNames('PostgresRunStore', options, OPTION_NAMES);
    this.#retentionMs = retentionOf(options.taskRetentionMs, Infinity);
    this.#now = clockOf(options.now, 'PostgresRunStore');
    this.redactionPolicy =
      options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
    const { database, owned } = databaseOf(options, 'PostgresRunStore');
    this.database = database;
    this.#ownsDatabase = owned;
    if (options.coordination !== undefined) {
      this.coordination = new PostgresCoordination(database, {
        ...options.coordination,
        redactionPolicy: this.redactionPolicy,
      });
    }
  }

  #open(): void {
    if (this.#closed || this.database.isClosed) throw new UnavailableError('The run store is closed');
  }

  #error(error: unknown, operation: string): Error {
    return postgresError(error, `PostgresRunStore.${operation}`, this.database.pool);
  }

  /** The retention cutoff, or null without `taskRetentionMs`. */
  #cutoff(): string | null {
    return this.#retentionMs === Infinity ? null : new Date(this.#now() - this.#retentionMs).toISOString();
  }

  /**
   * The retention cutoff of a write, after deleting the records it expired when the last such sweep
   * is {@link SWEEP_EVERY_MS} old by the store's clock (or there was none): one statement a second
   * at most, where each write used to take one.
   */
  async #sweptCutoff(): Promise<string | null> {
    const cutoff = this.#cutoff();
    if (cutoff === null) return null;
    const now = this.#now();
    if (this.#sweptAt === undefined || now - this.#sweptAt >= SWEEP_EVERY_MS || now < this.#sweptAt) {
      this.#sweptAt = now;
      await sweepExpired(this.database, cutoff);
    }
    return cutoff;
  }

  /** Hides expired finished records that no write has deleted yet, so reads agree with the retention. */
  #live(filter: SqlFilter, prefix = ''): void {
    const cutoff = this.#cutoff();
    if (cutoff !== null)
      filter.add(
        `NOT (${prefix}state IN (${TERMINAL_SQL}) AND ${prefix}updated_at < ${filter.param(cutoff)})`,
      );
  }

  async saveTaskSnapshot(task: Task, options: SaveTaskSnapshotOptions = {}): Promise<void> {
    try {
      this.#open();
      const row = taskRowOf(task, options, this.redactionPolicy, this.#now);
      const cutoff = await this.#sweptCutoff();
      if (await saveWithEventsAtOnce(this.database, row, [])) return;
      await this.database.transaction(async (client) => {
        await saveSnapshotIn(client, row, cutoff);
      });
    } catch (error) {
      throw this.#error(error, 'saveTaskSnapshot');
    }
  }

  async saveRunReport(report: RunReport): Promise<void> {
    try {
      this.#open();
      const { columns: c, report: text } = reportTextRowOf(report, this.redactionPolicy);
      await this.database.query(
        `INSERT INTO agent_run_reports (run_id, task_id, session_id, trace_id, agent_name, created_at, report)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (run_id) DO UPDATE SET
           task_id = EXCLUDED.task_id, session_id = EXCLUDED.session_id, trace_id = EXCLUDED.trace_id,
           agent_name = EXCLUDED.agent_name, created_at = EXCLUDED.created_at, report = EXCLUDED.report`,
        [c.run_id, c.task_id, c.session_id, c.trace_id, c.agent_name, c.created_at, text],
      );
    } catch (error) {
      throw this.#error(error, 'saveRunReport');
    }
  }

  async getTaskRecord(taskId: string, owner?: TaskOwner): Promise<TaskRecord | null> {
    try {
      this.#open();
      const who = ownerOf(owner);
      checkId(taskId, 'taskId');
      const filter = new SqlFilter().equal('tenant', who.tenant).equal('principal_id', who.principal_id);
      filter.equal('task_id', taskId);
      this.#live(filter);
      const { rows } = await this.database.query<TaskRow>(`${TASK_SELECT} ${filter.where()}`, filter.params);
      return rows[0] ? recordOf(rows[0]) : null;
    } catch (error) {
      throw this.#error(error, 'getTaskRecord');
    }
  }

  async listTaskRecords(query?: TaskRecordQuery): Promise<TaskRecord[]> {
    try {
      this.#open();
      const q = taskQueryOf(query);
      const filter = new SqlFilter()
        .equal('tenant', q.owner.tenant)
        .equal('principal_id', q.owner.principal_id);
      for (const column of ['session_id', 'state', 'run_id', 'trace_id', 'agent_name'] as const)
        if (q[column] !== undefined) filter.equal(column, q[column]);
      this.#live(filter);
      const limit = filter.param(q.limit ?? null);
      const { rows } = await this.database.query<TaskRow>(
        `${TASK_SELECT} ${filter.where()} ORDER BY updated_at DESC, task_id ASC LIMIT ${limit}`,
        filter.params,
      );
      return rows.map(recordOf);
    } catch (error) {
      throw this.#error(error, 'listTaskRecords');
    }
  }

  async pageTaskRecords(query?: TaskPageQuery): Promise<TaskPage> {
    try {
      this.#open();
      const q = pageQueryOf(query);
      const filter = new SqlFilter()
        .equal('tenant', q.owner.tenant)
        .equal('principal_id', q.owner.principal_id);
      if (q.session_id !== undefined) filter.equal('session_id', q.session_id);
      if (q.state !== undefined) filter.equal('state', q.state);
      if (q.after) {
        const at = filter.param(q.after.updated_at);
        filter.add(
          `(updated_at < ${at} OR (updated_at = ${at} AND task_id > ${filter.param(q.after.task_id)}))`,
        );
      }
      this.#live(filter);
      // One row more than the page tells whether another page exists.
      const limit = filter.param(q.page_size + 1);
      const { rows } = await this.database.query<TaskRow>(
        `${TASK_SELECT} ${filter.where()} ORDER BY updated_at DESC, task_id ASC LIMIT ${limit}`,
        filter.params,
      );
      const records = rows.slice(0, q.page_size).map(recordOf);
      return {
        records,
        next_page_token: rows.length > q.page_size ? pageTokenOf(q, records[records.length - 1]!) : '',
      };
    } catch (error) {
      throw this.#error(error, 'pageTaskRecords');
    }
  }

  /**
   * Numbers the events after the log's last sequence under the task record's row lock, so appends
   * from any number of processes get distinct, gap-free ranges.
   * @throws TaskNotFoundError when the owner has no record of the task.
   * @throws TaskNotCancelableError when the task has ended: its record is terminal and its log ends
   * with a final `task.status`.
   */
  async appendTaskEvents(owner: TaskOwner, taskId: string, events: TaskEvent[]): Promise<number[]> {
    try {
      this.#open();
      const who = ownerOf(owner);
      checkId(taskId, 'taskId');
      const texts = eventTextsOf(taskId, events, this.redactionPolicy);
      const cutoff = await this.#sweptCutoff();
      const sequences = await appendToLiveTaskAtOnce(this.database, who, taskId, texts);
      if (sequences) return sequences;
      return await this.database.transaction(async (client) => {
        return appendToTaskIn(client, who, taskId, cutoff, texts);
      });
    } catch (error) {
      throw this.#error(error, 'appendTaskEvents');
    }
  }

  /**
   * Every write in one transaction: one round of BEGIN and COMMIT where the calls one by one take a
   * round each. Each append locks the record first, as {@link appendTaskEvents} does.
   */
  async writeTask(owner: TaskOwner, taskId: string, writes: readonly TaskWrite[]): Promise<void> {
    try {
      this.#open();
      const who = ownerOf(owner);
      checkId(taskId, 'taskId');
      const rows = taskWriteRowsOf(who, taskId, writes, this.redactionPolicy, this.#now);
      const cutoff = await this.#sweptCutoff();
      if (await this.#writeAtOnce(who, taskId, rows)) return;
      await this.database.transaction(async (client) => {
        // The record, locked from the group's first write on: a snapshot's statement locks it as
        // it saves it, so the appends after it need no lock of their own.
        let locked: LockedTask | undefined;
        for (let index = 0; index < rows.length; index++) {
          const write = rows[index]!;
          if ('row' in write) {
            // An append later in the group notifies, with a later sequence, at the same commit.
            locked = await saveSnapshotIn(client, write.row, cutoff, !appendsAfter(rows, index));
            continue;
          }
          locked ??= await lockExistingTask(client, who, taskId, cutoff);
          await appendEventsIn(client, who, taskId, locked, write.texts);
        }
      });
    } catch (error) {
      throw this.#error(error, 'writeTask');
    }
  }

  /**
   * The groups a run writes most (a snapshot, its events after it, or events alone) as one statement
   * with no transaction around it, where that statement can tell it writes what the transaction
   * would. False when the group has another shape or the statement wrote nothing.
   */
  async #writeAtOnce(owner: TaskOwner, taskId: string, rows: readonly TaskWriteRow[]): Promise<boolean> {
    const [first, second] = rows;
    if (first && 'row' in first && rows.length <= 2) {
      if (!second) return saveWithEventsAtOnce(this.database, first.row, []);
      if ('texts' in second) return saveWithEventsAtOnce(this.database, first.row, second.texts);
    } else if (first && 'texts' in first && rows.length === 1) {
      return (await appendToLiveTaskAtOnce(this.database, owner, taskId, first.texts)) !== undefined;
    }
    return false;
  }

  async listTaskEvents(owner: TaskOwner, taskId: string, query?: TaskEventQuery): Promise<StoredTaskEvent[]> {
    try {
      this.#open();
      const who = ownerOf(owner);
      checkId(taskId, 'taskId');
      const q = eventQueryOf(query);
      const filter = new SqlFilter().equal('e.tenant', who.tenant).equal('e.principal_id', who.principal_id);
      filter.equal('e.task_id', taskId);
      filter.add(`e.sequence > ${filter.param(q.after)}::bigint`);
      const live = new SqlFilter(filter.params);
      this.#live(live, 'r.');
      if (live.clauses.length > 0)
        filter.add(`EXISTS (SELECT 1 FROM agent_tasks r WHERE r.tenant = e.tenant AND r.principal_id = e.principal_id
          AND r.task_id = e.task_id AND ${live.clauses.join(' AND ')})`);
      const limit = filter.param(q.limit ?? null);
      const { rows } = await this.database.query<{ sequence: number; event: string }>(
        `SELECT e.sequence, e.event FROM agent_task_events e ${filter.where()} ORDER BY e.sequence LIMIT ${limit}`,
        filter.params,
      );
      return rows.map((row) => ({ sequence: row.sequence, event: JSON.parse(row.event) as TaskEvent }));
    } catch (error) {
      throw this.#error(error, 'listTaskEvents');
    }
  }

  async getRunReport(runId: string): Promise<RunReport | null> {
    try {
      this.#open();
      checkId(runId, 'runId');
      const { rows } = await this.database.query<{ report: string }>(
        'SELECT report FROM agent_run_reports WHERE run_id = $1',
        [runId],
      );
      return rows[0] ? reportOfStoredText(rows[0].report) : null;
    } catch (error) {
      throw this.#error(error, 'getRunReport');
    }
  }

  async listRunReports(query?: RunReportQuery): Promise<RunReport[]> {
    try {
      this.#open();
      const q = reportQueryOf(query);
      const filter = new SqlFilter();
      for (const column of ['session_id', 'trace_id', 'agent_name', 'task_id'] as const)
        if (q[column] !== undefined) filter.equal(column, q[column]);
      const limit = filter.param(q.limit ?? null);
      const { rows } = await this.database.query<{ report: string }>(
        `SELECT report FROM agent_run_reports ${filter.where()} ORDER BY created_at DESC, run_id ASC LIMIT ${limit}`,
        filter.params,
      );
      return rows.map((row) => reportOfStoredText(row.report));
    } catch (error) {
      throw this.#error(error, 'listRunReports');
    }
  }

  async deleteBefore(isoTimestamp: string): Promise<number> {
    try {
      this.#open();
      const cutoff = normalizeTimestamp(isoTimestamp, 'deleteBefore timestamp');
      return await this.database.transaction(async (client) => {
        // The foreign key deletes each record's events with it.
        const tasks = await client.query('DELETE FROM agent_tasks WHERE updated_at < $1', [cutoff]);
        const reports = await client.query('DELETE FROM agent_run_reports WHERE created_at < $1', [cutoff]);
        return (tasks.rowCount ?? 0) + (reports.rowCount ?? 0);
      });
    } catch (error) {
      throw this.#error(error, 'deleteBefore');
    }
  }

  /** Closes the database when the store opened it; a shared one stays open. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Before the database: a coordination still holding claims leaves its lease to expire.
    await this.coordination?.close();
    if (this.#ownsDatabase) await this.database.close();
  }
}
