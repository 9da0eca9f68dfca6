// Public API of @agent/store-postgres: anything exported here is public.
export { PostgresCoordination, type CoordinationState } from './coordination/postgres-coordination.js';
export { type PostgresCoordinationOptions, type LostReplica, type LostTask } from './coordination/options.js';
