import { UnavailableError, ValueError } from '@agent/core';
import { Pool, type PoolClient, type PoolConfig, type QueryResult, type QueryResultRow } from 'pg';
import { applyMigrations } from './schema/migrate.js';
import { MIGRATIONS } from './schema/migrations.js';

export interface PostgresDatabaseOptions {
  /** `postgres://user:password@host:port/database` (libpq URL). Either this or `pool`. */
  connectionString?: string;
  /** A pool the caller owns (it is not ended by `close()`). */
  pool?: Pool;
  /** Passed to `pg`'s Pool when this database opens its own. Default `max` 10. */
  poolOptions?: Omit<PoolConfig, 'connectionString'>;
  /**
   * Longest a statement may run before PostgreSQL cancels it, in ms (the session's
   * `statement_timeout`). Default 30 000; 0 turns it off. Applied to pools this database opens.
   */
  statementTimeoutMs?: number;
}

/**
 * One PostgreSQL database as the stores of this package use it: a connection pool, and the schema
 * brought up to date once, before the first query of any store (concurrent starts are safe).
 * Several stores may share one database; each closes only what it opened.
 */
export class PostgresDatabase {
  readonly pool: Pool;
  private readonly ownsPool: boolean;
  private migrated: Promise<void> | undefined;
  private closed = false;

  constructor(options: PostgresDatabaseOptions) {
    if (options.pool && options.connectionString) {
      throw new ValueError('PostgresDatabase takes connectionString or pool, not both');
    }
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else {
      if (typeof options.connectionString !== 'string' || options.connectionString === '') {
        throw new ValueError('PostgresDatabase needs a connectionString or a pool');
      }
      const timeout = options.statementTimeoutMs ?? 30_000;
      if (!Number.isInteger(timeout) || timeout < 0) {
        throw new ValueError('statementTimeoutMs must be a non-negative integer');
      }
      this.pool = new Pool({
        max: 10,
        ...options.poolOptions,
        connectionString: options.connectionString,
        ...(timeout > 0 ? { statement_timeout: timeout } : {}),
      });
      this.ownsPool = true;
      // An idle client that loses its connection emits on the pool; without a listener that is an
      // uncaught exception. The next checkout gets a fresh connection.
      this.pool.on('error', () => undefined);
    }
  }

  /** Resolves once the schema is current; rejects (and retries on the next call) if it cannot be. */
  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new UnavailableError('The PostgreSQL store is closed'));
    this.migrated ??= applyMigrations(this.pool, MIGRATIONS).then(
      () => undefined,
      (error: unknown) => {
        this.migrated = undefined;
        throw error;
      },
    );
    return this.migrated;
  }

  /** One statement on a pooled connection, once the schema is current. */
  async query<R extends QueryResultRow>(
    text: string,
    params: readonly unknown[] = [],
  ): Promise<QueryResult<R>> {
    await this.ready();
    return this.pool.query<R>(text, params as unknown[]);
  }

  /** Runs `work` in one transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when it throws. */
  async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    await this.ready();
    const client = await this.pool.connect();
    // A connection that cannot even roll back is broken: it leaves the pool instead of going back.
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollback: unknown) => {
        broken = rollback instanceof Error ? rollback : new Error(String(rollback));
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Ends the pool when this database opened it. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
  }
}
