import { TaskAlreadyRunningError, type Task } from '@agent/core';
import type { CancellationToken } from './cancellation.js';

/** A delegated child task that a parent cancel should also cancel (best effort). */
export interface Delegation {
  delegationId: string;
  target: string;
  childTaskId: string;
}

export interface ActiveTask {
  readonly taskId: string;
  readonly token: CancellationToken;
  /** The live task (the runtime's own copy). */
  readonly task: Task;
  /** Resolves with the finished task; never rejects. */
  readonly done: Promise<Task>;
  /** Set once the final state is decided: from then on a cancel is refused. */
  finalState: Task['state'] | null;
  readonly delegations: Set<Delegation>;
}

export interface TaskRegistryOptions {
  /** How long a finished task stays known, so a late cancel answers TaskNotCancelable instead of TaskNotFound. Default 600000 (10 min). */
  retentionMs?: number;
  /** Upper bound on remembered finished tasks; the oldest are forgotten first. Default 10000. */
  maxFinished?: number;
  now?: () => number;
}

/**
 * The active-task registry: every running task by id, plus a bounded, time-limited memory of
 * finished ones. No timers: expiry is checked on access, so the registry holds no handles.
 */
export class TaskRegistry {
  private readonly active = new Map<string, ActiveTask>();
  private readonly finished = new Map<string, { task: Task; at: number }>();
  private readonly retentionMs: number;
  private readonly maxFinished: number;
  private readonly now: () => number;

  constructor(options: TaskRegistryOptions = {}) {
    this.retentionMs = options.retentionMs ?? 600_000;
    this.maxFinished = options.maxFinished ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  get ids(): string[] {
    return [...this.active.keys()];
  }

  get size(): number {
    return this.active.size;
  }

  register(entry: ActiveTask): void {
    if (this.active.has(entry.taskId)) {
      throw new TaskAlreadyRunningError(`Task ${entry.taskId} is already running`, {
        data: { task_id: entry.taskId },
      });
    }
    this.finished.delete(entry.taskId);
    this.active.set(entry.taskId, entry);
  }

  get(taskId: string): ActiveTask | undefined {
    return this.active.get(taskId);
  }

  /** Removes the active entry and remembers the finished task. */
  complete(taskId: string, task: Task): void {
    this.active.delete(taskId);
    if (this.maxFinished <= 0 || this.retentionMs <= 0) return;
    this.finished.delete(taskId);
    this.finished.set(taskId, { task, at: this.now() });
    this.prune();
  }

  /** A recently finished task, or undefined when never seen or forgotten. */
  finishedTask(taskId: string): Task | undefined {
    this.prune();
    return this.finished.get(taskId)?.task;
  }

  private prune(): void {
    const cutoff = this.now() - this.retentionMs;
    // Map iteration is insertion order, so the oldest entries come first.
    for (const [id, entry] of this.finished) {
      if (this.finished.size > this.maxFinished || entry.at < cutoff) this.finished.delete(id);
      else break;
    }
  }
}
