/**
 * A RegistryStore in a SQLite file on better-sqlite3 (optional peer, loaded on first use). It keeps
 * its own table and its own schema version, so one file can hold a SqliteRunStore and a
 * SqliteRegistryStore side by side (the run store owns `PRAGMA user_version`).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { UnavailableError, type AgentCard } from '@agent/core';
import { optionNames } from '@agent/core/internal';
import { clockOf } from '../store/records.js';
import type { TaskOwner } from '../store/run-store.js';
import { checkSqliteOptions, openSqlite, sqliteError, migrateComponent } from '../store/sqlite-support.js';
import {
  createOptionsOf,
  entryOf,
  isoAt,
  nameOf,
  pageOf,
  registrantOf,
  registryQueryOf,
  renewalAt,
  storedCardOf,
  tenantOf,
  ttlOf,
  type EntryFields,
} from './entries.js';
import type {
  CreateEntryOptions,
  RegistrationResult,
  RegistryEntry,
  RegistryEntryQuery,
  RegistryPage,
  RegistryStore,
} from './registry-store.js';

/** Bumped with every change to the registry's tables; a file written by a newer version is refused. */
export const REGISTRY_SCHEMA_VERSION = 1;

/** This store's row in `schema_versions`. */
const COMPONENT = 'registry';

export interface SqliteRegistryStoreOptions {
  /** Database file path (it may be the file of a SqliteRunStore); `:memory:` for a private in-memory database. */
  path: string;
  /** The clock that stamps entries and decides expiry, in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  /** How long a write waits for another connection's lock, in milliseconds. Default `5000`. */
  busyTimeoutMs?: number;
}

const OPTION_NAMES = optionNames<SqliteRegistryStoreOptions>({ path: true, now: true, busyTimeoutMs: true });

/**
 * `MIGRATIONS[n]` takes the registry's tables from schema n to n + 1. `skill_keys` is the JSON array
 * of the card's skill ids and tags, computed by the same code as in memory, so the `skill` filter
 * cannot read a card differently in SQL.
 */
