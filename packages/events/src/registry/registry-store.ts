/**
 * RegistryStore: the agent registry's entries (an AgentCard per name and tenant, owned by the
 * principal that registered it, alive until `expires_at`). The registry service sits on it; the
 * backends (memory, SQLite) share one behaviour suite.
 */
import type { AgentCard } from '@agent/core';
import type { TaskOwner } from '../store/run-store.js';

/** One registered agent. Timestamps are UTC ISO 8601. */
export interface RegistryEntry {
  tenant: string;
  /** The card's `name`: unique per tenant among live entries. */
  name: string;
  /** Who registered it; only this principal (in this tenant) may replace, renew or delete it. */
  principal_id: string;
  card: AgentCard;
  registered_at: string;
  /** The last registration, replacement or heartbeat. */
  heartbeat_at: string;
  /** `heartbeat_at` plus the TTL of that call; from this instant on the entry is gone. */
  expires_at: string;
}

/** What {@link RegistryStore.createEntry} did. */
export type RegistrationResult =
  | { entry: RegistryEntry }
  /** A live entry of that (tenant, name) exists, whoever owns it. */
  | { refused: 'exists' }
  /** The store already holds `maxEntries` live entries (all tenants). */
  | { refused: 'full' };

export interface CreateEntryOptions {
  /** Milliseconds until the entry expires unless renewed: a positive integer. */
  ttlMs: number;
  /** Most live entries the store may hold, all tenants together: a positive integer. */
  maxEntries: number;
}

/** One page of {@link RegistryStore.listEntries}. */
export interface RegistryEntryQuery {
  /** Only this tenant's entries (`''` is the default tenant). */
  tenant: string;
  /** Only the entry with exactly this name. Absent or `''`: any name. */
  name?: string;
  /** Only cards with a skill whose `id` is this, or whose `tags` include it. Absent or `''`: any card. */
  skill?: string;
  /** 1..100, default 50. */
  pageSize?: number;
  /** The `next_page_token` of the previous page, with the same tenant and filters; absent or `''` for the first page. */
  pageToken?: string;
}

export interface RegistryPage {
  /** By `name` ascending (the byte order of its UTF-8 form, i.e. code point order). */
  entries: RegistryEntry[];
  /** `''` on the last page. */
  next_page_token: string;
}

/**
 * Every method is atomic and validates its input (a ValueError for bad arguments). Expired entries
 * are invisible to every method and count as absent. `null` answers cover an absent entry, an
 * expired one and another owner's alike. Entries returned are copies.
 */
export interface RegistryStore {
  /** Registers `card` under `card.name` for `owner`, unless a live entry of that name exists or the store is full. */
  createEntry(owner: TaskOwner, card: AgentCard, options: CreateEntryOptions): Promise<RegistrationResult>;
  /** Replaces the card of the owner's live entry named `card.name` and renews it for `ttlMs`. */
  replaceEntry(owner: TaskOwner, card: AgentCard, ttlMs: number): Promise<RegistryEntry | null>;
  /** Renews the owner's live entry for `ttlMs` from now. */
  heartbeatEntry(owner: TaskOwner, name: string, ttlMs: number): Promise<RegistryEntry | null>;
  /** Removes the owner's live entry and returns it. */
  deleteEntry(owner: TaskOwner, name: string): Promise<RegistryEntry | null>;
  /** A live entry of the tenant, whoever owns it. */
  getEntry(tenant: string, name: string): Promise<RegistryEntry | null>;
  /** The tenant's live entries by keyset pages, `name` ascending. */
  listEntries(query: RegistryEntryQuery): Promise<RegistryPage>;
  /** Live entries, all tenants. */
  countEntries(): Promise<number>;
  /** Releases the store; later calls reject with UnavailableError. Idempotent. */
  close(): Promise<void> | void;
}
