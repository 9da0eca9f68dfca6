/**
 * TaskCoordination: what a RunStore shared by several processes (replicas) adds so that each one
 * sees and reaches the tasks the others are running. A store without it serves one process.
 *
 * Signals may be lost (a dropped connection, a notification nobody was listening for): every one of
 * them is backed by the store's tables and a poll, so a lost signal delays, never loses.
 */
import type { TaskOwner } from './run-store.js';

/** A request to cancel a task, sent to whichever replica runs it. */
export interface CancelRequest {
  owner: TaskOwner;
  task_id: string;
  reason?: string;
}

/** Where a task's run is: on this replica, on another live one, or nowhere. */
export type TaskPlacement = 'here' | 'elsewhere' | 'nowhere';

/** Changes of one task, as any replica records them. */
export interface TaskWatch {
  /**
   * Resolves at the first change after the previous `next()` (or after the watch opened, for the
   * first): a change that came in between resolves at once. Also resolves after the store's poll
   * interval without a signal, so the caller reads again in any case. Rejects with the signal's
   * reason when it aborts first.
   */
  next(signal?: AbortSignal): Promise<void>;
  /** Stops watching. Idempotent. */
  close(): void;
}

export interface TaskCoordination {
  /** This process's replica id: unique per process start. */
  readonly replicaId: string;
  /**
   * Marks the owner's task as running on this replica, covered by its lease until `releaseTask`.
   * Called before the task's first snapshot is saved.
   */
  claimTask(owner: TaskOwner, taskId: string): Promise<void>;
  /** The task's run is over here (its final snapshot is stored). */
  releaseTask(owner: TaskOwner, taskId: string): Promise<void>;
  /** Where the owner's task runs now. A claim whose replica's lease expired is `nowhere`. */
  placement(owner: TaskOwner, taskId: string): Promise<TaskPlacement>;
  /**
   * Asks the replica running the task to cancel it. Durable: a replica that misses the signal finds
   * the request when it polls. Resolves once the request is stored.
   */
  requestCancel(request: CancelRequest): Promise<void>;
  /**
   * Receives every cancel request for a task claimed by this replica, once each. Returns the
   * function that stops listening.
   */
  onCancelRequest(listener: (request: CancelRequest) => void): () => void;
  /** Watches one task's log and record for changes recorded by any replica. */
  watchTask(owner: TaskOwner, taskId: string): TaskWatch;
}

/** A RunStore that is shared by replicas carries its coordination. */
export interface CoordinatedStore {
  readonly coordination: TaskCoordination;
}

/** The store's coordination, when it is shared by several processes. */
export function coordinationOf(store: object): TaskCoordination | undefined {
  const coordination = (store as Partial<CoordinatedStore>).coordination;
  return typeof coordination === 'object' && coordination !== null ? coordination : undefined;
}
