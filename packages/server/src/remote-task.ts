import { isFinalEvent, type Task, type TaskEvent } from '@agent/core';
import { sequencedEvents } from './sequenced-events.js';
import type { RunStore, TaskCoordination, TaskOwner, TaskWatch } from '@agent/events';

/** A run is going on somewhere while its record says so; every other state waits for nobody. */
export function isRunningState(state: string): boolean {
  return state === 'submitted' || state === 'working';
}

/**
 * A task that runs on another replica, followed through the shared store: its logged events after a
 * sequence, then each batch another replica records (woken by the store's watch, which also polls,
 * so a lost signal only delays). Ends after a final status that is the last event logged so far; a
 * replica that is lost has its task finished by another, which logs that final status too.
 */
export class RemoteFollow {
  private readonly stop = new AbortController();
  private readonly watch: TaskWatch;
  private batch: TaskEvent[] = [];
  private last: number;
  private ended = false;

  constructor(
    private readonly store: RunStore,
    coordination: TaskCoordination,
    private readonly owner: TaskOwner,
    private readonly taskId: string,
    after: number,
  ) {
    // Opened before the first read, so a change between that read and the first wait is not lost.
    this.watch = coordination.watchTask(owner, taskId);
    this.last = after;
  }

  /**
   * The next event, with `last` when nothing was logged after it yet; `null` once closed. Rejects
   * when the store fails.
   */
  async next(): Promise<{ event: TaskEvent; last: boolean } | null> {
    for (;;) {
      if (this.ended) return null;
      const event = this.batch.shift();
      if (event !== undefined) {
        const last = this.batch.length === 0;
        if (last && isFinalEvent(event)) this.close();
        return { event, last };
      }
      const rows = await this.store.listTaskEvents(this.owner, this.taskId, { after: this.last });
      if (rows.length > 0) {
        this.batch = sequencedEvents(rows);
        this.last = rows[rows.length - 1]!.sequence;
        continue;
      }
      try {
        await this.watch.next(this.stop.signal);
      } catch (error) {
        if (this.stop.signal.aborted) return null;
        throw error;
      }
    }
  }

  /** Stops following (the caller detached or the run ended). Idempotent. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.stop.abort();
    this.watch.close();
  }
}

/**
 * Waits until the owner's task, running on another replica, is no longer running (finished, or
 * stopped for input), and resolves with its stored task then. `null` if the record disappears.
 * Rejects with the signal's reason when it aborts first.
 */
export async function awaitRemoteRun(
  store: RunStore,
  coordination: TaskCoordination,
  owner: TaskOwner,
  taskId: string,
  signal?: AbortSignal,
): Promise<Task | null> {
  const watch = coordination.watchTask(owner, taskId);
  try {
    for (;;) {
      const record = await store.getTaskRecord(taskId, owner);
      if (!record) return null;
      if (!isRunningState(record.state)) return record.task;
      await watch.next(signal);
    }
  } finally {
    watch.close();
  }
}
