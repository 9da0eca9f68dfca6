/**
 * A RunStore in one SQLite file on better-sqlite3 (optional peer, loaded on first use). WAL mode,
 * so readers in other processes see committed writes while one process writes.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { AgentError, UnavailableError, ValueError, type Task } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { requireOptionalPeer } from '../optional-peer.js';
import { RedactionPolicy } from '../redaction.js';
import { RunReport } from '../run-report.js';
import type { RunStoreOptions } from './in-memory-run-store.js';
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
  RunStore,
  SaveTaskSnapshotOptions,
  TaskRecord,
  TaskRecordQuery,
} from './run-store.js';

/** Bumped with every schema change; a file written by a newer version is refused. */
export const SQLITE_SCHEMA_VERSION = 1;

export interface SqliteRunStoreOptions extends RunStoreOptions {
  /** Database file path; `:memory:` for a private in-memory database. */
  path: string;
  /** How long a write waits for another process's lock, in milliseconds. Default `5000`. */
  busyTimeoutMs?: number;
  /** Open without creating or writing the schema (a reader process). Default `false`. */
  readonly?: boolean;
}

const OPTION_NAMES = optionNames<SqliteRunStoreOptions>({
  path: true,
  busyTimeoutMs: true,
  readonly: true,
  redactionPolicy: true,
});

const SCHEMA = `
CREATE TABLE IF NOT EXISTS task_records (
  task_id    TEXT PRIMARY KEY,
  state      TEXT NOT NULL,
  run_id     TEXT,
  session_id TEXT,
  trace_id   TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  task       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS task_records_state ON task_records (state);
CREATE INDEX IF NOT EXISTS task_records_run_id ON task_records (run_id);
CREATE INDEX IF NOT EXISTS task_records_session_id ON task_records (session_id, updated_at);
CREATE INDEX IF NOT EXISTS task_records_trace_id ON task_records (trace_id);
CREATE INDEX IF NOT EXISTS task_records_agent_name ON task_records (agent_name);
CREATE INDEX IF NOT EXISTS task_records_created_at ON task_records (created_at);
CREATE INDEX IF NOT EXISTS task_records_updated_at ON task_records (updated_at);
CREATE TABLE IF NOT EXISTS run_reports (
  run_id     TEXT PRIMARY KEY,
  task_id    TEXT,
  session_id TEXT,
  trace_id   TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  report     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_reports_session_id ON run_reports (session_id, created_at);
CREATE INDEX IF NOT EXISTS run_reports_trace_id ON run_reports (trace_id);
CREATE INDEX IF NOT EXISTS run_reports_agent_name ON run_reports (agent_name);
CREATE INDEX IF NOT EXISTS run_reports_task_id ON run_reports (task_id);
CREATE INDEX IF NOT EXISTS run_reports_created_at ON run_reports (created_at);
`;

interface TaskRow {
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

type DatabaseConstructor = new (path: string, options?: BetterSqlite3.Options) => BetterSqlite3.Database;

function parseTaskRow(row: TaskRow): TaskRecord {
  return { ...row, task: JSON.parse(row.task) as Task };
}

function where(
  filters: Record<string, string | number | undefined>,
  columns: readonly string[],
): { sql: string; params: (string | number)[] } {
  const clauses: string[] = [];
  const params: (string | number)[] = [];
  for (const column of columns) {
    const value = filters[column];
    if (value === undefined) continue;
    clauses.push(`${column} = ?`);
    params.push(value);
  }
  return { sql: clauses.length === 0 ? '' : `WHERE ${clauses.join(' AND ')}`, params };
}

/**
 * SQLite failures (a locked or read-only file, a missing table in a read-only open, a full disk)
 * become typed errors; our own errors pass through.
 */
function sqliteError(error: unknown, context: string): AgentError {
  if (error instanceof AgentError) return error;
  const code = (error as { code?: unknown }).code;
  return new UnavailableError(`${context}: ${(error as Error).message}`, {
    cause: error,
    data: typeof code === 'string' ? { sqlite_code: code } : undefined,
  });
}

/** Opens synchronously, by design; every method is still async so backends stay swappable. */
export class SqliteRunStore implements RunStore {
  readonly path: string;
  readonly #db: BetterSqlite3.Database;
  readonly #policy: RedactionPolicy | null;
  readonly #upsertTask: BetterSqlite3.Statement;
  readonly #upsertReport: BetterSqlite3.Statement;
  readonly #getTask: BetterSqlite3.Statement;
  readonly #getReport: BetterSqlite3.Statement;
  #closed = false;

