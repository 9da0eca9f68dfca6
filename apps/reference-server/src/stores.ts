/**
 * Where the reference server keeps what it records: tasks and their events (every transport reads
 * them back), approval requests waiting for a reviewer, and the registry's entries. One spec names
 * the backend for all of them: `memory`, `sqlite:<path>` (one file), or `postgres://…` (one
 * database, shared by every replica started on it).
 */
import { randomUUID } from 'node:crypto';
import { ProcessRestartedError, ValueError } from '@agent/core';
import {
  InMemoryApprovalStore,
  InMemoryRegistryStore,
  InMemoryRunStore,
  SqliteApprovalStore,
  SqliteRegistryStore,
  SqliteRunStore,
  type ApprovalStore,
  type RegistryStore,
  type RunStore,
} from '@agent/events';
import { openPostgresStores, type LostReplica } from '@agent/store-postgres';
import { isPostgresStore, type PostgresConfig, type RunStoreLimits } from './config.js';

/**
 * What the memory store keeps by default: a quarter of the library's default, so that what it retains
 * and what the running tasks hold stay within the server's documented memory bound together.
 */
export const MEMORY_STORE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The run store `spec` (`memory` or `sqlite:<path>`) names, within `limits`. The server pipeline
 * records every task the agent serves there, so it is also what get, list, subscribe and a
 * resubmitted id read back. A PostgreSQL store is opened with {@link openStores}.
 */
export function createRunStore(spec: string, limits: RunStoreLimits = {}): RunStore {
  if (isPostgresStore(spec)) throw new ValueError('A PostgreSQL store is opened with openStores');
  if (spec === 'memory') return new InMemoryRunStore({ maxBytes: MEMORY_STORE_MAX_BYTES, ...limits });
  if (limits.maxTasks !== undefined || limits.maxBytes !== undefined)
    throw new ValueError('maxTasks and maxBytes bound the memory run store only');
  return new SqliteRunStore({ path: spec.slice('sqlite:'.length), ...retentionOf(limits) });
}

/**
 * Where the registry this server serves keeps its entries: beside the tasks, so `sqlite:<path>`
 * puts them in the same file (they then outlive a restart until their TTL runs out).
 */
export function createRegistryStore(spec: string): RegistryStore {
  if (isPostgresStore(spec)) throw new ValueError('A PostgreSQL store is opened with openStores');
  if (spec === 'memory') return new InMemoryRegistryStore();
  return new SqliteRegistryStore({ path: spec.slice('sqlite:'.length) });
}

/**
 * Where the demo agent's runs wait for a reviewer (`approvals: store`): beside the tasks, so
 * `sqlite:<path>` puts the requests in the same file, where every process opening it can decide them.
 */
export function createApprovalStore(spec: string): ApprovalStore {
  if (isPostgresStore(spec)) throw new ValueError('A PostgreSQL store is opened with openStores');
  if (spec === 'memory') return new InMemoryApprovalStore();
  return new SqliteApprovalStore({ path: spec.slice('sqlite:'.length) });
}

export interface ServerStores {
  readonly runStore: RunStore;
  /** Present when asked for (`registry: true`). */
  readonly registryStore: RegistryStore | undefined;
  /** Present when asked for (`approvals: true`). */
  readonly approvalStore: ApprovalStore | undefined;
  /**
   * Resolves if this replica finds its own lease gone (PostgreSQL only): other replicas have
   * finished its tasks, so it must stop. Never resolves otherwise.
   */
  readonly lost: Promise<void>;
  /** Closes what was opened, the run store last. Idempotent. */
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  spec: string;
  limits?: RunStoreLimits;
  postgres?: PostgresConfig;
  registry?: boolean;
  approvals?: boolean;
  /** Told how many tasks a previous process left running were finished `failed` (PROCESS_RESTARTED). */
  onInterrupted?: (count: number) => void;
  /** Told about each lost replica whose tasks this one finished, for the log. */
  onLostReplica?: (lost: LostReplica) => void;
}

/** Opens the stores `spec` names; with PostgreSQL, connects and brings the schema up to date first. */
export async function openStores(options: OpenStoresOptions): Promise<ServerStores> {
  const { spec, limits = {} } = options;
  if (isPostgresStore(spec)) return openPostgres(options);
  const runStore = createRunStore(spec, limits);
  try {
    // A file outlives its process: what the last one left running is finished before anything runs.
    const finished = await runStore.finishInterruptedTasks?.(
      new ProcessRestartedError('The process running the task stopped before it finished'),
    );
    if (finished && finished.length > 0) options.onInterrupted?.(finished.length);
  } catch (error) {
    await runStore.close();
    throw error;
  }
  let registryStore: RegistryStore | undefined;
  let approvalStore: ApprovalStore | undefined;
  const close = async (): Promise<void> => {
    await registryStore?.close();
    await approvalStore?.close();
    await runStore.close();
  };
  try {
    if (options.approvals) approvalStore = createApprovalStore(spec);
    if (options.registry) registryStore = createRegistryStore(spec);
  } catch (error) {
    await close();
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    runStore,
    registryStore,
    approvalStore,
    lost: new Promise<void>(() => undefined),
    close: () => (closed ??= close()),
  };
}

async function openPostgres(options: OpenStoresOptions): Promise<ServerStores> {
  const { limits = {}, postgres = {} } = options;
  if (limits.maxTasks !== undefined || limits.maxBytes !== undefined)
    throw new ValueError('maxTasks and maxBytes bound the memory run store only');
  let markLost!: () => void;
  const lost = new Promise<void>((resolve) => (markLost = resolve));
  const replicaId = randomUUID();
  const stores = await openPostgresStores({
    connectionString: options.spec,
    ...(postgres.poolMax === undefined ? {} : { poolOptions: { max: postgres.poolMax } }),
    ...(postgres.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: postgres.statementTimeoutMs }),
    ...(postgres.preparedStatements === undefined ? {} : { preparedStatements: postgres.preparedStatements }),
    runStore: {
      ...retentionOf(limits),
      coordination: {
        replicaId,
        ...(postgres.leaseMs === undefined ? {} : { leaseMs: postgres.leaseMs }),
        onLost: (report) => {
          if (report.replica_id === replicaId) markLost();
          else options.onLostReplica?.(report);
        },
      },
    },
  });
  return {
    runStore: stores.runStore,
    registryStore: options.registry ? stores.registryStore : undefined,
    approvalStore: options.approvals ? stores.approvalStore : undefined,
    lost,
    close: () => stores.close(),
  };
}

function retentionOf(limits: RunStoreLimits): { taskRetentionMs?: number } {
  return limits.taskRetentionMs === undefined ? {} : { taskRetentionMs: limits.taskRetentionMs };
}
