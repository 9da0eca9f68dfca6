import type { Task, TaskEvent } from '@agent/core';
import { ownerKey } from '@agent/core/internal';
import {
  InMemoryRunStore,
  type CancelRequest,
  type RunReport,
  type RunStore,
  type SaveTaskSnapshotOptions,
  type TaskCoordination,
  type TaskOwner,
  type TaskPlacement,
  type TaskWatch,
} from '@agent/events';

/**
 * What replicas share, in one process: one task store and the coordination state a database would
 * hold (claims, live replicas, cancel listeners, watchers). Each replica gets its own store object,
 * so each gets its own ledger, as separate processes would.
 */
export class SharedBackend {
  readonly store = new InMemoryRunStore();
  readonly claims = new Map<string, string>();
  readonly alive = new Set<string>();
  readonly cancelListeners = new Map<string, Set<(request: CancelRequest) => void>>();
  private readonly watchers = new Map<string, Set<() => void>>();

  replica(replicaId: string): ReplicaStore {
    this.alive.add(replicaId);
    return new ReplicaStore(this, new MemoryCoordination(this, replicaId));
  }

  changed(owner: TaskOwner, taskId: string): void {
    for (const wake of this.watchers.get(ownerKey(owner, taskId)) ?? []) wake();
  }

  watch(owner: TaskOwner, taskId: string, wake: () => void): () => void {
    const k = ownerKey(owner, taskId);
    const set = this.watchers.get(k) ?? new Set();
    set.add(wake);
    this.watchers.set(k, set);
    return () => set.delete(wake);
  }

  /** Watches open now, all tasks together: a follow that ended closed its own. */
  get openWatches(): number {
    let count = 0;
    for (const set of this.watchers.values()) count += set.size;
    return count;
  }
}

class MemoryCoordination implements TaskCoordination {
  constructor(
    private readonly backend: SharedBackend,
    readonly replicaId: string,
  ) {}

  claimTask(owner: TaskOwner, taskId: string): Promise<void> {
    this.backend.claims.set(ownerKey(owner, taskId), this.replicaId);
    return Promise.resolve();
  }

  releaseTask(owner: TaskOwner, taskId: string): Promise<void> {
    const k = ownerKey(owner, taskId);
    if (this.backend.claims.get(k) === this.replicaId) this.backend.claims.delete(k);
    return Promise.resolve();
  }

  placement(owner: TaskOwner, taskId: string): Promise<TaskPlacement> {
    const holder = this.backend.claims.get(ownerKey(owner, taskId));
    if (holder === undefined || !this.backend.alive.has(holder)) return Promise.resolve('nowhere');
    return Promise.resolve(holder === this.replicaId ? 'here' : 'elsewhere');
  }

  requestCancel(request: CancelRequest): Promise<void> {
    const holder = this.backend.claims.get(ownerKey(request.owner, request.task_id));
    if (holder !== undefined) {
      for (const listener of this.backend.cancelListeners.get(holder) ?? []) listener(request);
    }
    return Promise.resolve();
  }

  onCancelRequest(listener: (request: CancelRequest) => void): () => void {
    const set = this.backend.cancelListeners.get(this.replicaId) ?? new Set();
    set.add(listener);
    this.backend.cancelListeners.set(this.replicaId, set);
    return () => set.delete(listener);
  }

  watchTask(owner: TaskOwner, taskId: string): TaskWatch {
    let pending = false;
    let wake: (() => void) | undefined;
    const stop = this.backend.watch(owner, taskId, () => {
      pending = true;
      wake?.();
    });
    return {
      next(signal?: AbortSignal): Promise<void> {
        if (pending) {
          pending = false;
          return Promise.resolve();
        }
        return new Promise<void>((resolve, reject) => {
          const onAbort = () => reject(signal!.reason);
          if (signal?.aborted) return onAbort();
          signal?.addEventListener('abort', onAbort, { once: true });
          wake = () => {
            pending = false;
            wake = undefined;
            signal?.removeEventListener('abort', onAbort);
            resolve();
          };
        });
      },
      close: stop,
    };
  }
}

/** One replica's view of the shared store: its own object, the shared records, its coordination. */
export class ReplicaStore implements RunStore {
  constructor(
    private readonly backend: SharedBackend,
    readonly coordination: MemoryCoordination,
  ) {}

  async saveTaskSnapshot(task: Task, options?: SaveTaskSnapshotOptions): Promise<void> {
    await this.backend.store.saveTaskSnapshot(task, options);
    this.backend.changed(options?.owner ?? { tenant: '', principal_id: 'anonymous' }, task.id);
  }

  async appendTaskEvents(owner: TaskOwner, taskId: string, events: TaskEvent[]): Promise<number[]> {
    const sequences = await this.backend.store.appendTaskEvents(owner, taskId, events);
    this.backend.changed(owner, taskId);
    return sequences;
  }

  saveRunReport(report: RunReport): Promise<void> {
    return this.backend.store.saveRunReport(report);
  }

  getTaskRecord: RunStore['getTaskRecord'] = (...args) => this.backend.store.getTaskRecord(...args);
  listTaskRecords: RunStore['listTaskRecords'] = (...args) => this.backend.store.listTaskRecords(...args);
  pageTaskRecords: RunStore['pageTaskRecords'] = (...args) => this.backend.store.pageTaskRecords(...args);
  listTaskEvents: RunStore['listTaskEvents'] = (...args) => this.backend.store.listTaskEvents(...args);
  getRunReport: RunStore['getRunReport'] = (...args) => this.backend.store.getRunReport(...args);
  listRunReports: RunStore['listRunReports'] = (...args) => this.backend.store.listRunReports(...args);
  deleteBefore: RunStore['deleteBefore'] = (...args) => this.backend.store.deleteBefore(...args);

  close(): void {
    // The backend outlives its replicas.
  }
}
