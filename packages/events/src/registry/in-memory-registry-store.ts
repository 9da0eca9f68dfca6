/**
 * A RegistryStore in process memory: for tests and single-process registries whose entries need
 * not survive a restart (agents re-register after one anyway). Bounded by `maxEntries` per call.
 */
import { UnavailableError, type AgentCard } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { clockOf } from '../store/records.js';
import type { TaskOwner } from '../store/run-store.js';
import {
  compareNames,
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
  type StoredEntry,
} from './entries.js';
import type {
  CreateEntryOptions,
  RegistrationResult,
  RegistryEntry,
  RegistryEntryQuery,
  RegistryPage,
  RegistryStore,
} from './registry-store.js';

export interface InMemoryRegistryStoreOptions {
  /** The clock that stamps entries and decides expiry, in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
}

const OPTION_NAMES = optionNames<InMemoryRegistryStoreOptions>({ now: true });

function keyOf(tenant: string, name: string): string {
  return JSON.stringify([tenant, name]);
}

/** The index in sorted `names` where `name` is or would go. */
function searchNames(names: readonly string[], name: string): number {
  let low = 0;
  let high = names.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareNames(names[middle]!, name) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

export class InMemoryRegistryStore implements RegistryStore {
  /**
   * Every entry, in renewal order: a renewed entry is re-inserted at the end. With one TTL and a
   * clock that only moves forward that is expiry order, so the sweep takes expired entries from
   * the front; otherwise the map is sorted by expiry once before the sweep.
   */
  readonly #entries = new Map<string, StoredEntry>();
  #inExpiryOrder = true;
  #lastExpiry = '';
  /** Each tenant's names in byte order, for keyset pages without sorting. */
  readonly #names = new Map<string, string[]>();
  readonly #now: () => number;
  #closed = false;

  constructor(options: InMemoryRegistryStoreOptions = {}) {
    checkOptionNames('InMemoryRegistryStore', options, OPTION_NAMES);
    this.#now = clockOf(options.now, 'InMemoryRegistryStore');
  }

  /** Rejects after close, and drops expired entries so that no call can see one. Returns the time of the call. */
  #begin(): number {
    if (this.#closed) throw new UnavailableError('The registry store is closed');
    const now = this.#now();
    this.#sweep(isoAt(now));
    return now;
  }

  #sweep(now: string): void {
    if (!this.#inExpiryOrder) {
      // Stable: entries expiring at the same instant keep their renewal order.
      const sorted = [...this.#entries].sort(([, a], [, b]) =>
        a.expires_at < b.expires_at ? -1 : a.expires_at > b.expires_at ? 1 : 0,
      );
      this.#entries.clear();
      for (const [key, entry] of sorted) this.#entries.set(key, entry);
      this.#inExpiryOrder = true;
      this.#lastExpiry = sorted.length === 0 ? '' : sorted[sorted.length - 1]![1].expires_at;
    }
    for (const entry of this.#entries.values()) {
      if (entry.expires_at > now) break;
      this.#remove(entry);
    }
    if (this.#entries.size === 0) this.#lastExpiry = '';
  }

  /** Adds or re-adds an entry at the end of the renewal order. */
  #put(entry: StoredEntry): void {
    const key = keyOf(entry.tenant, entry.name);
    const known = this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (entry.expires_at < this.#lastExpiry) this.#inExpiryOrder = false;
    else this.#lastExpiry = entry.expires_at;
    if (known) return;
    let names = this.#names.get(entry.tenant);
    if (!names) {
      names = [];
      this.#names.set(entry.tenant, names);
    }
    names.splice(searchNames(names, entry.name), 0, entry.name);
  }

  #remove(entry: StoredEntry): void {
    this.#entries.delete(keyOf(entry.tenant, entry.name));
    const names = this.#names.get(entry.tenant)!;
    names.splice(searchNames(names, entry.name), 1);
    if (names.length === 0) this.#names.delete(entry.tenant);
  }

  /** The owner's entry of that name; the caller has swept, so it is live. */
  #owned(owner: TaskOwner, name: string): StoredEntry | undefined {
    const entry = this.#entries.get(keyOf(owner.tenant, name));
    return entry && entry.principal_id === owner.principal_id ? entry : undefined;
  }

  async createEntry(
    owner: TaskOwner,
    card: AgentCard,
    options: CreateEntryOptions,
  ): Promise<RegistrationResult> {
    const who = registrantOf(owner);
    const stored = storedCardOf(card);
    const { ttlMs, maxEntries } = createOptionsOf(options);
    const now = this.#begin();
    if (this.#entries.has(keyOf(who.tenant, stored.name))) return { refused: 'exists' };
    if (this.#entries.size >= maxEntries) return { refused: 'full' };
    const renewal = renewalAt(now, ttlMs);
    const entry: StoredEntry = {
      tenant: who.tenant,
      principal_id: who.principal_id,
      ...stored,
      registered_at: renewal.heartbeat_at,
      ...renewal,
    };
    this.#put(entry);
    return { entry: entryOf(entry) };
  }

  async replaceEntry(owner: TaskOwner, card: AgentCard, ttlMs: number): Promise<RegistryEntry | null> {
    const who = registrantOf(owner);
    const stored = storedCardOf(card);
    ttlOf(ttlMs);
    const now = this.#begin();
    const current = this.#owned(who, stored.name);
    if (!current) return null;
    const entry: StoredEntry = { ...current, ...stored, ...renewalAt(now, ttlMs) };
    this.#put(entry);
    return entryOf(entry);
  }

  async heartbeatEntry(owner: TaskOwner, name: string, ttlMs: number): Promise<RegistryEntry | null> {
    const who = registrantOf(owner);
    nameOf(name);
    ttlOf(ttlMs);
    const now = this.#begin();
    const current = this.#owned(who, name);
    if (!current) return null;
    const entry: StoredEntry = { ...current, ...renewalAt(now, ttlMs) };
    this.#put(entry);
    return entryOf(entry);
  }

  async deleteEntry(owner: TaskOwner, name: string): Promise<RegistryEntry | null> {
    const who = registrantOf(owner);
    nameOf(name);
    this.#begin();
    const current = this.#owned(who, name);
    if (!current) return null;
    this.#remove(current);
    return entryOf(current);
  }

  async getEntry(tenant: string, name: string): Promise<RegistryEntry | null> {
    tenantOf(tenant);
    nameOf(name);
    this.#begin();
    const entry = this.#entries.get(keyOf(tenant, name));
    return entry ? entryOf(entry) : null;
  }

  async listEntries(query: RegistryEntryQuery): Promise<RegistryPage> {
    const q = registryQueryOf(query);
    this.#begin();
    const names = q.name !== undefined ? [q.name] : (this.#names.get(q.tenant) ?? []);
    const rows: StoredEntry[] = [];
    // One row more than the page tells whether another page exists.
    for (let i = q.after === undefined ? 0 : searchNames(names, q.after); i < names.length; i += 1) {
      const name = names[i]!;
      if (q.after !== undefined && compareNames(name, q.after) <= 0) continue;
      const entry = this.#entries.get(keyOf(q.tenant, name));
      if (!entry || (q.skill !== undefined && !entry.skill_keys.includes(q.skill))) continue;
      rows.push(entry);
      if (rows.length > q.page_size) break;
    }
    return pageOf(q, rows);
  }

  async countEntries(): Promise<number> {
    this.#begin();
    return this.#entries.size;
  }

  close(): void {
    this.#closed = true;
    this.#entries.clear();
    this.#names.clear();
  }
}
