import { TaskAlreadyRunningError, type Task, type TaskState } from '@agent/core';
import type { TaskOwner } from '@agent/events';
import { ownerKey, ReleasingMap } from '@agent/core/internal';
import { InsertionQueue } from '@agent/events/internal';
import type { CancellationToken } from './cancellation.js';

/** A delegated child task that a parent cancel should also cancel (best effort). */
export interface Delegation {
  delegationId: string;
  target: string;
  childTaskId: string;
}

export interface ActiveTask {
  readonly taskId: string;
  /** Whose task it is: only this owner can find, cancel or collide with it. */
  readonly owner: TaskOwner;
  readonly token: CancellationToken;
  /** The live task (the runtime's own copy). */
  readonly task: Task;
  /** Resolves with the finished task; never rejects. */
  readonly done: Promise<Task>;
  /** Set once the final state is decided: from then on a cancel is refused. */
  finalState: Task['state'] | null;
  readonly delegations: Set<Delegation>;
  /** Set by the registry on `register`: the entry's key, so `complete` need not build it again. */
  registryKey?: string;
}

export interface TaskRegistryOptions {
  /** How long a finished task stays known, so a late cancel answers TaskNotCancelable instead of TaskNotFound. Default 600000 (10 min). */
  retentionMs?: number;
  /** Upper bound on remembered finished tasks; the oldest are forgotten first. Default 10000. */
  maxFinished?: number;
  /**
   * Whether a finished task itself is remembered, or only its final state. Default true. An agent
   * with a run store keeps only the state: the store has the task, and ten thousand copies of large
   * tasks (artifacts of megabytes) would take the heap.
   */
  keepTasks?: boolean;
  now?: () => number;
}

/**
 * The active-task registry: every running task by owner and id, plus a bounded, time-limited memory
 * of finished ones. No timers: expiry is checked on access, so the registry holds no handles.
 */
export class TaskRegistry {
  /** A run's whole object graph hangs off its entry: deleted, it must die young (ReleasingMap). */
  private readonly active = new ReleasingMap<string, ActiveTask>();
  /**
   * Oldest first. Not a Map: one that forgets from its front leaves a hole per forgotten entry, and
   * finding the oldest entry walks over all of them, on every finished task.
   */
  private readonly finished = new InsertionQueue<string, FinishedTask>();
  private readonly keepTasks: boolean;
  private readonly retentionMs: number;
  private readonly maxFinished: number;
  private readonly now: () => number;

  constructor(options: TaskRegistryOptions = {}) {
    this.retentionMs = options.retentionMs ?? 600_000;
    this.maxFinished = options.maxFinished ?? 10_000;
    this.now = options.now ?? Date.now;
    this.keepTasks = options.keepTasks ?? true;
  }

  /** True when a finished task itself is remembered (the `keepTasks` option), not only its state. */
  get keepsTasks(): boolean {
    return this.keepTasks;
  }

  /** Ids of the running tasks of every owner (an id appears once per owner running it). */
  get ids(): string[] {
    return [...this.active.values()].map((entry) => entry.taskId);
  }

  /** The running tasks of every owner. */
  get entries(): ActiveTask[] {
    return [...this.active.values()];
  }

  get size(): number {
    return this.active.size;
  }

  register(entry: ActiveTask): void {
    const key = ownerKey(entry.owner, entry.taskId);
    entry.registryKey = key;
    if (this.active.has(key)) {
      throw new TaskAlreadyRunningError(`Task ${entry.taskId} is already running`, {
        data: { task_id: entry.taskId },
      });
    }
    this.finished.delete(key);
    this.active.set(key, entry);
  }

  get(owner: TaskOwner, taskId: string): ActiveTask | undefined {
    return this.active.get(ownerKey(owner, taskId));
  }

  /** Removes the active entry and remembers the finished task. */
  complete(entry: ActiveTask, task: Task): void {
    const key = entry.registryKey ?? ownerKey(entry.owner, entry.taskId);
    if (this.active.get(key) === entry) this.active.delete(key);
    if (this.maxFinished <= 0 || this.retentionMs <= 0) return;
    const now = this.now();
    // Replaces an earlier entry of the same key and moves it to the end.
    this.finished.set(key, { task: this.keepTasks ? task : undefined, state: task.state, at: now });
    this.prune(now);
  }

  /** A recently finished task of this owner, or undefined when never seen, forgotten or not kept. */
  finishedTask(owner: TaskOwner, taskId: string): Task | undefined {
    this.prune();
    return this.finished.get(ownerKey(owner, taskId))?.task;
  }

  /** How a recently finished task of this owner ended, or undefined when never seen or forgotten. */
  finishedState(owner: TaskOwner, taskId: string): TaskState | undefined {
    this.prune();
    return this.finished.get(ownerKey(owner, taskId))?.state;
  }

  private prune(now = this.now()): void {
    const cutoff = now - this.retentionMs;
    for (let oldest = this.finished.first(); oldest; oldest = this.finished.first()) {
      if (this.finished.size <= this.maxFinished && oldest.value.at >= cutoff) break;
      this.finished.delete(oldest.key);
    }
  }
}

interface FinishedTask {
  task: Task | undefined;
  state: TaskState;
  at: number;
}
