import { createHash } from 'node:crypto';
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
  /**
   * Prepare each statement of `query()` once per connection (a named statement, named after its
   * text), so the server parses and plans it once instead of on every call. Default `true`; `false`
   * for a connection pooler in front of the server that cannot keep named statements (PgBouncer in
   * transaction mode before 1.21, or without `max_prepared_statements`).
   */
  preparedStatements?: boolean;
}

/** Statement texts named at once, at most: past it a new text runs unnamed (parsed every time). */
const MAX_NAMED_STATEMENTS = 1000;
const statementNames = new Map<string, string>();

/**
 * The name a statement text is prepared under: the same text always gets the same name, in every
 * process, so a name the driver or the server already knows for a connection is never given a
 * different text. `undefined` once {@link MAX_NAMED_STATEMENTS} texts have names.
 */
function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `agent_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    statementNames.set(text, name);
  }
  return name;
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
  private readonly prepared: boolean;

  constructor(options: PostgresDatabaseOptions) {
    if (options.preparedStatements !== undefined && typeof options.preparedStatements !== 'boolean') {
      throw new ValueError('preparedStatements must be a boolean');
    }
    this.prepared = options.preparedStatements ?? true;
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

  /**
   * One statement on a pooled connection, once the schema is current; prepared once per connection
   * unless `preparedStatements` is false.
   */
  async query<R extends QueryResultRow>(
    text: string,
    params: readonly unknown[] = [],
  ): Promise<QueryResult<R>> {
    await this.ready();
    // Without a name (the option off, or past the bound) the driver parses the statement every time.
    const name = this.prepared ? statementName(text) : undefined;
    return this.pool.query<R>({ name, text, values: params as unknown[] });
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
