import type { Pool, PoolClient } from 'pg';

/** One step of the schema: applied once, in `version` order, inside one transaction. */
export interface Migration {
  /** Positive integer, unique; steps are applied in ascending order. */
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Any key works as long as every process uses the same one: it serializes concurrent starts. */
const MIGRATION_LOCK_KEY = 0x616774; // "agt"

/**
 * Brings the database's schema up to date: the steps not recorded in `agent_schema_migrations` are
 * applied in order, each in its own transaction with its record. Safe when several processes start
 * at once: a transaction-scoped advisory lock lets one apply while the others wait, then find
 * nothing left to do. Resolves with the versions it applied.
 */
export async function applyMigrations(pool: Pool, migrations: readonly Migration[]): Promise<number[]> {
  const ordered = [...migrations].sort((a, b) => a.version - b.version);
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    await createLedger(client);
    for (const migration of ordered) {
      if (await applyOne(client, migration)) applied.push(migration.version);
    }
  } finally {
    client.release();
  }
  return applied;
}

async function applyOne(client: PoolClient, migration: Migration): Promise<boolean> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    const done = await client.query('SELECT 1 FROM agent_schema_migrations WHERE version = $1', [
      migration.version,
    ]);
    if (done.rowCount) {
      await client.query('COMMIT');
      return false;
    }
    await client.query(migration.sql);
    await client.query('INSERT INTO agent_schema_migrations (version, name) VALUES ($1, $2)', [
      migration.version,
      migration.name,
    ]);
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * The table of applied steps, created under the same advisory lock as the steps: two processes
 * racing `CREATE TABLE IF NOT EXISTS` unlocked can both pass the existence check, and the loser then
 * fails on the catalog (a duplicate type or relation) although the table exists.
 */
async function createLedger(client: PoolClient): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS agent_schema_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
