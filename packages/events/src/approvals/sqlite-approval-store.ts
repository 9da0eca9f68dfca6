/**
 * An ApprovalStore in a SQLite file on better-sqlite3 (optional peer, loaded on first use). Every
 * process opening the file shares the requests: a run parks in one, a reviewer decides in another.
 * It keeps its own table and its own schema version, so the file can be a SqliteRunStore's.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { UnavailableError, ValueError, type ApprovalRequestData } from '@agent/core';
import { numberOption, optionNames } from '@agent/core/internal';
import { isoAt } from '../registry/entries.js';
import { clockOf } from '../store/records.js';
import type { TaskOwner } from '../store/run-store.js';
import { checkSqliteOptions, openSqlite, sqliteError, migrateComponent } from '../store/sqlite-support.js';
import {
  approvalNotFound,
  approvalQueryOf,
  approvalRecordOf,
  approverOf,
  checkDecidable,
  decidedOf,
  decisionOf,
  newApprovalOf,
  requestIdOf,
  storedApprovalOf,
  withdrawnOf,
  withdrawReasonOf,
  type StoredApproval,
} from './approval-records.js';
import type {
  ApprovalDecisionInput,
  ApprovalQuery,
  ApprovalRecord,
  ApprovalStore,
  CreateApprovalOptions,
} from './approval-store.js';
import { DecisionWaiters } from './decision-waiters.js';

/** Bumped with every change to the approval tables; a file written by a newer version is refused. */
export const APPROVAL_SCHEMA_VERSION = 1;

/** This store's row in `schema_versions` (the table the registry store uses the same way). */
const COMPONENT = 'approvals';

export const DEFAULT_APPROVAL_POLL_INTERVAL_MS = 250;

export interface SqliteApprovalStoreOptions {
  /** Database file path (it may be the file of a SqliteRunStore); `:memory:` for a private in-memory database. */
  path: string;
  /** The clock that stamps records, in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  /** How long a write waits for another connection's lock, in milliseconds. Default `5000`. */
  busyTimeoutMs?: number;
  /**
   * How often `waitForDecision` reads the requests waited on, for decisions made by other
   * connections (other processes), in milliseconds. Default `250`. A decision made through this
   * store wakes its waiters at once.
   */
  pollIntervalMs?: number;
}

const OPTION_NAMES = optionNames<SqliteApprovalStoreOptions>({
  path: true,
  now: true,
  busyTimeoutMs: true,
  pollIntervalMs: true,
});

/**
 * `MIGRATIONS[n]` takes the approval tables from schema n to n + 1. `seq` gives the filing order
 * lists answer in; request ids are unique per owner, as task ids are.
 */
