/**
 * An ApprovalStore in PostgreSQL: approval requests every replica sees. A run parks on one replica,
 * a reviewer decides on another, exactly once (a compare-and-set on the pending row). A decision
 * wakes the waiters of every replica through a notification on `agent_approvals`; a poll backs it,
 * so a notification lost with a dropped connection only delays a waiter.
 */
import { UnavailableError, ValueError, type ApprovalRequestData } from '@agent/core';
import { checkOptionNames, numberOption, ownerKey } from '@agent/core/internal';
import type {
  ApprovalDecisionInput,
  ApprovalQuery,
  ApprovalRecord,
  ApprovalStore,
  CreateApprovalOptions,
  TaskOwner,
} from '@agent/events';
import { NotificationListener } from '../coordination/notification-listener.js';
import type { PostgresDatabase } from '../database.js';
import { postgresError } from '../errors.js';
import {
  approvalNotFound,
  approvalQueryOf,
  approvalRecordOf,
  approverOf,
  checkDecidable,
  clockOf,
  decisionOf,
  DecisionWaiters,
  isoAt,
  newApprovalOf,
  requestIdOf,
  storedApprovalOf,
  withdrawReasonOf,
  type StoredApproval,
  type WaitedRequest,
} from '@agent/events/internal';
import { SqlFilter } from '../sql-filter.js';
import { CONNECTION_OPTION_NAMES, databaseOf, type PostgresConnectionOptions } from '../store-database.js';

/** The channel a decision or withdrawal notifies at commit: `{"request_id","tenant","principal_id"}`. */
export const APPROVALS_CHANNEL = 'agent_approvals';

export const DEFAULT_APPROVAL_POLL_INTERVAL_MS = 1000;

export interface PostgresApprovalStoreOptions extends PostgresConnectionOptions {
  /** The clock that stamps records, in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  /**
   * How often `waitForDecision` rereads the requests waited on, in milliseconds, in case a
   * notification was lost (a dropped connection). Default `1000`. A decision normally wakes its
   * waiters at once, on every replica, through the notification.
   */
  pollIntervalMs?: number;
}

const OPTION_NAMES = [...CONNECTION_OPTION_NAMES, 'now', 'pollIntervalMs'];

const COLUMNS =
  'request_id, tenant, principal_id, task_id, action, action_hash, state, created_at, decided_at, decided_by, reason';

const OWNED = 'tenant = $1 AND principal_id = $2 AND request_id = $3';

/** Wraps a write that settles a row: its notification is sent at commit, with the row's key. */
function settleAndNotify(update: string): string {
  return `WITH settled AS (${update} RETURNING ${COLUMNS})
    SELECT ${COLUMNS}, pg_notify('${APPROVALS_CHANNEL}',
      json_build_object('request_id', request_id, 'tenant', tenant, 'principal_id', principal_id)::text)
    FROM settled`;
}

const DECIDE = settleAndNotify(`UPDATE agent_approvals
  SET state = $5, decided_at = $6, decided_by = $7, reason = $8
  WHERE ${OWNED} AND state = 'pending' AND action_hash = $4`);

const WITHDRAW = settleAndNotify(`UPDATE agent_approvals
  SET state = 'withdrawn', decided_at = $4, decided_by = NULL, reason = $5
  WHERE ${OWNED} AND state = 'pending'`);

export class PostgresApprovalStore implements ApprovalStore {
  readonly database: PostgresDatabase;
  readonly pollIntervalMs: number;
  readonly #ownsDatabase: boolean;
  readonly #now: () => number;
  readonly #waiters = new DecisionWaiters();
  #listener: NotificationListener | null = null;
  #poll: NodeJS.Timeout | null = null;
  #closed = false;

