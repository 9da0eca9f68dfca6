/**
 * The argument checks every store of this package shares, with the rules (and messages) of the
 * other backends of `@agent/events`: a caller moving from SQLite to PostgreSQL meets the same
 * ValueErrors. `@agent/events` keeps its own copies internal, so these mirror them.
 */
import { DEFAULT_OWNER, type TaskOwner } from '@agent/events';
import { ValueError } from '@agent/core';
import { isRecord, numberOption } from '@agent/core/internal';

export const MAX_LIST_LIMIT = 10_000;
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;

/** Reads the `now` option shared by the stores: milliseconds since the epoch. */
export function clockOf(now: unknown, owner: string): () => number {
  if (now === undefined) return Date.now;
  if (typeof now !== 'function') throw new ValueError(`${owner} option now must be a function`);
  return now as () => number;
}

/** `taskRetentionMs`: a positive number of milliseconds, or `Infinity` for no time limit. */
export function retentionOf(value: number | undefined, fallback: number): number {
  if (value === Infinity) return value;
  return numberOption('taskRetentionMs', value, fallback, { exclusive: true });
}

/** Accepts only the two owner fields' types; extra fields are ignored (an auth context may carry more). */
export function ownerOf(owner: unknown): TaskOwner {
  if (owner === undefined || owner === null) return DEFAULT_OWNER;
  if (!isRecord(owner)) throw new ValueError('owner must be an object { tenant, principal_id }');
  if (typeof owner.tenant !== 'string')
    throw new ValueError('owner.tenant must be a string', { data: { field: 'tenant' } });
  if (typeof owner.principal_id !== 'string' || owner.principal_id === '')
    throw new ValueError('owner.principal_id must be a non-empty string', {
      data: { field: 'principal_id' },
    });
  return { tenant: owner.tenant, principal_id: owner.principal_id };
}

/** The registry's and the approvals' owners are always explicit: a real registrant, no default. */
export function registrantOf(owner: unknown): TaskOwner {
  if (owner === undefined || owner === null)
    throw new ValueError('owner must be an object { tenant, principal_id }', { data: { field: 'owner' } });
  return ownerOf(owner);
}

export function checkId(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '')
    throw new ValueError(`${name} must be a non-empty string`, { data: { field: name } });
  return value;
}

export function optionalFilter(query: Record<string, unknown>, key: string): string | undefined {
  const value = query[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new ValueError(`Query field ${key} must be a string`, { data: { field: key } });
  return value;
}

export function limitOf(value: unknown, field = 'limit', max = MAX_LIST_LIMIT): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new ValueError(`${field} must be an integer from 1 to ${max}, got ${JSON.stringify(value)}`, {
      data: { field },
    });
  }
  return value;
}

export function strip<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * A JSON round trip: what the stores keep of a value (no `undefined`, no class instances).
 * @throws ValueError when the value cannot be serialized (a cycle, a BigInt).
 */
export function jsonCopy<T>(value: unknown, what: string): T {
  try {
    return JSON.parse(JSON.stringify(value)) as T;
  } catch (error) {
    throw new ValueError(`${what} is not JSON-serializable: ${(error as Error).message}`, { cause: error });
  }
}
