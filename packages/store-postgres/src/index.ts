// Public API of @agent/store-postgres: anything exported here is public.
export { PostgresCoordination, type CoordinationState } from './coordination/postgres-coordination.js';
export { type PostgresCoordinationOptions, type LostReplica, type LostTask } from './coordination/options.js';
export { PostgresDatabase, type PostgresDatabaseOptions } from './database.js';
export { type PostgresConnectionOptions } from './store-database.js';
export { PostgresRunStore, type PostgresRunStoreOptions } from './run-store/postgres-run-store.js';
export {
  PostgresRegistryStore,
  type PostgresRegistryStoreOptions,
} from './registry-store/postgres-registry-store.js';
export {
  PostgresApprovalStore,
  DEFAULT_APPROVAL_POLL_INTERVAL_MS,
  type PostgresApprovalStoreOptions,
} from './approval-store/postgres-approval-store.js';
export { openPostgresStores, type PostgresStores, type PostgresStoresOptions } from './open-stores.js';
export { POSTGRES_SCHEMA_VERSION } from './schema/migrations.js';
