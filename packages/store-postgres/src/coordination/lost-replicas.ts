import { isTerminalState, nowIso, ReplicaLostError, type Task, type TaskState } from '@agent/core';
import { failedEnding, isRecord } from '@agent/core/internal';
import type { RedactionPolicy, TaskOwner } from '@agent/events';
import type { PoolClient } from 'pg';
import type { PostgresDatabase } from '../database.js';
import { finishTaskInTransaction } from '../run-store/task-ending.js';
import { deleteIdleLease } from './lease.js';
import type { LostReplica, LostTask } from './options.js';

interface ClaimRow {
  tenant: string;
  principal_id: string;
  task_id: string;
}

/**
 * Finishes the tasks of every replica whose lease is over, and drops the replica once none is
 * left. Any number of replicas may sweep at once: each claim is taken under a row lock that the
 * others skip, so a task is finished once. Resolves with the replicas it finished tasks of.
 */
export async function sweepLostReplicas(
  db: PostgresDatabase,
  redaction: RedactionPolicy | null,
  signal: AbortSignal,
): Promise<LostReplica[]> {
  const { rows: replicas } = await db.pool.query<{ replica_id: string }>(
    'SELECT replica_id FROM agent_replicas WHERE expires_at < now() ORDER BY expires_at',
  );
  const reports: LostReplica[] = [];
  for (const { replica_id: replicaId } of replicas) {
    if (signal.aborted) break;
    const { rows: claims } = await db.pool.query<ClaimRow>(
      'SELECT tenant, principal_id, task_id FROM agent_task_claims WHERE replica_id = $1',
      [replicaId],
    );
    const finished: LostTask[] = [];
    for (const claim of claims) {
      if (signal.aborted) break;
      if (await finishLostClaim(db, claim, replicaId, redaction)) {
        finished.push({
          owner: { tenant: claim.tenant, principal_id: claim.principal_id },
          task_id: claim.task_id,
        });
      }
    }
    if (!signal.aborted) await deleteIdleLease(db.pool, replicaId, false);
    if (finished.length > 0) reports.push({ replica_id: replicaId, tasks: finished });
  }
  await dropOrphanCancelRequests(db);
  return reports;
}

/**
 * One claim of a lost replica, in one transaction: when its task is not over, one `task.error` and
 * one final `failed` status (REPLICA_LOST) are logged and the final snapshot saved; then the claim
 * goes. True when this call finished the task.
 */
async function finishLostClaim(
  db: PostgresDatabase,
  claim: ClaimRow,
  replicaId: string,
  redaction: RedactionPolicy | null,
): Promise<boolean> {
  const keys = [claim.tenant, claim.principal_id, claim.task_id];
  return db.transaction(async (client) => {
    // SKIP LOCKED: another sweeper holds it and finishes it; a claim moved to a live replica since
    // (the task continued there) no longer names the lost one.
    const locked = await client.query(
      `SELECT 1 FROM agent_task_claims
       WHERE tenant = $1 AND principal_id = $2 AND task_id = $3 AND replica_id = $4
       FOR UPDATE SKIP LOCKED`,
      [...keys, replicaId],
    );
    if (locked.rowCount !== 1) return false;
    const finished = await finishTask(client, claim, redaction);
    await client.query(
      'DELETE FROM agent_task_claims WHERE tenant = $1 AND principal_id = $2 AND task_id = $3',
      keys,
    );
    await client.query(
      'DELETE FROM agent_cancel_requests WHERE tenant = $1 AND principal_id = $2 AND task_id = $3',
      keys,
    );
    return finished;
  });
}

async function finishTask(
  client: PoolClient,
  claim: ClaimRow,
  redaction: RedactionPolicy | null,
): Promise<boolean> {
  const { rows } = await client.query<{ state: string; task: string }>(
    'SELECT state, task FROM agent_tasks WHERE tenant = $1 AND principal_id = $2 AND task_id = $3',
    [claim.tenant, claim.principal_id, claim.task_id],
  );
  const record = rows[0];
  // Claimed but never saved (it died before the first snapshot), or over already: nothing to end.
  if (!record || isTerminalState(record.state as TaskState)) return false;
  const task = storedTask(record.task, claim.task_id);
  const ending = failedEnding(task, new ReplicaLostError());
  const owner: TaskOwner = { tenant: claim.tenant, principal_id: claim.principal_id };
  return finishTaskInTransaction(client, owner, claim.task_id, ending, ending[1].task!, redaction, nowIso());
}

/** The stored (redacted) task text back as a Task; only its id and metadata matter to the ending. */
function storedTask(text: string, taskId: string): Task {
  const parsed: unknown = JSON.parse(text);
  if (!isRecord(parsed) || parsed.id !== taskId) {
    throw new TypeError(`The stored record of task ${taskId} is not a task`);
  }
  return parsed as unknown as Task;
}

/**
 * A cancel request whose task nobody claims can never be delivered: its run is over (or was never
 * here). Kept, it would cancel a later run of the same task id.
 */
async function dropOrphanCancelRequests(db: PostgresDatabase): Promise<void> {
  await db.pool.query(
    `DELETE FROM agent_cancel_requests q
     WHERE NOT EXISTS (
       SELECT 1 FROM agent_task_claims c
       WHERE c.tenant = q.tenant AND c.principal_id = q.principal_id AND c.task_id = q.task_id)`,
  );
}