const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE approval_requests (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant       TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  request_id   TEXT NOT NULL,
  task_id      TEXT NOT NULL,
  action       TEXT NOT NULL,
  action_hash  TEXT NOT NULL,
  state        TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  decided_at   TEXT,
  decided_by   TEXT,
  reason       TEXT,
  UNIQUE (tenant, principal_id, request_id)
);
CREATE INDEX approval_requests_owner_seq ON approval_requests (tenant, principal_id, seq);
`,
];

const COLUMNS =
  'request_id, tenant, principal_id, task_id, action, action_hash, state, created_at, decided_at, decided_by, reason';

type Param = string | number;

export class SqliteApprovalStore implements ApprovalStore {
  readonly path: string;
  readonly pollIntervalMs: number;
  readonly #db: BetterSqlite3.Database;
  readonly #now: () => number;
  readonly #insert: BetterSqlite3.Statement;
  readonly #get: BetterSqlite3.Statement;
  readonly #settle: BetterSqlite3.Statement;
  /** List statements, one per combination of filters. */
  readonly #lists = new Map<string, BetterSqlite3.Statement>();
  readonly #waiters = new DecisionWaiters();
  #poll: NodeJS.Timeout | null = null;
  #closed = false;

  /**
   * @throws UnavailableError when better-sqlite3 is not installed or the file cannot be opened or
   * used; ValueError for a bad option or a file whose approval tables are newer than this library.
   */
  constructor(options: SqliteApprovalStoreOptions) {
    const busyTimeoutMs = checkSqliteOptions('SqliteApprovalStore', options, OPTION_NAMES);
    this.#now = clockOf(options.now, 'SqliteApprovalStore');
    this.pollIntervalMs = numberOption(
      'pollIntervalMs',
      options.pollIntervalMs,
      DEFAULT_APPROVAL_POLL_INTERVAL_MS,
      { min: 1, integer: true },
    );
    this.path = options.path;
    this.#db = openSqlite({ feature: 'SqliteApprovalStore', path: options.path, busyTimeoutMs });
    try {
      this.#migrate();
      this.#insert = this.#db.prepare(`
        INSERT INTO approval_requests (${COLUMNS})
        VALUES (@request_id, @tenant, @principal_id, @task_id, @action, @action_hash, @state, @created_at,
                @decided_at, @decided_by, @reason)`);
      this.#get = this.#db.prepare(
        `SELECT ${COLUMNS} FROM approval_requests WHERE tenant = ? AND principal_id = ? AND request_id = ?`,
      );
      // The compare-and-set: only a pending row changes, whoever else writes the file.
      this.#settle = this.#db.prepare(`
        UPDATE approval_requests SET state = @state, decided_at = @decided_at, decided_by = @decided_by, reason = @reason
        WHERE tenant = @tenant AND principal_id = @principal_id AND request_id = @request_id AND state = 'pending'`);
    } catch (error) {
      this.#db.close();
      throw sqliteError(error, `SqliteApprovalStore cannot use ${options.path}`);
    }
  }

  #migrate(): void {
    migrateComponent(this.#db, { name: COMPONENT, migrations: MIGRATIONS, path: this.path });
  }

  /** The journal mode in effect (`wal` for a file database). */
  get journalMode(): string {
    this.#open();
    return String(this.#db.pragma('journal_mode', { simple: true }));
  }

  #open(): void {
    if (this.#closed) throw new UnavailableError('The approval store is closed');
  }

  #row(owner: TaskOwner, requestId: string): StoredApproval | undefined {
    return this.#get.get(owner.tenant, owner.principal_id, requestId) as StoredApproval | undefined;
  }

  /**
   * Reads, checks and writes one request under the write lock (IMMEDIATE), so that of two
   * connections settling it, the second reads what the first wrote.
   */
  #change(
    owner: TaskOwner,
    requestId: string,
    change: (row: StoredApproval | undefined) => StoredApproval | null,
  ): StoredApproval | undefined {
    return this.#db
      .transaction(() => {
        const row = this.#row(owner, requestId);
        const next = change(row);
        if (next === null) return row;
        this.#settle.run(next);
        return next;
      })
      .immediate();
  }

  async createApproval(
    owner: TaskOwner,
    request: ApprovalRequestData,
    options: CreateApprovalOptions,
  ): Promise<ApprovalRecord> {
    try {
      const who = approverOf(owner);
      const approval = newApprovalOf(request, options);
      this.#open();
      const stored = storedApprovalOf(who, approval, isoAt(this.#now()));
      this.#db
        .transaction(() => {
          if (this.#row(who, approval.request_id))
            throw new ValueError(`Approval request ${approval.request_id} exists already`, {
              data: { field: 'request_id' },
            });
          this.#insert.run(stored);
        })
        .immediate();
      return approvalRecordOf(stored);
    } catch (error) {
      throw sqliteError(error, 'SqliteApprovalStore.createApproval');
    }
  }

  async getApproval(owner: TaskOwner, requestId: string): Promise<ApprovalRecord | null> {
    try {
      const who = approverOf(owner);
      const id = requestIdOf(requestId);
      this.#open();
      const row = this.#row(who, id);
      return row ? approvalRecordOf(row) : null;
    } catch (error) {
      throw sqliteError(error, 'SqliteApprovalStore.getApproval');
    }
  }

  async listApprovals(owner: TaskOwner, query?: ApprovalQuery): Promise<ApprovalRecord[]> {
    try {
      const who = approverOf(owner);
      const q = approvalQueryOf(query);
      this.#open();
      const clauses = ['tenant = ?', 'principal_id = ?'];
      const params: Param[] = [who.tenant, who.principal_id];
      if (q.state !== undefined) {
        clauses.push('state = ?');
        params.push(q.state);
      }
      if (q.taskId !== undefined) {
        clauses.push('task_id = ?');
        params.push(q.taskId);
      }
      const sql = `SELECT ${COLUMNS} FROM approval_requests WHERE ${clauses.join(' AND ')} ORDER BY seq LIMIT ?`;
      let statement = this.#lists.get(sql);
      if (!statement) {
        statement = this.#db.prepare(sql);
        this.#lists.set(sql, statement);
      }
      return (statement.all(...params, q.limit) as StoredApproval[]).map(approvalRecordOf);
    } catch (error) {
      throw sqliteError(error, 'SqliteApprovalStore.listApprovals');
    }
  }

  async decideApproval(
    owner: TaskOwner,
    requestId: string,
    decision: ApprovalDecisionInput,
  ): Promise<ApprovalRecord> {
    try {
      const who = approverOf(owner);
      const id = requestIdOf(requestId);
      const checked = decisionOf(decision);
      this.#open();
      const at = isoAt(this.#now());
      const next = this.#change(who, id, (row) => {
        checkDecidable(row, id, checked);
        return decidedOf(row, checked, at);
      })!;
      this.#waiters.settle(next);
      return approvalRecordOf(next);
    } catch (error) {
      throw sqliteError(error, 'SqliteApprovalStore.decideApproval');
    }
  }

  async withdrawApproval(
    owner: TaskOwner,
    requestId: string,
    reason?: string,
  ): Promise<ApprovalRecord | null> {
    try {
      const who = approverOf(owner);
      const id = requestIdOf(requestId);
      const why = withdrawReasonOf(reason);
      this.#open();
      const at = isoAt(this.#now());
      const now = this.#change(who, id, (row) =>
        row && row.state === 'pending' ? withdrawnOf(row, why, at) : null,
      );
      if (!now) return null;
      this.#waiters.settle(now);
      return approvalRecordOf(now);
    } catch (error) {
      throw sqliteError(error, 'SqliteApprovalStore.withdrawApproval');
    }
  }

  async waitForDecision(owner: TaskOwner, requestId: string, signal?: AbortSignal): Promise<ApprovalRecord> {
    let row: StoredApproval | undefined;
    let who: TaskOwner;
    let id: string;
    try {
      who = approverOf(owner);
      id = requestIdOf(requestId);
      this.#open();
      if (signal?.aborted) throw signal.reason;
      row = this.#row(who, id);
    } catch (error) {
      throw signal?.aborted && error === signal.reason
        ? error
        : sqliteError(error, 'SqliteApprovalStore.waitForDecision');
    }
    if (!row) throw approvalNotFound(id);
    if (row.state !== 'pending') return approvalRecordOf(row);
    const waiting = this.#waiters.wait(who, id, signal);
    this.#startPolling();
    return waiting;
  }

  /** One timer for every request waited on; it stops when nobody waits, and never holds the process open. */
  #startPolling(): void {
    if (this.#poll !== null) return;
    this.#poll = setInterval(() => this.#pollOnce(), this.pollIntervalMs);
    this.#poll.unref();
  }

  #pollOnce(): void {
    if (this.#closed || this.#waiters.size === 0) {
      if (this.#poll !== null) clearInterval(this.#poll);
      this.#poll = null;
      return;
    }
    for (const waited of this.#waiters.requests()) {
      let row: StoredApproval | undefined;
      try {
        row = this.#row(waited.owner, waited.requestId);
      } catch {
        // A busy or briefly unreadable file: the next tick reads again.
        continue;
      }
      if (row && row.state !== 'pending') this.#waiters.settle(row);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#poll !== null) clearInterval(this.#poll);
    this.#poll = null;
    this.#waiters.rejectAll(new UnavailableError('The approval store is closed'));
    this.#db.close();
  }
}
