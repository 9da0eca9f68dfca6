import { AlreadyExistsError, ReplicaLostError, UnavailableError, ValueError } from '@agent/core';
import { isRecord, ownerKey } from '@agent/core/internal';
import type { CancelRequest, TaskCoordination, TaskOwner, TaskPlacement, TaskWatch } from '@agent/events';
import type { ClientConfig } from 'pg';
import type { PostgresDatabase } from '../database.js';
import { CancelDelivery } from './cancel-delivery.js';
import { deleteIdleLease, insertLease, renewLease } from './lease.js';
import { sweepLostReplicas } from './lost-replicas.js';
import { NotificationListener } from './notification-listener.js';
import {
  resolveCoordinationOptions,
  type LostReplica,
  type PostgresCoordinationOptions,
  type ResolvedCoordinationOptions,
} from './options.js';
import { Repeater } from './repeater.js';
import { TASK_CANCELS_CHANNEL, TASK_EVENTS_CHANNEL } from './schema.js';
import { TaskWatches } from './task-watches.js';

/**
 * `new`: not started; `running`: holds a live lease; `lost`: its lease ran out (it claims nothing
 * more, and another replica finishes its tasks); `closed`.
 */
export type CoordinationState = 'new' | 'running' | 'lost' | 'closed';

/** The `application_name` of a replica's LISTEN connection, as `pg_stat_activity` shows it. */
export function listenerApplicationName(replicaId: string): string {
  return `agent-coordination ${replicaId}`;
}

/** PostgreSQL's limit is 8000 bytes; a larger payload would fail the request's transaction. */
const MAX_NOTIFY_PAYLOAD_BYTES = 7900;

/**
 * Cross-replica coordination over the shared PostgreSQL database: replica leases kept alive by a
 * timer, task claims, durable cancel requests delivered to the replica that claims the task, task
 * watches woken by NOTIFY and backed by a poll, and a sweep that finishes the tasks of replicas
 * whose lease ran out.
 */
export class PostgresCoordination implements TaskCoordination {
  readonly replicaId: string;
  readonly #db: PostgresDatabase;
  readonly #options: ResolvedCoordinationOptions;
  readonly #watches: TaskWatches;
  readonly #delivery: CancelDelivery;
  readonly #listener: NotificationListener;
  readonly #maintenance: Repeater;
  readonly #cancelPoll: Repeater;
  /** Aborted by close(): a sweep in progress stops between two tasks. */
  readonly #stop = new AbortController();
  /** The tasks this replica claimed and has not released: only their cancel notifications matter here. */
  readonly #claimed = new Set<string>();
  readonly #inFlight = new Set<Promise<void>>();
  #state: CoordinationState = 'new';
  #started: Promise<void> | undefined;
  #closed: Promise<void> | undefined;

