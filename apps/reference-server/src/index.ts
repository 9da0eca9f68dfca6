// The reference server as a library, for tests and for the conformance app's in-process mode.
export {
  loadConfig,
  parseConfigFile,
  parseBasicUsers,
  parseTenantLists,
  DEFAULT_CONFIG,
  type ServerConfig,
  type AuthMode,
  type RunStoreLimits,
  type RegistryConfig,
  type PostgresConfig,
} from './config.js';
export {
  startReferenceServer,
  createAuthenticator,
  createRunStore,
  createRegistryStore,
  createApprovalStore,
  type ReferenceServer,
  type StartOptions,
  type ReferenceServerUrls,
} from './server.js';
export {
  createDemoAgent,
  createDemoCard,
  executeDemoCommand,
  DemoCounters,
  DEMO_FILES,
  MAX_COUNTERS,
  MAX_COUNTER_NAME,
  MAX_SLEEP_MS,
  MAX_STREAM_CHUNKS,
} from './demo-agent.js';
export { createDemoHandler } from './demo-handler.js';
export { MEMORY_STORE_MAX_BYTES, openStores, type ServerStores, type OpenStoresOptions } from './stores.js';
