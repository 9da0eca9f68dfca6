/**
 * A RegistryStore in PostgreSQL: the agent registry's entries, shared by every replica of the
 * registry service. Behaves as the SQLite registry store of `@agent/events` does (the shared suite
 * runs against both): expiry by the store's clock, `maxEntries` over all tenants, keyset pages by
 * name in byte order.
 */
import { UnavailableError, type AgentCard } from '@agent/core';
import { checkOptionNames } from '@agent/core/internal';
import type {
  CreateEntryOptions,
  RegistrationResult,
  RegistryEntry,
  RegistryEntryQuery,
  RegistryPage,
  RegistryStore,
  TaskOwner,
} from '@agent/events';
import type { PostgresDatabase } from '../database.js';
import { postgresError } from '../errors.js';
import {
  clockOf,
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
  type EntryFields as EntryRow,
} from '@agent/events/internal';
import { SqlFilter } from '../sql-filter.js';
import { CONNECTION_OPTION_NAMES, databaseOf, type PostgresConnectionOptions } from '../store-database.js';

export interface PostgresRegistryStoreOptions extends PostgresConnectionOptions {
  /** The clock that stamps entries and decides expiry, in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
}

const OPTION_NAMES = [...CONNECTION_OPTION_NAMES, 'now'];

/**
 * Registrations take this transaction-scoped advisory lock: the check that a name is free and the
 * count against `maxEntries` hold until the insert, whichever replica registers.
 */
const REGISTRATION_LOCK_KEY = 0x61677402;

const COLUMNS = 'tenant, name, principal_id, card, registered_at, heartbeat_at, expires_at';
const OWNED_LIVE = 'tenant = $1 AND name = $2 AND principal_id = $3 AND expires_at > $4';

export class PostgresRegistryStore implements RegistryStore {
  readonly database: PostgresDatabase;
  readonly #ownsDatabase: boolean;
  readonly #now: () => number;
  #closed = false;

  /**
   * Opens no connection: the first call does (and brings the schema up to date).
   * @throws ValueError for an unknown or bad option.
   */
  constructor(options: PostgresRegistryStoreOptions) {
    checkOptionNames('PostgresRegistryStore', options, OPTION_NAMES);
    this.#now = clockOf(options.now, 'PostgresRegistryStore');
    const { database, owned } = databaseOf(options, 'PostgresRegistryStore');
    this.database = database;
    this.#ownsDatabase = owned;
  }

  #open(): void {
    if (this.#closed || this.database.isClosed) throw new UnavailableError('The registry store is closed');
  }

