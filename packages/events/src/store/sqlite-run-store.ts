/**
 * A RunStore in one SQLite file on better-sqlite3 (optional peer, loaded on first use). WAL mode,
 * so readers in other processes see committed writes while one process writes. Writes are group
 * committed (see sqlite-group-commit.ts): a write resolves once the batch it went in has committed.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { AgentError, UnavailableError, ValueError, type Task, type TaskEvent } from '@agent/core';
import { failedEnding, optionNames } from '@agent/core/internal';
import { RedactionPolicy } from '../redaction.js';
import type { RunReport } from '../run-report.js';
import type { RunStoreOptions } from './in-memory-run-store.js';
import { reportOfStoredText } from './stored-report.js';
import {
  checkId,
  clockOf,
  eventTextsOf,
  eventQueryOf,
  normalizeTimestamp,
  ownerOf,
  pageQueryOf,
  pageTokenOf,
  reportQueryOf,
  reportTextRowOf,
  retentionOf,
  taskQueryOf,
  taskNotFound,
  taskRowOf,
  taskWriteRowsOf,
  TERMINAL_STATES,
} from './records.js';
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
import { WalCheckpointer } from './sqlite-checkpointer.js';
import { SqliteGroupCommit } from './sqlite-group-commit.js';
import {
  checkSqliteOptions,
  DEFAULT_BUSY_TIMEOUT_MS,
  openSqlite,
  sqliteError,
  useWriteAheadLog,
  WAL_CHECKPOINT_PAGES,
} from './sqlite-support.js';

/** How long a write blocks the event loop waiting for another process's lock, by default. */
const WRITE_BUSY_TIMEOUT_MS = 50;

/**
 * Most writes committed in one transaction. Past a few dozen a bigger batch saves little, and one
 * batch is one stretch of the event loop spent in SQLite. (The package does not export it.)
 */
export const MAX_BATCH_WRITES = 128;

/**
 * How many tasks' last saved ids {@link SqliteRunStore} remembers: more than run at once, so the
 * final snapshot of a running task still finds the ids its first one was saved with.
 */
const SAVED_IDS_KEPT = 4096;

/** Saves a task row whatever it held before; answers its row id. */
const UPSERT_TASK = `
  INSERT INTO task_records (tenant, principal_id, task_id, state, run_id, session_id, trace_id, agent_name, created_at, updated_at, task)
  VALUES (@tenant, @principal_id, @task_id, @state, @run_id, @session_id, @trace_id, @agent_name, @created_at, @updated_at, @task)
  ON CONFLICT (tenant, principal_id, task_id) DO UPDATE SET
    state = excluded.state, run_id = excluded.run_id, session_id = excluded.session_id,
    trace_id = excluded.trace_id, agent_name = excluded.agent_name, created_at = excluded.created_at,
    updated_at = excluded.updated_at, task = excluded.task
  RETURNING row_id`;

/** Inserts a task row, or updates one whose ids are unchanged; answers its row id, no row otherwise. */
const SAVE_TASK_IF_SAME_IDS = `
  INSERT INTO task_records (tenant, principal_id, task_id, state, run_id, session_id, trace_id, agent_name, created_at, updated_at, task)
  VALUES (@tenant, @principal_id, @task_id, @state, @run_id, @session_id, @trace_id, @agent_name, @created_at, @updated_at, @task)
  ON CONFLICT (tenant, principal_id, task_id) DO UPDATE SET
    state = excluded.state, updated_at = excluded.updated_at, task = excluded.task
  WHERE run_id IS excluded.run_id AND session_id IS excluded.session_id AND trace_id IS excluded.trace_id
    AND agent_name IS excluded.agent_name AND created_at = excluded.created_at
  RETURNING row_id`;

/** What queued writes are said to touch, so that a read flushes them only when it could see them. */
const ANY_TASK = 'tasks';
const ANY_REPORT = 'reports';
const EVERYTHING = '*';
const taskKey = (owner: TaskOwner, taskId: string): string =>
  `t\u0000${owner.tenant}\u0000${owner.principal_id}\u0000${taskId}`;
const reportKey = (runId: string): string => `r\u0000${runId}`;

