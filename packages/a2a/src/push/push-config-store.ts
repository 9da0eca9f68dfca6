import { ResourceExhaustedError } from '@agent/core';
import type { PushConfig } from './push-config.js';

/** Whose configs these are: the owner of the task they follow. */
export interface PushOwner {
  readonly tenant: string;
  readonly principal_id: string;
}

/**
 * The configs of every task, kept per owner and task id. A key joins the three parts with a NUL,
 * which none of them can contain on any wire, so two owners can never share a key: another owner's
 * configs are simply not there.
 */
export class PushConfigStore {
  private readonly byTask = new Map<string, Map<string, PushConfig>>();
  private total = 0;

  constructor(
    private readonly maxConfigsPerTask: number,
    private readonly maxConfigs: number,
  ) {}

  static taskKey(owner: PushOwner, taskId: string): string {
    return `${owner.tenant}\u0000${owner.principal_id}\u0000${taskId}`;
  }

  /** Adds a config, or replaces the one with the same id (a replacement does not count against the limits). */
  put(owner: PushOwner, config: PushConfig): void {
    const key = PushConfigStore.taskKey(owner, config.taskId);
    const configs = this.byTask.get(key);
    if (configs?.has(config.id)) {
      configs.set(config.id, config);
      return;
    }
    if ((configs?.size ?? 0) >= this.maxConfigsPerTask) {
      throw new ResourceExhaustedError(
        `A task can have at most ${this.maxConfigsPerTask} push notification configs`,
      );
    }
    if (this.total >= this.maxConfigs) {
      throw new ResourceExhaustedError('The server holds as many push notification configs as it can');
    }
    if (configs) configs.set(config.id, config);
    else this.byTask.set(key, new Map([[config.id, config]]));
    this.total += 1;
  }

  get(owner: PushOwner, taskId: string, id: string): PushConfig | undefined {
    return this.byTask.get(PushConfigStore.taskKey(owner, taskId))?.get(id);
  }

  /** The task's configs in the order they were first created. */
  list(owner: PushOwner, taskId: string): PushConfig[] {
    return [...(this.byTask.get(PushConfigStore.taskKey(owner, taskId))?.values() ?? [])];
  }

  delete(owner: PushOwner, taskId: string, id: string): boolean {
    const key = PushConfigStore.taskKey(owner, taskId);
    const configs = this.byTask.get(key);
    if (!configs?.delete(id)) return false;
    this.total -= 1;
    if (configs.size === 0) this.byTask.delete(key);
    return true;
  }

  /** Removes every config of the task; the number removed. */
  deleteTask(owner: PushOwner, taskId: string): number {
    const key = PushConfigStore.taskKey(owner, taskId);
    const count = this.byTask.get(key)?.size ?? 0;
    this.byTask.delete(key);
    this.total -= count;
    return count;
  }

  get size(): number {
    return this.total;
  }
}
