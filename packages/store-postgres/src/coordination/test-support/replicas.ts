import { Client } from 'pg';
import { PostgresDatabase } from '../../database.js';
import type { PostgresCoordinationOptions } from '../options.js';
import { listenerApplicationName, PostgresCoordination } from '../postgres-coordination.js';

/**
 * Short enough to keep the tests quick; nothing asserts how long anything took. The lease is many
 * renewals long, so a replica on a busy machine is not declared lost by accident.
 */
export const FAST: PostgresCoordinationOptions = { leaseMs: 1500, renewEveryMs: 100, pollIntervalMs: 100 };

export interface Replica {
  db: PostgresDatabase;
  coordination: PostgresCoordination;
  close(): Promise<void>;
}

/** A replica as a process would have one: its own pool and its own coordination, started. */
export async function openReplica(
  url: string,
  options: PostgresCoordinationOptions = FAST,
): Promise<Replica> {
  const db = new PostgresDatabase({ connectionString: url, poolOptions: { max: 4 } });
  const coordination = new PostgresCoordination(db, options);
  await coordination.start();
  return {
    db,
    coordination,
    close: async () => {
      await coordination.close();
      await db.close();
    },
  };
}

/** Runs one statement on a connection of its own (as an operator, or another process, would). */
export async function sql<R extends Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<R[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** The backend pid of a replica's LISTEN connection, when it has one. */
export async function listenerPid(url: string, replicaId: string): Promise<number | undefined> {
  const rows = await sql<{ pid: number }>(
    url,
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
    [listenerApplicationName(replicaId)],
  );
  return rows[0]?.pid;
}

/** Drops a replica's LISTEN connection from the server side: whatever is announced meanwhile is lost. */
export async function killListener(url: string, replicaId: string): Promise<number> {
  const pid = await listenerPid(url, replicaId);
  if (pid === undefined) throw new Error(`replica ${replicaId} has no LISTEN connection`);
  await sql(url, 'SELECT pg_terminate_backend($1)', [pid]);
  return pid;
}