/** How often the background checkpointer looks at the log, and the log size that starts it. */
const BACKGROUND_CHECKPOINT_INTERVAL_MS = 20;
const BACKGROUND_CHECKPOINT_START_BYTES = 4 * 1024 * 1024;
/** The writer's own checkpoint size while the background checkpointer runs (pages; 40 MiB). */
const WAL_CHECKPOINT_PAGES_BESIDE_WORKER = 10_000;

/** Bumped with every schema change; a file written by a newer version is refused. */
export const SQLITE_SCHEMA_VERSION = 4;

export interface SqliteRunStoreOptions extends RunStoreOptions {
  /** Database file path; `:memory:` for a private in-memory database. */
  path: string;
  /**
   * How long a write waits for another process's lock, in milliseconds — a wait that blocks the
   * event loop, better-sqlite3 being synchronous. Default `50`: a longer lock fails the write with
   * UNAVAILABLE at once, which the server pipeline retries without blocking (and answers UNAVAILABLE
   * when the lock outlasts its retries). Opening the file (its migration) waits up to 5 s.
   */
  busyTimeoutMs?: number;
  /** Open without creating or writing the schema (a reader process). Default `false`. */
  readonly?: boolean;
  /**
   * Once the write-ahead log of a file grows past 4 MiB, checkpoint it from a worker thread with a
   * connection of its own (every 20 ms when it changed), instead of in the commit that crosses the
   * log's limit, on the event loop. Default `true`; ignored for `:memory:` and `readonly`.
   */
  backgroundCheckpoints?: boolean;
}

const OPTION_NAMES = optionNames<SqliteRunStoreOptions>({
  path: true,
  busyTimeoutMs: true,
  readonly: true,
  backgroundCheckpoints: true,
  redactionPolicy: true,
  taskRetentionMs: true,
  now: true,
});

/** The columns after the key, the same in every schema so far. */
const TASK_COLUMNS = `
  state TEXT NOT NULL,
  run_id TEXT,
  session_id TEXT,
  trace_id TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  task TEXT NOT NULL`;

const TASK_INDEXES = `
CREATE INDEX task_records_state ON task_records (state);
CREATE INDEX task_records_run_id ON task_records (run_id);
CREATE INDEX task_records_session_id ON task_records (session_id, updated_at);
CREATE INDEX task_records_trace_id ON task_records (trace_id);
CREATE INDEX task_records_agent_name ON task_records (agent_name);
CREATE INDEX task_records_created_at ON task_records (created_at);
CREATE INDEX task_records_updated_at ON task_records (updated_at);
`;

/**
 * `MIGRATIONS[n]` takes a file from schema n to n + 1. A new file runs them all, so the path an
 * old file takes is the path every file takes.
 */
const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE task_records (
  task_id TEXT PRIMARY KEY,${TASK_COLUMNS}
);
${TASK_INDEXES}
CREATE TABLE run_reports (
  run_id     TEXT PRIMARY KEY,
  task_id    TEXT,
  session_id TEXT,
  trace_id   TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  report     TEXT NOT NULL
);
CREATE INDEX run_reports_session_id ON run_reports (session_id, created_at);
CREATE INDEX run_reports_trace_id ON run_reports (trace_id);
CREATE INDEX run_reports_agent_name ON run_reports (agent_name);
CREATE INDEX run_reports_task_id ON run_reports (task_id);
CREATE INDEX run_reports_created_at ON run_reports (created_at);
`,
  // SQLite cannot change a primary key in place: rebuild the table, rows going to the default owner.
  `
CREATE TABLE task_records_v2 (
  tenant TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  task_id TEXT NOT NULL,${TASK_COLUMNS},
  PRIMARY KEY (tenant, principal_id, task_id)
);
INSERT INTO task_records_v2
  SELECT '', 'anonymous', task_id, state, run_id, session_id, trace_id, agent_name, created_at, updated_at, task
  FROM task_records;
DROP TABLE task_records;
ALTER TABLE task_records_v2 RENAME TO task_records;
${TASK_INDEXES}
CREATE INDEX task_records_owner_page ON task_records (tenant, principal_id, updated_at DESC, task_id);
CREATE TABLE task_events (
  tenant       TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  task_id      TEXT NOT NULL,
  sequence     INTEGER NOT NULL,
  event        TEXT NOT NULL,
  PRIMARY KEY (tenant, principal_id, task_id, sequence)
) WITHOUT ROWID;
`,
  // Pages written per commit are what a write costs, and a random key costs a page per new entry.
  // Keyed by (owner, task id), each new event landed on a random leaf of its own, and one longer
  // than a quarter page spilled into an overflow page. Now a task has a row id (INTEGER PRIMARY KEY,
  // kept by VACUUM) and its events are keyed by it: new tasks have the highest ids, so their events'
  // rows and keys both go on the last pages, which a commit shares among all its tasks.
  `
