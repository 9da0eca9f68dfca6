import { ValueError, type JsonObject } from '@agent/core';

/** What `tenants` options map: a key or user to the tenants it may act for. */
export type TenantLists = Record<string, string[]>;

export function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((entry) => typeof entry === 'string');
}

/**
 * Checks a `tenants` option. `mapped` names what it maps (`keys`, `usernames`); `entryName` names one
 * entry in an error: an API key is a secret and is never quoted.
 */
export function checkTenantLists(
  owner: string,
  tenants: unknown,
  mapped: string,
  entryName: (key: string) => string,
): TenantLists | undefined {
  if (tenants === undefined) return undefined;
  if (typeof tenants !== 'object' || tenants === null || Array.isArray(tenants)) {
    throw new ValueError(`${owner}: tenants must be an object mapping ${mapped} to tenant lists`);
  }
  for (const key of Object.keys(tenants)) {
    if (!isStringList((tenants as Record<string, unknown>)[key])) {
      throw new ValueError(`${owner}: tenants of ${entryName(key)} must be an array of strings`);
    }
  }
  return tenants as TenantLists;
}

/**
 * The `metadata` a context carries for `key`: `{tenants: [...]}` when the option restricts it, `{}`
 * otherwise. Own keys only, so `__proto__` or `toString` never find Object.prototype; an entry
 * changed since construction into something other than a list allows nothing rather than anything.
 */
export function tenantMetadata(tenants: TenantLists | undefined, key: string): JsonObject {
  if (!tenants || !Object.prototype.hasOwnProperty.call(tenants, key)) return {};
  const list: unknown = tenants[key];
  return { tenants: isStringList(list) ? [...list] : [] };
}
