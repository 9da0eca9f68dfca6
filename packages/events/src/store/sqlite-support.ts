/**
 * What every SQLite-backed store shares: loading better-sqlite3 (an optional peer), opening a file
 * with typed errors, the write-ahead log, and turning SQLite failures into AgentErrors.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { AgentError, UnavailableError, ValueError } from '@agent/core';
import { checkOptionNames } from '@agent/core/internal';
import { requireOptionalPeer } from '../optional-peer.js';

type DatabaseConstructor = new (path: string, options?: BetterSqlite3.Options) => BetterSqlite3.Database;

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

export interface OpenSqliteOptions {
  /** Names the store in error messages, e.g. `SqliteRunStore`. */
  feature: string;
  path: string;
  busyTimeoutMs?: number;
  readonly?: boolean;
}

/**
 * Checks a SQLite store's options before anything is loaded: `path`, the option names (`accepted`),
 * `busyTimeoutMs`. Returns the busy timeout to use.
 * @throws ValueError for a missing path, an unknown option name or a bad busy timeout.
 */
export function checkSqliteOptions(
  feature: string,
  options: { path?: unknown; busyTimeoutMs?: unknown } | undefined,
  accepted: readonly string[],
): number {
  if (!options || typeof options.path !== 'string' || options.path === '') {
    throw new ValueError(`${feature} needs a \`path\` (a file path or ":memory:")`, {
      data: { field: 'path' },
    });
  }
  checkOptionNames(feature, options, accepted);
  const busy = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (typeof busy !== 'number' || !Number.isInteger(busy) || busy < 0)
    throw new ValueError('busyTimeoutMs must be a non-negative integer', {
      data: { field: 'busyTimeoutMs' },
    });
  return busy;
}

/**
 * Opens the database file (a `readonly` open needs an existing file).
 * @throws UnavailableError when better-sqlite3 is not installed or the file cannot be opened.
 */
export function openSqlite(options: OpenSqliteOptions): BetterSqlite3.Database {
  const Database = requireOptionalPeer<DatabaseConstructor>('better-sqlite3', options.feature, '^12');
  try {
    return new Database(options.path, {
      readonly: options.readonly === true,
      timeout: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
      fileMustExist: options.readonly === true,
    });
  } catch (error) {
    throw new UnavailableError(
      `${options.feature} cannot open ${options.path}: ${(error as Error).message}`,
      {
        cause: error,
        data: { path: options.path },
      },
    );
  }
}

/** Pages the write-ahead log grows to before a commit copies them into the file (SQLite's default: 1,000). */
export const WAL_CHECKPOINT_PAGES = 4_000;
/** What is left of the log file after a checkpoint emptied it, in bytes. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * WAL lets other processes (and other stores on the same file) read while one writes; NORMAL sync
 * is durable across application crashes. The journal mode is a property of the file, so every
 * store opening it agrees.
 *
 * A checkpoint writes each page the log holds once, however many commits changed it, and syncs the
 * file: with SQLite's default of 1,000 pages a store taking a few thousand tasks a second
 * checkpointed several times a second, a sixth of its CPU. A larger log is checkpointed less often
 * but for longer, and the commit that crosses the limit waits for it: 4,000 pages (16 MiB) took
 * most of the gain (10,000 took a little more CPU off, and added ~20 ms to the slowest answers).
 * Every connection checkpoints at the same size; the log file is cut back after a burst.
 */
export function useWriteAheadLog(db: BetterSqlite3.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
}

/**
 * SQLite failures (a locked or read-only file, a missing table in a read-only open, a full disk)
 * become typed errors; our own errors pass through.
 */
export function sqliteError(error: unknown, context: string): AgentError {
  if (error instanceof AgentError) return error;
  const code = (error as { code?: unknown }).code;
  return new UnavailableError(`${context}: ${(error as Error).message}`, {
    cause: error,
    data: typeof code === 'string' ? { sqlite_code: code } : undefined,
  });
}

/** One store's tables in a file other stores may share: its own row in `schema_versions`. */
export interface SqliteComponent {
  /** Its key in `schema_versions` (`registry`, `approvals`). */
  name: string;
  /** `migrations[n]` takes its tables from schema n to n + 1; the latest schema is their count. */
  migrations: readonly string[];
  /** The file, named in the error for a schema newer than this library reads. */
  path: string;
}

/**
 * Brings one component's tables up to its latest schema (WAL on first). IMMEDIATE takes the write
 * lock before reading the version again, so of two connections opening the same new file, the
 * second waits and then finds the tables in place.
 */
export function migrateComponent(db: BetterSqlite3.Database, component: SqliteComponent): void {
  useWriteAheadLog(db);
  const latest = component.migrations.length;
  if (componentVersion(db, component) === latest) return;
  db.transaction(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)',
    );
    for (let step = componentVersion(db, component); step < latest; step += 1)
      db.exec(component.migrations[step]!);
    db.prepare(
      'INSERT INTO schema_versions (component, version) VALUES (?, ?) ON CONFLICT (component) DO UPDATE SET version = excluded.version',
    ).run(component.name, latest);
  }).immediate();
}

/** The component's schema in this file; 0 when it has none. A newer one than known is a ValueError. */
function componentVersion(db: BetterSqlite3.Database, component: SqliteComponent): number {
  const known = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_versions'")
    .get();
  const version = known
    ? ((db.prepare('SELECT version FROM schema_versions WHERE component = ?').pluck().get(component.name) as
        number | undefined) ?? 0)
    : 0;
  const latest = component.migrations.length;
  if (version > latest)
    throw new ValueError(
      `${component.path} has ${component.name} schema ${version}; this library reads up to ${latest}`,
      { data: { path: component.path, schemaVersion: version } },
    );
  return version;
}
