/**
 * The registry's wire: its routes as client operations (the table a RegistryClient sends through
 * `transport.send`) and the limits both sides apply.
 */
import type { ClientRequestSpec } from '@agent/core';

/** Where the registry's routes live below the transport URL. */
export const REGISTRY_PATH = '/registry/agents';

/** The registry's operations; `{name}` is filled from `params.name` or the payload's `name`. */
export const REGISTRY_OPERATIONS = {
  register: { name: 'register', method: 'POST', path: REGISTRY_PATH },
  replace: { name: 'replace', method: 'PUT', path: `${REGISTRY_PATH}/{name}` },
  heartbeat: { name: 'heartbeat', method: 'POST', path: `${REGISTRY_PATH}/{name}/heartbeat` },
  deregister: { name: 'deregister', method: 'DELETE', path: `${REGISTRY_PATH}/{name}` },
  get_agent: { name: 'get_agent', method: 'GET', path: `${REGISTRY_PATH}/{name}` },
  list_agents: { name: 'list_agents', method: 'GET', path: REGISTRY_PATH },
} as const satisfies Record<string, ClientRequestSpec>;

export type RegistryOperationName = keyof typeof REGISTRY_OPERATIONS;

/** How long an entry lives after its last register, replace or heartbeat, in ms. */
export const DEFAULT_TTL_MS = 30_000;
/** How many live entries (all tenants together) a registry holds. */
export const DEFAULT_MAX_ENTRIES = 10_000;
/** The most entries one `list_agents` page holds. */
export const MAX_PAGE_SIZE = 100;
/** The page size of a `list_agents` call that names none. */
export const DEFAULT_PAGE_SIZE = 50;
