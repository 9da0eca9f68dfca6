import { randomUUID } from 'node:crypto';
import { ValueError } from '@agent/core';
import { checkOptionNames, numberOption, optionNames } from '@agent/core/internal';
import { RedactionPolicy, type TaskOwner } from '@agent/events';

/** A replica whose lease ran out, and the tasks of it that this replica finished. */
export interface LostReplica {
  /** The lost replica's id; this replica's own id when it finds its own lease gone. */
  replica_id: string;
  /** Its unfinished tasks this replica ended `failed` with code `REPLICA_LOST` (empty for itself). */
  tasks: LostTask[];
}

export interface LostTask {
  owner: TaskOwner;
  task_id: string;
}

export interface PostgresCoordinationOptions {
  /**
   * How long a replica counts as alive after its last renewal, in ms. Once it is over, any replica
   * finishes that replica's unfinished tasks `failed` (REPLICA_LOST). Default 15 000.
   */
  leaseMs?: number;
  /** How often the lease is renewed and lost replicas are swept, in ms; below `leaseMs`. Default `leaseMs / 3`. */
  renewEveryMs?: number;
  /**
   * How often cancel requests are looked for without a notification, and how long a task watch
   * waits before it resolves anyway, in ms: the most a lost notification delays anything. Default 1000.
   */
  pollIntervalMs?: number;
  /** This process's replica id; unique per process start. Default: a random UUID. */
  replicaId?: string;
  /**
   * Told about each lost replica whose tasks this replica finished, and once about this replica
   * when it finds its own lease gone (for logs). Must not throw.
   */
  onLost?: (lost: LostReplica) => void;
  /**
   * Masking applied to the events and snapshot written when a lost replica's task is finished; use
   * the run store's policy. Default `RedactionPolicy.default()`; `null` stores raw data.
   */
  redactionPolicy?: RedactionPolicy | null;
}

export interface ResolvedCoordinationOptions {
  leaseMs: number;
  renewEveryMs: number;
  pollIntervalMs: number;
  replicaId: string;
  onLost: (lost: LostReplica) => void;
  redactionPolicy: RedactionPolicy | null;
}

const OPTION_NAMES = optionNames<PostgresCoordinationOptions>({
  leaseMs: true,
  renewEveryMs: true,
  pollIntervalMs: true,
  replicaId: true,
  onLost: true,
  redactionPolicy: true,
});

/** The longest replica id kept (it is part of the LISTEN connection's application_name too). */
const MAX_REPLICA_ID_LENGTH = 40;

export function resolveCoordinationOptions(
  options: PostgresCoordinationOptions,
): ResolvedCoordinationOptions {
  checkOptionNames('PostgresCoordination', options, OPTION_NAMES);
  const leaseMs = numberOption('leaseMs', options.leaseMs, 15_000, { min: 1, integer: true });
  const renewEveryMs = numberOption(
    'renewEveryMs',
    options.renewEveryMs,
    Math.max(1, Math.floor(leaseMs / 3)),
    {
      min: 1,
      integer: true,
    },
  );
  if (renewEveryMs >= leaseMs) {
    throw new ValueError(`renewEveryMs (${renewEveryMs}) must be below leaseMs (${leaseMs})`);
  }
  const pollIntervalMs = numberOption('pollIntervalMs', options.pollIntervalMs, 1000, {
    min: 1,
    integer: true,
  });
  const replicaId = options.replicaId ?? randomUUID();
  if (typeof replicaId !== 'string' || replicaId === '' || replicaId.length > MAX_REPLICA_ID_LENGTH) {
    throw new ValueError(`replicaId must be a string of 1 to ${MAX_REPLICA_ID_LENGTH} characters`);
  }
  if (options.onLost !== undefined && typeof options.onLost !== 'function') {
    throw new ValueError('onLost must be a function');
  }
  const redactionPolicy =
    options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
  if (redactionPolicy !== null && !(redactionPolicy instanceof RedactionPolicy)) {
    throw new ValueError('redactionPolicy must be a RedactionPolicy or null');
  }
  return {
    leaseMs,
    renewEveryMs,
    pollIntervalMs,
    replicaId,
    onLost: options.onLost ?? (() => undefined),
    redactionPolicy,
  };
}
