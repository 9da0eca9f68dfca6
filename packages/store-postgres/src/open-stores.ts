/** Every store of the package over one database: one pool, one schema check. */
import type { ApprovalStore, RegistryStore, RunStore } from '@agent/events';
import {
  PostgresApprovalStore,
  type PostgresApprovalStoreOptions,
} from './approval-store/postgres-approval-store.js';
import { PostgresDatabase, type PostgresDatabaseOptions } from './database.js';
import { postgresError } from './errors.js';
import {
  PostgresRegistryStore,
  type PostgresRegistryStoreOptions,
} from './registry-store/postgres-registry-store.js';
import { PostgresRunStore, type PostgresRunStoreOptions } from './run-store/postgres-run-store.js';
import type { PostgresConnectionOptions } from './store-database.js';

/** What a store takes besides the connection, which the stores share. */
type StoreOnly<T> = Omit<T, keyof PostgresConnectionOptions>;

export interface PostgresStoresOptions extends PostgresDatabaseOptions {
  runStore?: StoreOnly<PostgresRunStoreOptions>;
  registryStore?: StoreOnly<PostgresRegistryStoreOptions>;
  approvalStore?: StoreOnly<PostgresApprovalStoreOptions>;
}

export interface PostgresStores {
  readonly database: PostgresDatabase;
  readonly runStore: PostgresRunStore & RunStore;
  readonly registryStore: PostgresRegistryStore & RegistryStore;
  readonly approvalStore: PostgresApprovalStore & ApprovalStore;
  /** Closes the three stores, then the database. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens the run, registry and approval stores over one PostgresDatabase, and resolves once the
 * schema is current, so a server that cannot reach its database fails at start, not on its first
 * task.
 * @throws ValueError for a bad option; UnavailableError when the database cannot be reached.
 */
export async function openPostgresStores(options: PostgresStoresOptions): Promise<PostgresStores> {
  const { runStore, registryStore, approvalStore, ...connection } = options;
  const database = new PostgresDatabase(connection);
  let stores: Omit<PostgresStores, 'close'> | undefined;
  try {
    stores = {
      database,
      runStore: new PostgresRunStore({ ...runStore, database }),
      registryStore: new PostgresRegistryStore({ ...registryStore, database }),
      approvalStore: new PostgresApprovalStore({ ...approvalStore, database }),
    };
    await database.ready();
    await stores.runStore.coordination?.start();
  } catch (error) {
    await stores?.runStore.coordination?.close();
    await database.close();
    throw postgresError(error, 'openPostgresStores', database.pool);
  }
  let closed: Promise<void> | undefined;
  const opened = stores;
  return {
    ...opened,
    close: () =>
      (closed ??= (async () => {
        await Promise.all([
          opened.runStore.close(),
          opened.registryStore.close(),
          opened.approvalStore.close(),
        ]);
        await database.close();
      })()),
  };
}
