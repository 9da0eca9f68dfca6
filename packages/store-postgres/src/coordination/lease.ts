import type { Pool } from 'pg';

// Lease arithmetic is done by the database (now()), so replicas with skewed clocks agree.
const EXPIRY = `now() + $2::double precision * interval '1 millisecond'`;

/** Takes this replica's lease; false when a row with this id exists already. */
export async function insertLease(pool: Pool, replicaId: string, leaseMs: number): Promise<boolean> {
  const result = await pool.query(
    `INSERT INTO agent_replicas (replica_id, started_at, expires_at) VALUES ($1, now(), ${EXPIRY})
     ON CONFLICT (replica_id) DO NOTHING`,
    [replicaId, leaseMs],
  );
  return result.rowCount === 1;
}

/**
 * Extends the lease; false when it was already over (expired, or swept away): from then on the
 * replica counts as lost, whatever it still does, because a sweeper may already be finishing its tasks.
 */
export async function renewLease(pool: Pool, replicaId: string, leaseMs: number): Promise<boolean> {
  const result = await pool.query(
    `UPDATE agent_replicas SET expires_at = ${EXPIRY} WHERE replica_id = $1 AND expires_at > now()`,
    [replicaId, leaseMs],
  );
  return result.rowCount === 1;
}

/**
 * Deletes the replica's lease row when no claim needs it any more (an unexpired one only when
 * `evenIfLive`: a replica stopping gracefully drops its own). A claim added meanwhile makes the
 * foreign key refuse the delete, which leaves the row for the next attempt.
 */
export async function deleteIdleLease(pool: Pool, replicaId: string, evenIfLive: boolean): Promise<boolean> {
  try {
    const result = await pool.query(
      `DELETE FROM agent_replicas r
       WHERE r.replica_id = $1 AND ($2 OR r.expires_at < now())
         AND NOT EXISTS (SELECT 1 FROM agent_task_claims c WHERE c.replica_id = r.replica_id)`,
      [replicaId, evenIfLive],
    );
    return result.rowCount === 1;
  } catch (error) {
    if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) return false;
    throw error;
  }
}

const FOREIGN_KEY_VIOLATION = '23503';