  /**
   * Opens no connection: the first call does (and brings the schema up to date).
   * @throws ValueError for an unknown or bad option.
   */
  constructor(options: PostgresApprovalStoreOptions) {
    checkOptionNames('PostgresApprovalStore', options, OPTION_NAMES);
    this.#now = clockOf(options.now, 'PostgresApprovalStore');
    this.pollIntervalMs = numberOption(
      'pollIntervalMs',
      options.pollIntervalMs,
      DEFAULT_APPROVAL_POLL_INTERVAL_MS,
      {
        min: 1,
        integer: true,
      },
    );
    const { database, owned } = databaseOf(options, 'PostgresApprovalStore');
    this.database = database;
    this.#ownsDatabase = owned;
  }

  #open(): void {
    if (this.#closed || this.database.isClosed) throw new UnavailableError('The approval store is closed');
  }

  #error(error: unknown, operation: string): Error {
    return postgresError(error, `PostgresApprovalStore.${operation}`, this.database.pool);
  }

  async #row(owner: TaskOwner, requestId: string): Promise<StoredApproval | undefined> {
    const { rows } = await this.database.query<StoredApproval>(
      `SELECT ${COLUMNS} FROM agent_approvals WHERE ${OWNED}`,
      [owner.tenant, owner.principal_id, requestId],
    );
    return rows[0];
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
      const inserted = await this.database.query(
        `INSERT INTO agent_approvals (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (tenant, principal_id, request_id) DO NOTHING`,
        [
          stored.request_id,
          stored.tenant,
          stored.principal_id,
          stored.task_id,
          stored.action,
          stored.action_hash,
          stored.state,
          stored.created_at,
          stored.decided_at,
          stored.decided_by,
          stored.reason,
        ],
      );
      if (inserted.rowCount !== 1)
        throw new ValueError(`Approval request ${approval.request_id} exists already`, {
          data: { field: 'request_id' },
        });
      return approvalRecordOf(stored);
    } catch (error) {
      throw this.#error(error, 'createApproval');
    }
  }

  async getApproval(owner: TaskOwner, requestId: string): Promise<ApprovalRecord | null> {
    try {
      const who = approverOf(owner);
      const id = requestIdOf(requestId);
      this.#open();
      const row = await this.#row(who, id);
      return row ? approvalRecordOf(row) : null;
    } catch (error) {
      throw this.#error(error, 'getApproval');
    }
  }

  async listApprovals(owner: TaskOwner, query?: ApprovalQuery): Promise<ApprovalRecord[]> {
    try {
      const who = approverOf(owner);
      const q = approvalQueryOf(query);
      this.#open();
      const filter = new SqlFilter().equal('tenant', who.tenant).equal('principal_id', who.principal_id);
      if (q.state !== undefined) filter.equal('state', q.state);
      if (q.taskId !== undefined) filter.equal('task_id', q.taskId);
      const limit = filter.param(q.limit);
      const { rows } = await this.database.query<StoredApproval>(
        `SELECT ${COLUMNS} FROM agent_approvals ${filter.where()} ORDER BY seq LIMIT ${limit}`,
        filter.params,
      );
      return rows.map(approvalRecordOf);
    } catch (error) {
      throw this.#error(error, 'listApprovals');
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
      const { rows } = await this.database.query<StoredApproval>(DECIDE, [
        who.tenant,
        who.principal_id,
        id,
        checked.action_hash,
        checked.approved ? 'approved' : 'denied',
        isoAt(this.#now()),
        checked.decided_by,
        checked.reason,
      ]);
      const decided = rows[0];
      if (!decided) {
        // The compare-and-set refused: read why, in the order the other backends report it.
        checkDecidable(await this.#row(who, id), id, checked);
        throw approvalNotFound(id);
      }
      this.#waiters.settle(decided);
      return approvalRecordOf(decided);
    } catch (error) {
      throw this.#error(error, 'decideApproval');
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
      const { rows } = await this.database.query<StoredApproval>(WITHDRAW, [
        who.tenant,
        who.principal_id,
        id,
        isoAt(this.#now()),
        why,
      ]);
      const withdrawn = rows[0];
      if (withdrawn) {
        this.#waiters.settle(withdrawn);
        return approvalRecordOf(withdrawn);
      }
      // Not pending any more (or unknown): a decision made meanwhile stands.
      const row = await this.#row(who, id);
      return row ? approvalRecordOf(row) : null;
    } catch (error) {
      throw this.#error(error, 'withdrawApproval');
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
      row = await this.#row(who, id);
      // The store may have closed, or the signal aborted, while the row was read.
      this.#open();
      if (signal?.aborted) throw signal.reason;
    } catch (error) {
      throw signal?.aborted && error === signal.reason ? error : this.#error(error, 'waitForDecision');
    }
    if (!row) throw approvalNotFound(id);
    if (row.state !== 'pending') return approvalRecordOf(row);
    const waiting = this.#waiters.wait(who, id, signal);
    this.#watch();
    // A decision committed between the read above and the wait's registration notified nobody.
    const key = ownerKey(who, id);
    void this.#reread(this.#waiters.requests().filter((w) => ownerKey(w.owner, w.requestId) === key));
    return waiting;
  }

  /** Listens and polls while anyone waits; both stop when nobody does. */
  #watch(): void {
    if (this.#listener === null) {
      this.#listener = new NotificationListener({
        config: this.database.pool.options,
        applicationName: 'agent-tasks approvals',
        channels: [APPROVALS_CHANNEL],
        onNotification: (_channel, payload) => this.#notified(payload),
        // Whatever was announced while the connection was down is lost: read everything waited on.
        onConnect: () => void this.#reread(this.#waiters.requests()),
      });
      void this.#listener.start();
    }
    if (this.#poll === null) {
      this.#poll = setInterval(() => this.#pollOnce(), this.pollIntervalMs);
      this.#poll.unref();
    }
  }

  #notified(payload: string): void {
    let key: string | undefined;
    try {
      const parsed = JSON.parse(payload) as {
        tenant?: unknown;
        principal_id?: unknown;
        request_id?: unknown;
      };
      if (
        typeof parsed.tenant === 'string' &&
        typeof parsed.principal_id === 'string' &&
        typeof parsed.request_id === 'string'
      )
        key = ownerKey({ tenant: parsed.tenant, principal_id: parsed.principal_id }, parsed.request_id);
    } catch {
      // Not ours to understand: read everything waited on instead.
    }
    const waited = this.#waiters.requests();
    void this.#reread(
      key === undefined ? waited : waited.filter((w) => ownerKey(w.owner, w.requestId) === key),
    );
  }

  #pollOnce(): void {
    if (this.#closed || this.#waiters.size === 0) {
      void this.#stopWatching();
      return;
    }
    void this.#reread(this.#waiters.requests());
  }

  async #stopWatching(): Promise<void> {
    if (this.#poll !== null) clearInterval(this.#poll);
    this.#poll = null;
    const listener = this.#listener;
    this.#listener = null;
    await listener?.close();
  }

  /** Reads the requests waited on and settles the decided ones. Never rejects: the next poll retries. */
  async #reread(waited: readonly WaitedRequest[]): Promise<void> {
    if (waited.length === 0 || this.#closed) return;
    try {
      const { rows } = await this.database.query<StoredApproval>(
        `SELECT ${COLUMNS} FROM agent_approvals
         WHERE (tenant, principal_id, request_id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
           AND state <> 'pending'`,
        [
          waited.map((w) => w.owner.tenant),
          waited.map((w) => w.owner.principal_id),
          waited.map((w) => w.requestId),
        ],
      );
      for (const row of rows) this.#waiters.settle(row);
    } catch {
      // The server is unreachable for now: the next poll reads again.
    }
  }

  /** Rejects the waits still open, stops listening, and closes the database when the store opened it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#waiters.rejectAll(new UnavailableError('The approval store is closed'));
    await this.#stopWatching();
    if (this.#ownsDatabase) await this.database.close();
  }
}
