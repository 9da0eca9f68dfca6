// Public API of @agent/registry: anything exported here is public.
export { Registry, type RegistryOptions } from './registry.js';
export {
  RegistryClient,
  type RegistryClientOptions,
  type RegistryCallOptions,
  type ListAgentsOptions,
  type FindAgentsQuery,
} from './registry-client.js';
export { RegistryMembership, DEFAULT_HEARTBEAT_MS, type RegistryMembershipOptions } from './membership.js';
export { clientFor, type ClientForOptions } from './client-for.js';
export { type RegistryEntryView, type RegistryEntryPage } from './entry-view.js';
export {
  REGISTRY_OPERATIONS,
  REGISTRY_PATH,
  DEFAULT_TTL_MS,
  DEFAULT_MAX_ENTRIES,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  type RegistryOperationName,
} from './operations.js';
// The stores a Registry keeps its entries in, from @agent/events, so a server needs one import.
export {
  InMemoryRegistryStore,
  SqliteRegistryStore,
  type RegistryStore,
  type RegistryEntry,
} from '@agent/events';