  constructor(db: PostgresDatabase, options: PostgresCoordinationOptions = {}) {
    this.#options = resolveCoordinationOptions(options);
    this.#db = db;
    this.replicaId = this.#options.replicaId;
    this.#watches = new TaskWatches(this.#options.pollIntervalMs);
    this.#delivery = new CancelDelivery(db.pool, this.replicaId);
    this.#listener = new NotificationListener({
      // The pool's own connection settings; options only a pool knows are ignored by a Client.
      config: db.pool.options as ClientConfig,
      applicationName: listenerApplicationName(this.replicaId),
      channels: [TASK_EVENTS_CHANNEL, TASK_CANCELS_CHANNEL],
      onNotification: (channel, payload) => this.#onNotification(channel, payload),
      onConnect: () => {
        this.#watches.wakeAll();
        this.#track(this.#delivery.deliverAll());
      },
    });
    this.#maintenance = new Repeater(this.#options.renewEveryMs, () => this.#maintain());
    this.#cancelPoll = new Repeater(this.#options.pollIntervalMs, () => this.#delivery.deliverAll());
  }

  get state(): CoordinationState {
    return this.#state;
  }

  /**
   * Takes this replica's lease (after the schema is current), opens the LISTEN connection and
   * starts renewing, polling and sweeping. Idempotent; after a rejection it may be called again.
   * @throws AlreadyExistsError when another replica holds a lease under the same `replicaId`.
   */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(new UnavailableError('The coordination is closed'));
    // A start that failed (the database was away) may be tried again.
    this.#started ??= this.#start().catch((error: unknown) => {
      this.#started = undefined;
      throw error;
    });
    return this.#started;
  }

  async #start(): Promise<void> {
    await this.#db.ready();
    if (!(await insertLease(this.#db.pool, this.replicaId, this.#options.leaseMs))) {
      throw new AlreadyExistsError(`A replica with id ${this.replicaId} holds a lease already`);
    }
    this.#state = 'running';
    this.#maintenance.start();
    this.#cancelPoll.start();
    await this.#listener.start();
  }

  async claimTask(owner: TaskOwner, taskId: string): Promise<void> {
    checkTask(owner, taskId);
    this.#assertRunning();
    // One statement, so one round trip and atomic by itself: the claim, only under a live lease (a
    // claim must never outlive the lease that tells sweepers about it), and once it is made, the
    // removal of requests left from an earlier run of this task id, which are not for this run.
    const { rows } = await this.#db.query<{ claimed: number }>(
      `WITH claimed AS (
         INSERT INTO agent_task_claims (tenant, principal_id, task_id, replica_id, claimed_at)
         SELECT $1, $2, $3, $4, now()
         WHERE EXISTS (SELECT 1 FROM agent_replicas WHERE replica_id = $4 AND expires_at > now())
         ON CONFLICT (tenant, principal_id, task_id)
         DO UPDATE SET replica_id = EXCLUDED.replica_id, claimed_at = EXCLUDED.claimed_at
         RETURNING 1),
       cleared AS (
         DELETE FROM agent_cancel_requests
         WHERE tenant = $1 AND principal_id = $2 AND task_id = $3 AND EXISTS (SELECT 1 FROM claimed))
       SELECT count(*)::integer AS claimed FROM claimed`,
      [owner.tenant, owner.principal_id, taskId, this.replicaId],
    );
    if (rows[0]?.claimed !== 1) {
      this.#declareLost();
      throw lostError();
    }
    this.#claimed.add(ownerKey(owner, taskId));
  }

  async releaseTask(owner: TaskOwner, taskId: string): Promise<void> {
    checkTask(owner, taskId);
    this.#claimed.delete(ownerKey(owner, taskId));
    // Only this replica's claim: the task may have moved on to another replica since.
    await this.#db.query(
      `WITH released AS (
         DELETE FROM agent_task_claims
         WHERE tenant = $1 AND principal_id = $2 AND task_id = $3 AND replica_id = $4
         RETURNING 1)
       DELETE FROM agent_cancel_requests
       WHERE tenant = $1 AND principal_id = $2 AND task_id = $3 AND EXISTS (SELECT 1 FROM released)`,
      [owner.tenant, owner.principal_id, taskId, this.replicaId],
    );
  }

  async placement(owner: TaskOwner, taskId: string): Promise<TaskPlacement> {
    checkTask(owner, taskId);
    await this.#db.ready();
    const { rows } = await this.#db.pool.query<{ replica_id: string; live: boolean }>(
      `SELECT c.replica_id, r.expires_at > now() AS live
       FROM agent_task_claims c JOIN agent_replicas r ON r.replica_id = c.replica_id
       WHERE c.tenant = $1 AND c.principal_id = $2 AND c.task_id = $3`,
      [owner.tenant, owner.principal_id, taskId],
    );
    const claim = rows[0];
    if (!claim?.live) return 'nowhere';
    return claim.replica_id === this.replicaId ? 'here' : 'elsewhere';
  }

  async requestCancel(request: CancelRequest): Promise<void> {
    checkTask(request.owner, request.task_id);
    if (request.reason !== undefined && typeof request.reason !== 'string') {
      throw new ValueError('A cancel request reason must be a string');
    }
    const { tenant, principal_id } = request.owner;
    const payload = JSON.stringify({ tenant, principal_id, task_id: request.task_id });
    await this.#db.transaction(async (client) => {
      await client.query(
        'INSERT INTO agent_cancel_requests (tenant, principal_id, task_id, reason) VALUES ($1, $2, $3, $4)',
        [tenant, principal_id, request.task_id, request.reason ?? null],
      );
      // Too long to announce: the claiming replica's poll finds it.
      if (Buffer.byteLength(payload) <= MAX_NOTIFY_PAYLOAD_BYTES) {
        await client.query('SELECT pg_notify($1, $2)', [TASK_CANCELS_CHANNEL, payload]);
      }
    });
  }

  onCancelRequest(listener: (request: CancelRequest) => void): () => void {
    if (typeof listener !== 'function') throw new ValueError('onCancelRequest takes a function');
    return this.#delivery.add(listener);
  }

  watchTask(owner: TaskOwner, taskId: string): TaskWatch {
    checkTask(owner, taskId);
    if (this.#closed) throw new UnavailableError('The coordination is closed');
    return this.#watches.open(ownerKey(owner, taskId));
  }

  /**
   * Stops renewing, polling and listening and closes every watch. The lease row goes when this
   * replica claims nothing any more (a graceful stop finished its tasks first); otherwise it is
   * left to expire, and a sweeper finishes what is left. Does not close the database. Idempotent.
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    await this.#started?.catch(() => undefined);
    const held = this.#state === 'running' || this.#state === 'lost';
    this.#state = 'closed';
    this.#stop.abort();
    await Promise.all([this.#maintenance.stop(), this.#cancelPoll.stop(), this.#listener.close()]);
    await Promise.all([...this.#inFlight]);
    this.#watches.closeAll();
    if (held) await deleteIdleLease(this.#db.pool, this.replicaId, true).catch(() => undefined);
  }

  /** One maintenance round: renew the lease, then finish the tasks of lost replicas. */
  async #maintain(): Promise<void> {
    if (this.#state === 'running') {
      try {
        if (!(await renewLease(this.#db.pool, this.replicaId, this.#options.leaseMs))) this.#declareLost();
      } catch {
        // Retried next round; if the database stays away longer than the lease, this replica is lost.
      }
    }
    let reports: LostReplica[] = [];
    try {
      reports = await sweepLostReplicas(this.#db, this.#options.redactionPolicy, this.#stop.signal);
    } catch {
      // Retried next round: every step of the sweep is safe to repeat.
    }
    for (const report of reports) this.#report(report);
  }

  #declareLost(): void {
    if (this.#state !== 'running') return;
    this.#state = 'lost';
    this.#claimed.clear();
    this.#report({ replica_id: this.replicaId, tasks: [] });
  }

  #report(lost: LostReplica): void {
    try {
      this.#options.onLost(lost);
    } catch {
      // A logging callback that throws must not stop the sweep.
    }
  }

  #assertRunning(): void {
    if (this.#state === 'lost') throw lostError();
    if (this.#state !== 'running') {
      throw new UnavailableError(
        this.#state === 'closed' ? 'The coordination is closed' : 'The coordination is not started',
      );
    }
  }

  #onNotification(channel: string, payload: string): void {
    const target = parseTarget(payload);
    if (!target) return;
    const key = ownerKey(target.owner, target.task_id);
    if (channel === TASK_EVENTS_CHANNEL) this.#watches.wake(key);
    else if (channel === TASK_CANCELS_CHANNEL && this.#claimed.has(key)) {
      this.#track(this.#delivery.deliverFor(target.owner, target.task_id));
    }
  }

  /** Background work close() waits for; its failures are retried by the poll. */
  #track(work: Promise<void>): void {
    const tracked = work.catch(() => undefined).finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }
}

function lostError(): ReplicaLostError {
  return new ReplicaLostError("This replica's lease ran out: it takes no more tasks");
}

function checkTask(owner: TaskOwner, taskId: string): void {
  if (!isRecord(owner) || typeof owner.tenant !== 'string' || typeof owner.principal_id !== 'string') {
    throw new ValueError('owner must be {tenant, principal_id} strings');
  }
  if (typeof taskId !== 'string' || taskId === '') throw new ValueError('task_id must be a non-empty string');
}

/** The task a notification names (`{tenant, principal_id, task_id, …}`); null for anything else. */
function parseTarget(payload: string): { owner: TaskOwner; task_id: string } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return null;
  }
  if (!isRecord(parsed)) return null;
  const { tenant, principal_id, task_id } = parsed;
  if (typeof tenant !== 'string' || typeof principal_id !== 'string' || typeof task_id !== 'string')
    return null;
  return { owner: { tenant, principal_id }, task_id };
}
