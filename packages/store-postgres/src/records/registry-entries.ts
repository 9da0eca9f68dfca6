/**
 * Registry store arguments and entries, by the rules of the other backends of `@agent/events`
 * (the shared suite holds every backend to them).
 */
import { ValueError, type AgentCard } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import type { CreateEntryOptions, RegistryEntry, RegistryEntryQuery } from '@agent/events';
import { checkId, DEFAULT_PAGE_SIZE, jsonCopy, limitOf, MAX_PAGE_SIZE, optionalFilter } from './arguments.js';
import { decodePageToken, encodePageToken, queryFingerprint } from './page-token.js';

/** An entry's row: the card as JSON text, parsed afresh for every answer. */
export interface EntryRow {
  tenant: string;
  name: string;
  principal_id: string;
  card: string;
  registered_at: string;
  heartbeat_at: string;
  expires_at: string;
}

/** The last instant an ISO 8601 string with a four-digit year can name, so stored times compare as text. */
const MAX_TIME_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** A lone surrogate: it would be stored as U+FFFD, so the name read back would differ. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

export function tenantOf(tenant: unknown): string {
  if (typeof tenant !== 'string')
    throw new ValueError('tenant must be a string', { data: { field: 'tenant' } });
  return tenant;
}

export function nameOf(name: unknown, field = 'name'): string {
  const checked = checkId(name, field);
  if (LONE_SURROGATE.test(checked))
    throw new ValueError(`${field} must be well-formed Unicode (it has a lone surrogate)`, {
      data: { field },
    });
  return checked;
}

export function ttlOf(ttlMs: unknown): number {
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs < 1)
    throw new ValueError(`ttlMs must be a positive integer, got ${String(ttlMs)}`, {
      data: { field: 'ttlMs' },
    });
  return ttlMs;
}

const CREATE_OPTION_NAMES = optionNames<CreateEntryOptions>({ ttlMs: true, maxEntries: true });

export function createOptionsOf(options: unknown): CreateEntryOptions {
  if (!isRecord(options))
    throw new ValueError('createEntry needs options { ttlMs, maxEntries }', { data: { field: 'options' } });
  checkOptionNames('createEntry', options, CREATE_OPTION_NAMES);
  const maxEntries = options.maxEntries;
  if (typeof maxEntries !== 'number' || !Number.isSafeInteger(maxEntries) || maxEntries < 1)
    throw new ValueError(`maxEntries must be a positive integer, got ${String(maxEntries)}`, {
      data: { field: 'maxEntries' },
    });
  return { ttlMs: ttlOf(options.ttlMs), maxEntries };
}

/** The instant `now()` names, as stored text. */
export function isoAt(ms: number): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_TIME_MS)
    throw new ValueError(`The store's clock gave ${String(ms)}, not a time from year 1970 to 9999`);
  return new Date(ms).toISOString();
}

/** `heartbeat_at` and `expires_at` of a registration or renewal made at `nowMs`. */
export function renewalAt(nowMs: number, ttlMs: number): { heartbeat_at: string; expires_at: string } {
  const heartbeatAt = isoAt(nowMs);
  if (nowMs + ttlMs > MAX_TIME_MS)
    throw new ValueError(`ttlMs ${ttlMs} puts the expiry after year 9999`, { data: { field: 'ttlMs' } });
  return { heartbeat_at: heartbeatAt, expires_at: new Date(nowMs + ttlMs).toISOString() };
}

/** The skill ids and tags a `skill` filter matches; anything not shaped like a skill is ignored. */
function skillKeysOf(card: Record<string, unknown>): string[] {
  const keys = new Set<string>();
  if (!Array.isArray(card.skills)) return [];
  for (const skill of card.skills as unknown[]) {
    if (!isRecord(skill)) continue;
    if (typeof skill.id === 'string') keys.add(skill.id);
    if (!Array.isArray(skill.tags)) continue;
    for (const tag of skill.tags as unknown[]) if (typeof tag === 'string') keys.add(tag);
  }
  return [...keys];
}

/**
 * What the store keeps of a card: its name, its JSON text and its skill keys. The card is not
 * validated as an AgentCard here (the registry does that); the store needs an object with a name.
 */
export function storedCardOf(card: unknown): { name: string; card: string; skill_keys: string[] } {
  if (!isRecord(card)) throw new ValueError('card must be an AgentCard object', { data: { field: 'card' } });
  const name = nameOf(card.name, 'card.name');
  const copy = jsonCopy<Record<string, unknown>>(card, 'AgentCard');
  return { name, card: JSON.stringify(copy), skill_keys: skillKeysOf(copy) };
}

/** The public form of a stored entry: a fresh object every time. */
export function entryOf(row: EntryRow): RegistryEntry {
  return {
    tenant: row.tenant,
    name: row.name,
    principal_id: row.principal_id,
    card: JSON.parse(row.card) as AgentCard,
    registered_at: row.registered_at,
    heartbeat_at: row.heartbeat_at,
    expires_at: row.expires_at,
  };
}

const QUERY_NAMES = optionNames<RegistryEntryQuery>({
  tenant: true,
  name: true,
  skill: true,
  pageSize: true,
  pageToken: true,
});

export interface NormalizedRegistryQuery {
  tenant: string;
  name?: string;
  skill?: string;
  page_size: number;
  /** The page starts after this name. */
  after?: string;
  /** What the page's token is bound to. */
  fingerprint: string;
}

/** `''` is no filter, as `''` is no page token: an empty query parameter means "not given". */
function filterOf(query: Record<string, unknown>, key: string): string | undefined {
  const value = optionalFilter(query, key);
  return value === '' ? undefined : value;
}

/** @throws ValueError for a bad field, an unknown one, or a token of another tenant or filter. */
export function registryQueryOf(query: unknown): NormalizedRegistryQuery {
  if (!isRecord(query)) throw new ValueError('listEntries needs a query { tenant, ... }');
  checkOptionNames('listEntries', query, QUERY_NAMES);
  const tenant = tenantOf(query.tenant);
  const name = filterOf(query, 'name');
  const skill = filterOf(query, 'skill');
  // The kind tag keeps a task page token from ever decoding as a registry one.
  const fingerprint = queryFingerprint(['registry', tenant, name ?? null, skill ?? null]);
  const token = optionalFilter(query, 'pageToken');
  const normalized: NormalizedRegistryQuery = {
    tenant,
    page_size: limitOf(query.pageSize, 'pageSize', MAX_PAGE_SIZE) ?? DEFAULT_PAGE_SIZE,
    fingerprint,
  };
  if (name !== undefined) normalized.name = name;
  if (skill !== undefined) normalized.skill = skill;
  if (token !== undefined && token !== '') normalized.after = decodePageToken(token, fingerprint, 1)[0];
  return normalized;
}

/** The page of `rows` (up to one more than the page size, in order) and the token of the next one. */
export function pageOf(
  query: NormalizedRegistryQuery,
  rows: readonly EntryRow[],
): { entries: RegistryEntry[]; next_page_token: string } {
  const page = rows.slice(0, query.page_size);
  const more = rows.length > query.page_size;
  return {
    entries: page.map(entryOf),
    next_page_token: more ? encodePageToken(query.fingerprint, [page[page.length - 1]!.name]) : '',
  };
}