CREATE TABLE task_records_v3 (
  row_id INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  task_id TEXT NOT NULL,${TASK_COLUMNS},
  UNIQUE (tenant, principal_id, task_id)
);
INSERT INTO task_records_v3 (tenant, principal_id, task_id, state, run_id, session_id, trace_id, agent_name, created_at, updated_at, task)
  SELECT tenant, principal_id, task_id, state, run_id, session_id, trace_id, agent_name, created_at, updated_at, task
  FROM task_records ORDER BY created_at, tenant, principal_id, task_id;
CREATE TABLE task_events_v3 (
  task_row INTEGER NOT NULL,
  sequence INTEGER NOT NULL,
  event    TEXT NOT NULL
);
INSERT INTO task_events_v3 (task_row, sequence, event)
  SELECT r.row_id, e.sequence, e.event FROM task_events e
  JOIN task_records_v3 r ON r.tenant = e.tenant AND r.principal_id = e.principal_id AND r.task_id = e.task_id
  ORDER BY r.row_id, e.sequence;
DROP TABLE task_events;
DROP TABLE task_records;
ALTER TABLE task_records_v3 RENAME TO task_records;
ALTER TABLE task_events_v3 RENAME TO task_events;
${TASK_INDEXES}
CREATE INDEX task_records_owner_page ON task_records (tenant, principal_id, updated_at DESC, task_id);
CREATE UNIQUE INDEX task_events_key ON task_events (task_row, sequence);
`,
  // Each index a row enters costs a commit at least a page of it. No query reads task records by
  // creation time, and a task or report without a session (most of them) is never looked up by it:
  // those index entries were written for nothing.
  `