const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE registry_entries (
  tenant        TEXT NOT NULL,
  name          TEXT NOT NULL,
  principal_id  TEXT NOT NULL,
  card          TEXT NOT NULL,
  skill_keys    TEXT NOT NULL,
  registered_at TEXT NOT NULL,
  heartbeat_at  TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  PRIMARY KEY (tenant, name)
) WITHOUT ROWID;
CREATE INDEX registry_entries_expires_at ON registry_entries (expires_at);
`,
];

type Param = string | number;

export class SqliteRegistryStore implements RegistryStore {
  readonly path: string;
  readonly #db: BetterSqlite3.Database;
  readonly #now: () => number;
  readonly #sweep: BetterSqlite3.Statement;
  readonly #exists: BetterSqlite3.Statement;
  readonly #count: BetterSqlite3.Statement;
  readonly #insert: BetterSqlite3.Statement;
  readonly #replace: BetterSqlite3.Statement;
  readonly #heartbeat: BetterSqlite3.Statement;
  readonly #delete: BetterSqlite3.Statement;
  readonly #get: BetterSqlite3.Statement;
  /** List statements, one per combination of filters. */
  readonly #lists = new Map<string, BetterSqlite3.Statement>();
  #closed = false;

  /**
   * @throws UnavailableError when better-sqlite3 is not installed or the file cannot be opened or
   * used; ValueError for a bad option or a file whose registry tables are newer than this library.
   */
  constructor(options: SqliteRegistryStoreOptions) {
    const busyTimeoutMs = checkSqliteOptions('SqliteRegistryStore', options, OPTION_NAMES);
    this.#now = clockOf(options.now, 'SqliteRegistryStore');
    this.path = options.path;
    this.#db = openSqlite({ feature: 'SqliteRegistryStore', path: options.path, busyTimeoutMs });
    try {
      this.#migrate();
      this.#sweep = this.#db.prepare('DELETE FROM registry_entries WHERE expires_at <= ?');
      this.#exists = this.#db.prepare('SELECT 1 FROM registry_entries WHERE tenant = ? AND name = ?').pluck();
      this.#count = this.#db.prepare('SELECT count(*) FROM registry_entries WHERE expires_at > ?').pluck();
      this.#insert = this.#db.prepare(`
        INSERT INTO registry_entries (tenant, name, principal_id, card, skill_keys, registered_at, heartbeat_at, expires_at)
        VALUES (@tenant, @name, @principal_id, @card, @skill_keys, @registered_at, @heartbeat_at, @expires_at)`);
      // Each write names the owner in its WHERE: another owner's row is never touched, and looks absent.
      this.#replace = this.#db.prepare(`
        UPDATE registry_entries SET card = @card, skill_keys = @skill_keys, heartbeat_at = @heartbeat_at, expires_at = @expires_at
        WHERE tenant = @tenant AND name = @name AND principal_id = @principal_id AND expires_at > @now
        RETURNING *`);
      this.#heartbeat = this.#db.prepare(`
        UPDATE registry_entries SET heartbeat_at = @heartbeat_at, expires_at = @expires_at
        WHERE tenant = @tenant AND name = @name AND principal_id = @principal_id AND expires_at > @now
        RETURNING *`);
      this.#delete = this.#db.prepare(`
        DELETE FROM registry_entries
        WHERE tenant = @tenant AND name = @name AND principal_id = @principal_id AND expires_at > @now
        RETURNING *`);
      this.#get = this.#db.prepare(
        'SELECT * FROM registry_entries WHERE tenant = ? AND name = ? AND expires_at > ?',
      );
    } catch (error) {
      this.#db.close();
      throw sqliteError(error, `SqliteRegistryStore cannot use ${options.path}`);
    }
  }

  #migrate(): void {
    migrateComponent(this.#db, { name: COMPONENT, migrations: MIGRATIONS, path: this.path });
  }

  /** The journal mode in effect (`wal` for a file database). */
  get journalMode(): string {
    this.#open();
    return String(this.#db.pragma('journal_mode', { simple: true }));
  }

  #open(): void {
    if (this.#closed) throw new UnavailableError('The registry store is closed');
  }

  /** Runs a write under the write lock (IMMEDIATE), after deleting the entries expired at `now`. */
  #write<T>(now: string, body: () => T): T {
    return this.#db
      .transaction(() => {
        this.#sweep.run(now);
        return body();
      })
      .immediate();
  }

  async createEntry(
    owner: TaskOwner,
    card: AgentCard,
    options: CreateEntryOptions,
  ): Promise<RegistrationResult> {
    try {
      const who = registrantOf(owner);
      const stored = storedCardOf(card);
      const { ttlMs, maxEntries } = createOptionsOf(options);
      this.#open();
      const nowMs = this.#now();
      const now = isoAt(nowMs);
      const renewal = renewalAt(nowMs, ttlMs);
      return this.#write(now, (): RegistrationResult => {
        // The check and the insert share the write lock: no other writer can fill the last slot between them.
        if (this.#exists.get(who.tenant, stored.name) !== undefined) return { refused: 'exists' };
        if ((this.#count.get(now) as number) >= maxEntries) return { refused: 'full' };
        const row = {
          ...who,
          ...stored,
          skill_keys: JSON.stringify(stored.skill_keys),
          registered_at: now,
          ...renewal,
        };
        this.#insert.run(row);
        return { entry: entryOf(row) };
      });
    } catch (error) {
      throw sqliteError(error, 'SqliteRegistryStore.createEntry');
    }
  }

  async replaceEntry(owner: TaskOwner, card: AgentCard, ttlMs: number): Promise<RegistryEntry | null> {
    try {
      const who = registrantOf(owner);
      const stored = storedCardOf(card);
      ttlOf(ttlMs);
      this.#open();
      const nowMs = this.#now();
      const now = isoAt(nowMs);
      const params = {
        ...who,
        ...stored,
        skill_keys: JSON.stringify(stored.skill_keys),
        ...renewalAt(nowMs, ttlMs),
        now,
      };
      const row = this.#write(now, () => this.#replace.get(params) as EntryFields | undefined);
      return row ? entryOf(row) : null;
    } catch (error) {
      throw sqliteError(error, 'SqliteRegistryStore.replaceEntry');
    }
  }

  async heartbeatEntry(owner: TaskOwner, name: string, ttlMs: number): Promise<RegistryEntry | null> {
    try {
      const who = registrantOf(owner);
      nameOf(name);
      ttlOf(ttlMs);
      this.#open();
      const nowMs = this.#now();
      const now = isoAt(nowMs);
      const params = { ...who, name, ...renewalAt(nowMs, ttlMs), now };
      const row = this.#write(now, () => this.#heartbeat.get(params) as EntryFields | undefined);
      return row ? entryOf(row) : null;
    } catch (error) {
      throw sqliteError(error, 'SqliteRegistryStore.heartbeatEntry');
    }
  }

  async deleteEntry(owner: TaskOwner, name: string): Promise<RegistryEntry | null> {
    try {
      const who = registrantOf(owner);
      nameOf(name);
      this.#open();
      const now = isoAt(this.#now());
      const row = this.#write(now, () => this.#delete.get({ ...who, name, now }) as EntryFields | undefined);
      return row ? entryOf(row) : null;
    } catch (error) {
      throw sqliteError(error, 'SqliteRegistryStore.deleteEntry');
    }
  }

  async getEntry(tenant: string, name: string): Promise<RegistryEntry | null> {
    try {
      tenantOf(tenant);
      nameOf(name);
      this.#open();
      const row = this.#get.get(tenant, name, isoAt(this.#now())) as EntryFields | undefined;
      return row ? entryOf(row) : null;
    } catch (error) {
      throw sqliteError(error, 'SqliteRegistryStore.getEntry');
    }
  }

  async listEntries(query: RegistryEntryQuery): Promise<RegistryPage> {
    try {
      const q = registryQueryOf(query);
      this.#open();
      const clauses = ['tenant = ?', 'expires_at > ?'];
      const params: Param[] = [q.tenant, isoAt(this.#now())];
      if (q.name !== undefined) {
        clauses.push('name = ?');
        params.push(q.name);
      }
      if (q.after !== undefined) {
        clauses.push('name > ?');
        params.push(q.after);
      }
      if (q.skill !== undefined) {
        clauses.push('EXISTS (SELECT 1 FROM json_each(skill_keys) WHERE value = ?)');
        params.push(q.skill);
      }
      // The primary key (tenant, name) gives the order: BINARY collation is UTF-8 byte order.
      const sql = `SELECT * FROM registry_entries WHERE ${clauses.join(' AND ')} ORDER BY name LIMIT ?`;
      let statement = this.#lists.get(sql);
      if (!statement) {
        statement = this.#db.prepare(sql);
        this.#lists.set(sql, statement);
      }
      // One row more than the page tells whether another page exists.
      const rows = statement.all(...params, q.page_size + 1) as EntryFields[];
      return pageOf(q, rows);
    } catch (error) {
      throw sqliteError(error, 'SqliteRegistryStore.listEntries');
    }
  }

  async countEntries(): Promise<number> {
    try {
      this.#open();
      return this.#count.get(isoAt(this.#now())) as number;
    } catch (error) {
      throw sqliteError(error, 'SqliteRegistryStore.countEntries');
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }
}
