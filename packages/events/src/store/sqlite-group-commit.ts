/**
 * Group commit on one better-sqlite3 connection. A commit, not a statement, is what a write costs
 * in WAL mode: every commit appends each page it changed to the log, and a task's writes share
 * pages (its row, the indexes on `updated_at`). Writes made in the same turn of the event loop are
 * therefore committed together, in one transaction.
 *
 * A savepoint per write would let one write fail alone, but SQLite copies every page a write
 * touches inside a savepoint to a sub-journal first: about a fifth of a batch's cost. So a batch
 * runs without them, and only a batch in which a write failed is rolled back and run again with a
 * savepoint per write.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { AgentError } from '@agent/core';
import { sqliteError } from './sqlite-support.js';

export interface GroupCommitOptions {
  /** Most writes in one batch; the write that fills a batch commits it at once, in its own call. */
  maxWrites: number;
  /** Runs first in each batch's transaction (a retention sweep); a throw fails the whole batch. */
  beforeWrites?: () => void;
  /** Runs after each COMMIT that succeeded; what it throws is ignored. */
  afterCommit?: () => void;
}

interface QueuedWrite {
  /** Names the operation in the error a failed batch gives it, e.g. `SqliteRunStore.saveRunReport`. */
  context: string;
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: AgentError) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** A write failed in a batch run without savepoints: the batch is rolled back, to run again with them. */
const WRITE_FAILED = Symbol('write failed');

/** Why a batch committed nothing: its writes all reject with this. */
interface BatchFailure {
  failure: unknown;
}

/**
 * Queues writes and commits them in batches: on the next turn (`setImmediate`), when a batch is
 * full, or when {@link flush} is called (a read that must see them, a close). A write's promise
 * settles only after its batch's COMMIT returned, so a resolved write is in the file. One write
 * failing (its own error, undone alone) leaves the others of its batch in; a
 * failure of the transaction itself (a lock held past the busy timeout, a full disk, a read-only
 * file) rejects every write of the batch, mapped by {@link sqliteError}.
 */
export class SqliteGroupCommit {
  readonly #db: BetterSqlite3.Database;
  readonly #maxWrites: number;
  readonly #beforeWrites: (() => void) | undefined;
  readonly #afterCommit: (() => void) | undefined;
  readonly #begin: BetterSqlite3.Statement;
  readonly #commit: BetterSqlite3.Statement;
  readonly #rollback: BetterSqlite3.Statement;
  readonly #savepoint: BetterSqlite3.Statement;
  readonly #release: BetterSqlite3.Statement;
  readonly #rollbackTo: BetterSqlite3.Statement;
  #queue: QueuedWrite[] = [];
  /** What the queued writes touch, as named by their callers: reads ask before deciding to flush. */
  readonly #keys = new Set<string>();
  #timer: NodeJS.Immediate | undefined;

  constructor(db: BetterSqlite3.Database, options: GroupCommitOptions) {
    this.#db = db;
    this.#maxWrites = options.maxWrites;
    this.#beforeWrites = options.beforeWrites;
    this.#afterCommit = options.afterCommit;
    // IMMEDIATE takes the write lock first: whatever a write reads (the last sequence of a log) no
    // other connection can change before the commit, and a lock held elsewhere fails at BEGIN,
    // before any write ran.
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT batched_write');
    this.#release = db.prepare('RELEASE batched_write');
    this.#rollbackTo = db.prepare('ROLLBACK TO batched_write');
  }

  /** Writes queued and not yet committed (or failed). */
  get size(): number {
    return this.#queue.length;
  }

  /**
   * Queues `work` (run later, inside the batch transaction: statements only, nothing that waits)
   * and returns what it returns once committed. `keys` name what it changes, for {@link touches}.
   * `work` runs a second time, on the database as it was before the batch, when a write of its
   * batch failed: it must not change anything but the database.
   */
  enqueue<T>(context: string, keys: readonly string[], work: () => T): Promise<T> {
    const promise = new Promise<T>((resolve, reject) => {
      this.#queue.push({ context, work, resolve: resolve as (value: unknown) => void, reject });
    });
    for (const key of keys) this.#keys.add(key);
    if (this.#queue.length >= this.#maxWrites) this.flush();
    else this.#timer ??= setImmediate(this.#onTimer);
    return promise;
  }

  /** True when a queued write named `key`. */
  touches(key: string): boolean {
    return this.#keys.has(key);
  }

  /** Commits the queued writes now, synchronously, and settles their promises. Never throws. */
  flush(): void {
    if (this.#timer !== undefined) {
      clearImmediate(this.#timer);
      this.#timer = undefined;
    }
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    this.#keys.clear();
    const result = this.#commitBatch(batch);
    if ('failure' in result) {
      for (const write of batch) write.reject(sqliteError(result.failure, write.context));
      return;
    }
    batch.forEach((write, index) => {
      const outcome = result[index]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(sqliteError(outcome.error, write.context));
    });
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.flush();
  };

  #commitBatch(batch: readonly QueuedWrite[]): Outcome[] | BatchFailure {
    const bare = this.#transaction(() => this.#runBare(batch));
    return bare === WRITE_FAILED ? this.#transaction(() => batch.map((write) => this.#attempt(write))) : bare;
  }

  /** Runs `writes` in one transaction and commits it, unless they answer {@link WRITE_FAILED}. */
  #transaction<T>(writes: () => T): T | BatchFailure {
    try {
      this.#begin.run();
    } catch (failure) {
      return { failure };
    }
    let result: T;
    try {
      this.#beforeWrites?.();
      result = writes();
      if (result === WRITE_FAILED) {
        this.#abandon();
        return result;
      }
      this.#commit.run();
    } catch (failure) {
      this.#abandon();
      return { failure };
    }
    try {
      this.#afterCommit?.();
    } catch {
      // What watches commits never undoes one: the writes are in the file.
    }
    return result;
  }

  /**
   * Runs the writes without savepoints. The first that fails (and leaves the transaction open)
   * answers {@link WRITE_FAILED}: what it did before throwing cannot be undone alone. One that took
   * the transaction with it is rethrown, and fails the batch.
   */
  #runBare(batch: readonly QueuedWrite[]): Outcome[] | typeof WRITE_FAILED {
    const outcomes: Outcome[] = [];
    for (const write of batch) {
      try {
        outcomes.push({ ok: true, value: write.work() });
      } catch (error) {
        if (!this.#db.inTransaction) throw error;
        return WRITE_FAILED;
      }
    }
    return outcomes;
  }

  /**
   * Runs one write in its savepoint. Its own failure (a missing task, a constraint) undoes it alone;
   * one that took the transaction with it (SQLite rolls back on some I/O errors) is rethrown, and
   * fails the batch.
   */
  #attempt(write: QueuedWrite): Outcome {
    this.#savepoint.run();
    try {
      const value = write.work();
      this.#release.run();
      return { ok: true, value };
    } catch (error) {
      if (!this.#db.inTransaction) throw error;
      this.#rollbackTo.run();
      this.#release.run();
      return { ok: false, error };
    }
  }

  #abandon(): void {
    if (!this.#db.inTransaction) return;
    try {
      this.#rollback.run();
    } catch {
      // The transaction is gone either way: SQLite rolls back what it cannot keep.
    }
  }
}