DROP INDEX task_records_created_at;
DROP INDEX task_records_session_id;
CREATE INDEX task_records_session_id ON task_records (session_id, updated_at) WHERE session_id IS NOT NULL;
DROP INDEX run_reports_session_id;
CREATE INDEX run_reports_session_id ON run_reports (session_id, created_at) WHERE session_id IS NOT NULL;
`,
];

interface TaskRow {
  tenant: string;
  principal_id: string;
  task_id: string;
  state: string;
  run_id: string | null;
  session_id: string | null;
  trace_id: string | null;
  agent_name: string | null;
  created_at: string;
  updated_at: string;
  task: string;
}

type Param = string | number;

function parseTaskRow(row: TaskRow): TaskRecord {
  return { ...row, task: JSON.parse(row.task) as Task };
}

function where(
  filters: Record<string, Param | undefined>,
  columns: readonly string[],
  extra: { sql: string; params: Param[] }[] = [],
): { sql: string; params: Param[] } {
  const clauses: string[] = [];
  const params: Param[] = [];
  for (const column of columns) {
    const value = filters[column];
    if (value === undefined) continue;
    clauses.push(`${column} = ?`);
    params.push(value);
  }
  for (const clause of extra) {
    if (clause.sql === '') continue;
    clauses.push(clause.sql);
    params.push(...clause.params);
  }
  return { sql: clauses.length === 0 ? '' : `WHERE ${clauses.join(' AND ')}`, params };
}

const OWNER_COLUMNS = ['tenant', 'principal_id'] as const;
const TERMINAL_LIST = TERMINAL_STATES.map((state) => `'${state}'`).join(', ');
const DELETE_EVENTS_OF = (condition: string) => `
  DELETE FROM task_events WHERE task_row IN (SELECT row_id FROM task_records WHERE ${condition})`;

/** A record's columns, as a TaskRecord names them (not the row id, which stays inside the file). */
const RECORD_COLUMNS =
  'tenant, principal_id, task_id, state, run_id, session_id, trace_id, agent_name, created_at, updated_at, task';

/** What a write does once its batch runs, and what it touches (for the reads that must see it). */
interface PreparedWrite<T> {
  keys: readonly string[];
  work: () => T;
}

/** Opens synchronously, by design; every method is still async so backends stay swappable. */
export class SqliteRunStore implements RunStore {
  readonly path: string;
  readonly #db: BetterSqlite3.Database;
  readonly #policy: RedactionPolicy | null;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #upsertTask: BetterSqlite3.Statement;
  readonly #saveTaskIfSameIds: BetterSqlite3.Statement;
  readonly #upsertReport: BetterSqlite3.Statement;
  readonly #getReport: BetterSqlite3.Statement;
  readonly #lastSequence: BetterSqlite3.Statement;
  readonly #insertEvent: BetterSqlite3.Statement;
  readonly #findTaskRow: BetterSqlite3.Statement;
  readonly #taskRowId: BetterSqlite3.Statement;
  readonly #writes: SqliteGroupCommit;
  readonly #checkpointer: WalCheckpointer | undefined;
  /** Statements built from a query's filters, prepared once per distinct SQL text. */
  readonly #statements = new Map<string, BetterSqlite3.Statement>();
  /** The ids the tasks saved last were saved with, by task key: a hint for {@link #saveTask}. */
  readonly #savedIds = new Map<string, string>();
  #closed = false;

  /**
   * @throws UnavailableError when better-sqlite3 is not installed, the file cannot be opened, or a
   * `readonly` open meets an older schema; ValueError for a bad option or a file with a newer schema.
   */
  constructor(options: SqliteRunStoreOptions) {
    checkSqliteOptions('SqliteRunStore', options, OPTION_NAMES);
    if (options.backgroundCheckpoints !== undefined && typeof options.backgroundCheckpoints !== 'boolean')
      throw new ValueError('backgroundCheckpoints must be a boolean', {
        data: { field: 'backgroundCheckpoints' },
      });
    this.#retentionMs = retentionOf(options.taskRetentionMs, Infinity);
    this.#now = clockOf(options.now, 'SqliteRunStore');
    this.path = options.path;
    this.#policy =
      options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
    this.#db = openSqlite({
      feature: 'SqliteRunStore',
      path: options.path,
      busyTimeoutMs: DEFAULT_BUSY_TIMEOUT_MS,
      readonly: options.readonly === true,
    });
    try {
      this.#migrate(options.readonly === true);
      this.#db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? WRITE_BUSY_TIMEOUT_MS}`);
      // Both answer the row id: see #saveTask.
      this.#upsertTask = this.#db.prepare(UPSERT_TASK).pluck();
      this.#saveTaskIfSameIds = this.#db.prepare(SAVE_TASK_IF_SAME_IDS).pluck();
      this.#upsertReport = this.#db.prepare(`
        INSERT INTO run_reports (run_id, task_id, session_id, trace_id, agent_name, created_at, report)
        VALUES (@run_id, @task_id, @session_id, @trace_id, @agent_name, @created_at, @report)
        ON CONFLICT (run_id) DO UPDATE SET
          task_id = excluded.task_id, session_id = excluded.session_id, trace_id = excluded.trace_id,
          agent_name = excluded.agent_name, created_at = excluded.created_at, report = excluded.report`);
      this.#getReport = this.#db.prepare('SELECT report FROM run_reports WHERE run_id = ?');
      this.#lastSequence = this.#db
        .prepare('SELECT COALESCE(MAX(sequence), 0) FROM task_events WHERE task_row = ?')
        .pluck();
      this.#insertEvent = this.#db.prepare(
        'INSERT INTO task_events (task_row, sequence, event) VALUES (?, ?, ?)',
      );
      const live = this.#live();
      const ofTask = `FROM task_records WHERE tenant = ? AND principal_id = ? AND task_id = ?${live.sql === '' ? '' : ` AND ${live.sql}`}`;
      this.#findTaskRow = this.#db.prepare(`SELECT ${RECORD_COLUMNS} ${ofTask}`);
      this.#taskRowId = this.#db.prepare(`SELECT row_id ${ofTask}`).pluck();
      this.#checkpointer = this.#checkpointerFor(options);
      const checkpointer = this.#checkpointer;
      this.#writes = new SqliteGroupCommit(this.#db, {
        maxWrites: MAX_BATCH_WRITES,
        beforeWrites: () => this.#sweep(),
        afterCommit: checkpointer && (() => checkpointer.noteCommit()),
      });
    } catch (error) {
      this.#db.close();
      throw sqliteError(error, `SqliteRunStore cannot use ${options.path}`);
    }
  }

  /**
   * The worker that checkpoints a busy file, started once its log passes 4 MiB. While it runs, the
   * writer's own checkpoint waits for a larger log: it is then the fallback, and what restarts the log.
   */
  #checkpointerFor(options: SqliteRunStoreOptions): WalCheckpointer | undefined {
    if (options.backgroundCheckpoints === false || options.readonly === true) return undefined;
    if (options.path === ':memory:' || options.path.startsWith('file:')) return undefined;
    return new WalCheckpointer({
      path: options.path,
      intervalMs: BACKGROUND_CHECKPOINT_INTERVAL_MS,
      startAtBytes: BACKGROUND_CHECKPOINT_START_BYTES,
      onRunning: (running) => {
        if (this.#closed) return;
        try {
          this.#db.pragma(
            `wal_autocheckpoint = ${running ? WAL_CHECKPOINT_PAGES_BESIDE_WORKER : WAL_CHECKPOINT_PAGES}`,
          );
        } catch {
          // Left as it was: the writer checkpoints either way, only at another size.
        }
      },
    });
  }

  #migrate(readonly: boolean): void {
    const version = this.#version();
    if (readonly) {
      // A reader cannot upgrade the file, and the queries of this version need the new tables.
      if (version > 0 && version < SQLITE_SCHEMA_VERSION)
        throw new UnavailableError(
          `${this.path} has run store schema ${version}; this library needs ${SQLITE_SCHEMA_VERSION}. ` +
            'Open it once without readonly to upgrade it.',
          { data: { path: this.path, schemaVersion: version } },
        );
      return;
    }
    useWriteAheadLog(this.#db);
    if (version === SQLITE_SCHEMA_VERSION) return;
    // IMMEDIATE takes the write lock before reading the version again, so of two processes opening
    // the same new file, the second waits and then finds the schema in place.
    this.#db
      .transaction(() => {
        const current = this.#version();
        for (let step = current; step < SQLITE_SCHEMA_VERSION; step += 1) this.#db.exec(MIGRATIONS[step]!);
        this.#db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
      })
      .immediate();
  }

  #version(): number {
    const version = this.#db.pragma('user_version', { simple: true }) as number;
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new ValueError(
        `${this.path} has run store schema ${version}; this library reads up to ${SQLITE_SCHEMA_VERSION}`,
        { data: { path: this.path, schemaVersion: version } },
      );
    }
    return version;
  }

  #open(): void {
    if (this.#closed) throw new UnavailableError('The run store is closed');
  }

  #prepare(sql: string): BetterSqlite3.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** The journal mode in effect (`wal` for a file database). */
  get journalMode(): string {
    this.#open();
    return String(this.#db.pragma('journal_mode', { simple: true }));
  }

  /** The retention cutoff, or null without `taskRetentionMs`. */
  #cutoff(): string | null {
    return this.#retentionMs === Infinity ? null : new Date(this.#now() - this.#retentionMs).toISOString();
  }

  /** Hides expired finished records that no write has deleted yet, so reads agree with the TTL. */
  #live(prefix = ''): { sql: string; params: Param[] } {
    const cutoff = this.#cutoff();
    if (cutoff === null) return { sql: '', params: [] };
    return {
      sql: `NOT (${prefix}state IN (${TERMINAL_LIST}) AND ${prefix}updated_at < ?)`,
      params: [cutoff],
    };
  }

  /**
   * Deletes expired finished records and their events; runs first in each write batch's transaction
   * (reads hide them meanwhile, so once a batch is as good as once a write).
   */
  #sweep(): void {
    const cutoff = this.#cutoff();
    if (cutoff === null) return;
    const expired = `state IN (${TERMINAL_LIST}) AND updated_at < ?`;
    this.#prepare(DELETE_EVENTS_OF(expired)).run(cutoff);
    this.#prepare(`DELETE FROM task_records WHERE ${expired}`).run(cutoff);
  }

  #findTask(owner: TaskOwner, taskId: string): TaskRow | undefined {
    return this.#byTask(this.#findTaskRow, owner, taskId) as TaskRow | undefined;
  }

  /** Runs a statement of {@link #findTaskRow}'s shape: one owner's task, unless expired. */
  #byTask(statement: BetterSqlite3.Statement, owner: TaskOwner, taskId: string): unknown {
    const cutoff = this.#cutoff();
    return cutoff === null
      ? statement.get(owner.tenant, owner.principal_id, taskId)
      : statement.get(owner.tenant, owner.principal_id, taskId, cutoff);
  }

  /**
   * Saving a task again mostly changes its state, `updated_at` and text. SQLite rewrites the entry
   * of every index whose column is SET, changed or not, and a run's ids are random keys (a page of
   * the file each): the first statement inserts a new task, or updates those three columns of one
   * whose ids are unchanged; only a task whose ids changed takes the second, full upsert.
   *
   * A run's first snapshot is most often saved before its run context exists, so its final one
   * changes the ids: when this store saved the task last with other ids, the first statement
   * would only find that out (~4 µs), and the full upsert goes first. The hint is only ever a
   * choice between two correct paths: the full upsert is right whatever the row holds, and the
   * first statement still checks the ids itself (another process may have saved the task since).
   *
   * Answers the row id (`RETURNING`): the key of the task's events, so a write that appends events
   * after its snapshot needs no query of its own to find it.
   */
  #saveTask(params: TaskRow): number {
    const key = taskKey(params, params.task_id);
    const ids = `${params.run_id}\u0000${params.session_id}\u0000${params.trace_id}\u0000${params.agent_name}\u0000${params.created_at}`;
    const saved = this.#savedIds.get(key);
    // A conflict the narrower statement's WHERE refuses returns no row: the full upsert then runs.
    const row =
      saved !== undefined && saved !== ids
        ? (this.#upsertTask.get(params) as number)
        : ((this.#saveTaskIfSameIds.get(params) as number | undefined) ??
          (this.#upsertTask.get(params) as number));
    this.#savedIds.delete(key);
    this.#savedIds.set(key, ids);
    if (this.#savedIds.size > SAVED_IDS_KEPT) this.#savedIds.delete(this.#savedIds.keys().next().value!);
    return row;
  }

  /**
   * Checks and encodes a write now, in its caller's call, so bad input rejects that caller alone,
   * and queues its statements for the next batch. Resolves once that batch has committed.
   */
  async #write<T>(context: string, prepare: () => PreparedWrite<T>): Promise<T> {
    this.#open();
    let write: PreparedWrite<T>;
    try {
      write = prepare();
    } catch (error) {
      throw sqliteError(error, context);
    }
    return this.#writes.enqueue(context, write.keys, write.work);
  }

  /** A read sees every write made before it: the queued ones it could see are committed first. */
  #commitBefore(key: string): void {
    if (this.#writes.touches(key) || this.#writes.touches(EVERYTHING)) this.#writes.flush();
  }

  saveTaskSnapshot(task: Task, options: SaveTaskSnapshotOptions = {}): Promise<void> {
    return this.#write('SqliteRunStore.saveTaskSnapshot', () => {
      const row = taskRowOf(task, options, this.#policy, this.#now);
      const params = { ...row.columns, task: row.task };
      return {
        keys: [taskKey(row.columns, row.columns.task_id), ANY_TASK],
        work: () => void this.#saveTask(params),
      };
    });
  }

  saveRunReport(report: RunReport): Promise<void> {
    return this.#write('SqliteRunStore.saveRunReport', () => {
      const row = reportTextRowOf(report, this.#policy);
      const params = { ...row.columns, report: row.report };
      return {
        keys: [reportKey(row.columns.run_id), ANY_REPORT],
        work: () => {
          this.#upsertReport.run(params);
        },
      };
    });
  }

  async getTaskRecord(taskId: string, owner?: TaskOwner): Promise<TaskRecord | null> {
    this.#open();
    try {
      const who = ownerOf(owner);
      const id = checkId(taskId, 'taskId');
      this.#commitBefore(taskKey(who, id));
      const row = this.#findTask(who, id);
      return row ? parseTaskRow(row) : null;
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.getTaskRecord');
    }
  }

  async listTaskRecords(query?: TaskRecordQuery): Promise<TaskRecord[]> {
    this.#open();
    try {
      const { owner, ...q } = taskQueryOf(query);
      this.#commitBefore(ANY_TASK);
      const filter = where(
        { ...owner, ...q },
        [...OWNER_COLUMNS, 'session_id', 'state', 'run_id', 'trace_id', 'agent_name'],
        [this.#live()],
      );
      const rows = this.#prepare(
        `SELECT ${RECORD_COLUMNS} FROM task_records ${filter.sql} ORDER BY updated_at DESC, task_id ASC LIMIT ?`,
      ).all(...filter.params, q.limit ?? -1) as TaskRow[];
      return rows.map(parseTaskRow);
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.listTaskRecords');
    }
  }

  async pageTaskRecords(query?: TaskPageQuery): Promise<TaskPage> {
    this.#open();
    try {
      const q = pageQueryOf(query);
      this.#commitBefore(ANY_TASK);
      const after = q.after
        ? {
            sql: '(updated_at < ? OR (updated_at = ? AND task_id > ?))',
            params: [q.after.updated_at, q.after.updated_at, q.after.task_id],
          }
        : { sql: '', params: [] };
      const filter = where(
        { ...q.owner, session_id: q.session_id, state: q.state },
        [...OWNER_COLUMNS, 'session_id', 'state'],
        [after, this.#live()],
      );
      // One row more than the page tells whether another page exists.
      const rows = this.#prepare(
        `SELECT ${RECORD_COLUMNS} FROM task_records ${filter.sql} ORDER BY updated_at DESC, task_id ASC LIMIT ?`,
      ).all(...filter.params, q.page_size + 1) as TaskRow[];
      const records = rows.slice(0, q.page_size).map(parseTaskRow);
      return {
        records,
        next_page_token: rows.length > q.page_size ? pageTokenOf(q, records[records.length - 1]!) : '',
      };
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.pageTaskRecords');
    }
  }

  appendTaskEvents(owner: TaskOwner, taskId: string, events: TaskEvent[]): Promise<number[]> {
    return this.#write('SqliteRunStore.appendTaskEvents', () => {
      const who = ownerOf(owner);
      checkId(taskId, 'taskId');
      const texts = eventTextsOf(taskId, events, this.#policy);
      return {
        keys: [taskKey(who, taskId)],
        work: () => this.#insertEvents(this.#taskRowOf(who, taskId), texts),
      };
    });
  }

  /**
   * Every write in one queued write: they commit together or not at all (a batch whose write fails
   * runs again with a savepoint per write). A task row keeps its row id when saved again, so the
   * events after a snapshot look it up once.
   */
  writeTask(owner: TaskOwner, taskId: string, writes: readonly TaskWrite[]): Promise<void> {
    return this.#write('SqliteRunStore.writeTask', () => {
      const who = ownerOf(owner);
      checkId(taskId, 'taskId');
      const rows = taskWriteRowsOf(who, taskId, writes, this.#policy, this.#now);
      const keys = [taskKey(who, taskId)];
      if (rows.some((write) => 'row' in write)) keys.push(ANY_TASK);
      return {
        keys,
        work: () => {
          let taskRow: number | undefined;
          for (const write of rows) {
            if ('row' in write) {
              taskRow = this.#saveTask({ ...write.row.columns, task: write.row.task });
              continue;
            }
            taskRow ??= this.#taskRowOf(who, taskId);
            this.#insertEvents(taskRow, write.texts);
          }
        },
      };
    });
  }

  /** The row id of the owner's (live) record of the task, the key of its events. @throws TaskNotFoundError */
  #taskRowOf(owner: TaskOwner, taskId: string): number {
    const row = this.#byTask(this.#taskRowId, owner, taskId) as number | undefined;
    if (row === undefined) throw taskNotFound(taskId);
    return row;
  }

  /**
   * Numbers the events after the log's last one. Only inside a batch: its transaction holds the
   * write lock (IMMEDIATE), so no two writers, in this process or another, take the same sequence.
   */
  #insertEvents(taskRow: number, texts: readonly string[]): number[] {
    const last = this.#lastSequence.get(taskRow) as number;
    return texts.map((text, index) => {
      const sequence = last + index + 1;
      this.#insertEvent.run(taskRow, sequence, text);
      return sequence;
    });
  }

  finishInterruptedTasks(error: AgentError): Promise<TaskRecord[]> {
    return this.#write('SqliteRunStore.finishInterruptedTasks', () => {
      if (!(error instanceof AgentError)) throw new ValueError('finishInterruptedTasks needs an AgentError');
      return { keys: [EVERYTHING], work: () => this.#finishInterrupted(error) };
    });
  }

  /**
   * One write, so one transaction under the write lock: no other writer sees a task half finished,
   * and a second process doing the same at once finds nothing left to finish.
   */
  #finishInterrupted(error: AgentError): TaskRecord[] {
    const rows = this.#prepare(
      `SELECT row_id, ${RECORD_COLUMNS} FROM task_records WHERE state IN ('submitted', 'working')
         ORDER BY updated_at ASC, task_id ASC`,
    ).all() as (TaskRow & { row_id: number })[];
    return rows.map(({ row_id, ...row }) => {
      const record = parseTaskRow(row);
      const owner = { tenant: record.tenant, principal_id: record.principal_id };
      const [errorEvent, finalEvent] = failedEnding(record.task, error);
      this.#insertEvents(row_id, eventTextsOf(record.task_id, [errorEvent, finalEvent], this.#policy));
      const snapshot = taskRowOf(finalEvent.task!, { owner }, this.#policy, this.#now);
      this.#saveTask({ ...snapshot.columns, task: snapshot.task });
      return parseTaskRow(this.#findTask(owner, record.task_id)!);
    });
  }

  async listTaskEvents(owner: TaskOwner, taskId: string, query?: TaskEventQuery): Promise<StoredTaskEvent[]> {
    this.#open();
    try {
      const who = ownerOf(owner);
      checkId(taskId, 'taskId');
      const q = eventQueryOf(query);
      this.#commitBefore(taskKey(who, taskId));
      const live = this.#live('r.');
      const rows = this.#prepare(
        `SELECT e.sequence, e.event FROM task_records r JOIN task_events e ON e.task_row = r.row_id
           WHERE r.tenant = ? AND r.principal_id = ? AND r.task_id = ? AND e.sequence > ?
           ${live.sql === '' ? '' : `AND ${live.sql}`}
           ORDER BY e.sequence LIMIT ?`,
      ).all(who.tenant, who.principal_id, taskId, q.after, ...live.params, q.limit ?? -1) as {
        sequence: number;
        event: string;
      }[];
      return rows.map((row) => ({ sequence: row.sequence, event: JSON.parse(row.event) as TaskEvent }));
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.listTaskEvents');
    }
  }

  async getRunReport(runId: string): Promise<RunReport | null> {
    this.#open();
    try {
      const id = checkId(runId, 'runId');
      this.#commitBefore(reportKey(id));
      const row = this.#getReport.get(id) as { report: string } | undefined;
      return row ? reportOfStoredText(row.report) : null;
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.getRunReport');
    }
  }

  async listRunReports(query?: RunReportQuery): Promise<RunReport[]> {
    this.#open();
    try {
      const q = reportQueryOf(query);
      this.#commitBefore(ANY_REPORT);
      const filter = where(q as Record<string, Param | undefined>, [
        'session_id',
        'trace_id',
        'agent_name',
        'task_id',
      ]);
      const rows = this.#prepare(
        `SELECT report FROM run_reports ${filter.sql} ORDER BY created_at DESC, run_id ASC LIMIT ?`,
      ).all(...filter.params, q.limit ?? -1) as { report: string }[];
      return rows.map((row) => reportOfStoredText(row.report));
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.listRunReports');
    }
  }

  deleteBefore(isoTimestamp: string): Promise<number> {
    return this.#write('SqliteRunStore.deleteBefore', () => {
      const cutoff = normalizeTimestamp(isoTimestamp, 'deleteBefore timestamp');
      return {
        keys: [EVERYTHING],
        work: () => {
          this.#prepare(DELETE_EVENTS_OF('updated_at < ?')).run(cutoff);
          const tasks = this.#prepare('DELETE FROM task_records WHERE updated_at < ?').run(cutoff).changes;
          const reports = this.#prepare('DELETE FROM run_reports WHERE created_at < ?').run(cutoff).changes;
          return tasks + reports;
        },
      };
    });
  }

  /** Commits (or fails) the writes still queued, then closes the file. */
  close(): void {
    if (this.#closed) return;
    this.#writes.flush();
    this.#closed = true;
    void this.#checkpointer?.close();
    this.#db.close();
  }
}