  #error(error: unknown, operation: string): Error {
    return postgresError(error, `PostgresRegistryStore.${operation}`, this.database.pool);
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
      return await this.database.transaction(async (client): Promise<RegistrationResult> => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [REGISTRATION_LOCK_KEY]);
        await client.query('DELETE FROM agent_registry_entries WHERE expires_at <= $1', [now]);
        const taken = await client.query(
          'SELECT 1 FROM agent_registry_entries WHERE tenant = $1 AND name = $2',
          [who.tenant, stored.name],
        );
        if (taken.rowCount) return { refused: 'exists' };
        const count = await client.query<{ live: number }>(
          'SELECT count(*)::integer AS live FROM agent_registry_entries WHERE expires_at > $1',
          [now],
        );
        if (count.rows[0]!.live >= maxEntries) return { refused: 'full' };
        const row: EntryRow = {
          tenant: who.tenant,
          name: stored.name,
          principal_id: who.principal_id,
          card: stored.card,
          registered_at: now,
          ...renewal,
        };
        await client.query(
          `INSERT INTO agent_registry_entries (${COLUMNS}, skill_keys) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            row.tenant,
            row.name,
            row.principal_id,
            row.card,
            row.registered_at,
            row.heartbeat_at,
            row.expires_at,
            stored.skill_keys,
          ],
        );
        return { entry: entryOf(row) };
      });
    } catch (error) {
      throw this.#error(error, 'createEntry');
    }
  }

  // Each write names the owner in its WHERE: another owner's entry is never touched, and looks absent.

  async replaceEntry(owner: TaskOwner, card: AgentCard, ttlMs: number): Promise<RegistryEntry | null> {
    try {
      const who = registrantOf(owner);
      const stored = storedCardOf(card);
      ttlOf(ttlMs);
      this.#open();
      const nowMs = this.#now();
      const renewal = renewalAt(nowMs, ttlMs);
      const { rows } = await this.database.query<EntryRow>(
        `UPDATE agent_registry_entries SET card = $5, skill_keys = $6, heartbeat_at = $7, expires_at = $8
         WHERE ${OWNED_LIVE} RETURNING ${COLUMNS}`,
        [
          who.tenant,
          stored.name,
          who.principal_id,
          isoAt(nowMs),
          stored.card,
          stored.skill_keys,
          renewal.heartbeat_at,
          renewal.expires_at,
        ],
      );
      return rows[0] ? entryOf(rows[0]) : null;
    } catch (error) {
      throw this.#error(error, 'replaceEntry');
    }
  }

  async heartbeatEntry(owner: TaskOwner, name: string, ttlMs: number): Promise<RegistryEntry | null> {
    try {
      const who = registrantOf(owner);
      nameOf(name);
      ttlOf(ttlMs);
      this.#open();
      const nowMs = this.#now();
      const renewal = renewalAt(nowMs, ttlMs);
      const { rows } = await this.database.query<EntryRow>(
        `UPDATE agent_registry_entries SET heartbeat_at = $5, expires_at = $6
         WHERE ${OWNED_LIVE} RETURNING ${COLUMNS}`,
        [who.tenant, name, who.principal_id, isoAt(nowMs), renewal.heartbeat_at, renewal.expires_at],
      );
      return rows[0] ? entryOf(rows[0]) : null;
    } catch (error) {
      throw this.#error(error, 'heartbeatEntry');
    }
  }

  async deleteEntry(owner: TaskOwner, name: string): Promise<RegistryEntry | null> {
    try {
      const who = registrantOf(owner);
      nameOf(name);
      this.#open();
      const { rows } = await this.database.query<EntryRow>(
        `DELETE FROM agent_registry_entries WHERE ${OWNED_LIVE} RETURNING ${COLUMNS}`,
        [who.tenant, name, who.principal_id, isoAt(this.#now())],
      );
      return rows[0] ? entryOf(rows[0]) : null;
    } catch (error) {
      throw this.#error(error, 'deleteEntry');
    }
  }

  async getEntry(tenant: string, name: string): Promise<RegistryEntry | null> {
    try {
      tenantOf(tenant);
      nameOf(name);
      this.#open();
      const { rows } = await this.database.query<EntryRow>(
        `SELECT ${COLUMNS} FROM agent_registry_entries WHERE tenant = $1 AND name = $2 AND expires_at > $3`,
        [tenant, name, isoAt(this.#now())],
      );
      return rows[0] ? entryOf(rows[0]) : null;
    } catch (error) {
      throw this.#error(error, 'getEntry');
    }
  }

  async listEntries(query: RegistryEntryQuery): Promise<RegistryPage> {
    try {
      const q = registryQueryOf(query);
      this.#open();
      const filter = new SqlFilter().equal('tenant', q.tenant);
      filter.add(`expires_at > ${filter.param(isoAt(this.#now()))}`);
      if (q.name !== undefined) filter.equal('name', q.name);
      if (q.after !== undefined) filter.add(`name > ${filter.param(q.after)}`);
      if (q.skill !== undefined) filter.add(`skill_keys @> ARRAY[${filter.param(q.skill)}::text]`);
      // The "C" collation of `name` is byte order: the order the other backends page in.
      const limit = filter.param(q.page_size + 1);
      const { rows } = await this.database.query<EntryRow>(
        `SELECT ${COLUMNS} FROM agent_registry_entries ${filter.where()} ORDER BY name LIMIT ${limit}`,
        filter.params,
      );
      return pageOf(q, rows);
    } catch (error) {
      throw this.#error(error, 'listEntries');
    }
  }

  async countEntries(): Promise<number> {
    try {
      this.#open();
      const { rows } = await this.database.query<{ live: number }>(
        'SELECT count(*)::integer AS live FROM agent_registry_entries WHERE expires_at > $1',
        [isoAt(this.#now())],
      );
      return rows[0]!.live;
    } catch (error) {
      throw this.#error(error, 'countEntries');
    }
  }

  /** Closes the database when the store opened it; a shared one stays open. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsDatabase) await this.database.close();
  }
}