  /**
   * @throws UnavailableError when better-sqlite3 is not installed; ValueError for a bad path or a
   * file with a newer schema.
   */
  constructor(options: SqliteRunStoreOptions) {
    if (!options || typeof options.path !== 'string' || options.path === '') {
      throw new ValueError('SqliteRunStore needs a `path` (a file path or ":memory:")', {
        data: { field: 'path' },
      });
    }
    checkOptionNames('SqliteRunStore', options, OPTION_NAMES);
    const busy = options.busyTimeoutMs ?? 5000;
    if (!Number.isInteger(busy) || busy < 0)
      throw new ValueError('busyTimeoutMs must be a non-negative integer', {
        data: { field: 'busyTimeoutMs' },
      });
    const Database = requireOptionalPeer<DatabaseConstructor>('better-sqlite3', 'SqliteRunStore', '^12');
    this.path = options.path;
    this.#policy =
      options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
    try {
      this.#db = new Database(options.path, {
        readonly: options.readonly === true,
        timeout: busy,
        fileMustExist: options.readonly === true,
      });
    } catch (error) {
      throw new UnavailableError(`SqliteRunStore cannot open ${options.path}: ${(error as Error).message}`, {
        cause: error,
        data: { path: options.path },
      });
    }
    try {
      this.#migrate(options.readonly === true);
      this.#upsertTask = this.#db.prepare(`
        INSERT INTO task_records (task_id, state, run_id, session_id, trace_id, agent_name, created_at, updated_at, task)
        VALUES (@task_id, @state, @run_id, @session_id, @trace_id, @agent_name, @created_at, @updated_at, @task)
        ON CONFLICT (task_id) DO UPDATE SET
          state = excluded.state, run_id = excluded.run_id, session_id = excluded.session_id,
          trace_id = excluded.trace_id, agent_name = excluded.agent_name, created_at = excluded.created_at,
          updated_at = excluded.updated_at, task = excluded.task`);
      this.#upsertReport = this.#db.prepare(`
        INSERT INTO run_reports (run_id, task_id, session_id, trace_id, agent_name, created_at, report)
        VALUES (@run_id, @task_id, @session_id, @trace_id, @agent_name, @created_at, @report)
        ON CONFLICT (run_id) DO UPDATE SET
          task_id = excluded.task_id, session_id = excluded.session_id, trace_id = excluded.trace_id,
          agent_name = excluded.agent_name, created_at = excluded.created_at, report = excluded.report`);
      this.#getTask = this.#db.prepare('SELECT * FROM task_records WHERE task_id = ?');
      this.#getReport = this.#db.prepare('SELECT report FROM run_reports WHERE run_id = ?');
    } catch (error) {
      this.#db.close();
      throw sqliteError(error, `SqliteRunStore cannot use ${options.path}`);
    }
  }

  #migrate(readonly: boolean): void {
    const version = this.#db.pragma('user_version', { simple: true }) as number;
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new ValueError(
        `${this.path} has run store schema ${version}; this library reads up to ${SQLITE_SCHEMA_VERSION}`,
        {
          data: { path: this.path, schemaVersion: version },
        },
      );
    }
    if (readonly) return;
    // WAL lets other processes read while this one writes; NORMAL sync is durable across app crashes.
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = NORMAL');
    if (version < SQLITE_SCHEMA_VERSION) {
      this.#db.transaction(() => {
        this.#db.exec(SCHEMA);
        this.#db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
      })();
    }
  }

  #open(): void {
    if (this.#closed) throw new UnavailableError('The run store is closed');
  }

  /** The journal mode in effect (`wal` for a file database). */
  get journalMode(): string {
    this.#open();
    return String(this.#db.pragma('journal_mode', { simple: true }));
  }

  async saveTaskSnapshot(task: Task, options: SaveTaskSnapshotOptions = {}): Promise<void> {
    this.#open();
    try {
      const record = taskRecordOf(task, options, this.#policy);
      this.#upsertTask.run({ ...record, task: JSON.stringify(record.task) });
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.saveTaskSnapshot');
    }
  }

  async saveRunReport(report: RunReport): Promise<void> {
    this.#open();
    try {
      const row = reportRowOf(report, this.#policy);
      this.#upsertReport.run({ ...row, report: JSON.stringify(row.report) });
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.saveRunReport');
    }
  }

  async getTaskRecord(taskId: string): Promise<TaskRecord | null> {
    this.#open();
    try {
      const row = this.#getTask.get(checkId(taskId, 'taskId')) as TaskRow | undefined;
      return row ? parseTaskRow(row) : null;
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.getTaskRecord');
    }
  }

  async listTaskRecords(query?: TaskRecordQuery): Promise<TaskRecord[]> {
    this.#open();
    try {
      const q = taskQueryOf(query);
      const filter = where(q as Record<string, string | number | undefined>, [
        'session_id',
        'state',
        'run_id',
        'trace_id',
        'agent_name',
      ]);
      const limit = q.limit === undefined ? '' : ' LIMIT ?';
      const params = q.limit === undefined ? filter.params : [...filter.params, q.limit];
      const rows = this.#db
        .prepare(`SELECT * FROM task_records ${filter.sql} ORDER BY updated_at DESC, task_id ASC${limit}`)
        .all(...params) as TaskRow[];
      return rows.map(parseTaskRow);
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.listTaskRecords');
    }
  }

  async getRunReport(runId: string): Promise<RunReport | null> {
    this.#open();
    try {
      const row = this.#getReport.get(checkId(runId, 'runId')) as { report: string } | undefined;
      return row ? RunReport.fromDict(JSON.parse(row.report)) : null;
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.getRunReport');
    }
  }

  async listRunReports(query?: RunReportQuery): Promise<RunReport[]> {
    this.#open();
    try {
      const q = reportQueryOf(query);
      const filter = where(q as Record<string, string | number | undefined>, [
        'session_id',
        'trace_id',
        'agent_name',
        'task_id',
      ]);
      const limit = q.limit === undefined ? '' : ' LIMIT ?';
      const params = q.limit === undefined ? filter.params : [...filter.params, q.limit];
      const rows = this.#db
        .prepare(`SELECT report FROM run_reports ${filter.sql} ORDER BY created_at DESC, run_id ASC${limit}`)
        .all(...params) as { report: string }[];
      return rows.map((row) => RunReport.fromDict(JSON.parse(row.report)));
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.listRunReports');
    }
  }

  async deleteBefore(isoTimestamp: string): Promise<number> {
    this.#open();
    try {
      const cutoff = normalizeTimestamp(isoTimestamp, 'deleteBefore timestamp');
      return this.#db.transaction(() => {
        const tasks = this.#db.prepare('DELETE FROM task_records WHERE updated_at < ?').run(cutoff).changes;
        const reports = this.#db.prepare('DELETE FROM run_reports WHERE created_at < ?').run(cutoff).changes;
        return tasks + reports;
      })();
    } catch (error) {
      throw sqliteError(error, 'SqliteRunStore.deleteBefore');
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }
}
