import { createTask, type Task, type TaskEvent } from '@agent/core';
import { finalStatusEvent } from '@agent/core/internal';
import { InMemoryRunStore, type SaveTaskSnapshotOptions, type TaskOwner } from '@agent/events';
import { TaskLedger } from './task-ledger.js';

const OWNER: TaskOwner = { tenant: '', principal_id: 'anonymous' };

/** A store whose first write waits for a gate, recording the order writes reach it. */
class GatedStore extends InMemoryRunStore {
  readonly order: string[] = [];
  private open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));
  private first = true;

  release(): void {
    this.open();
  }

  override async saveTaskSnapshot(task: Task, options?: SaveTaskSnapshotOptions): Promise<void> {
    if (this.first) {
      this.first = false;
      await this.gate;
    }
    this.order.push(`snapshot ${task.state}`);
    return super.saveTaskSnapshot(task, options);
  }

  override async appendTaskEvents(owner: TaskOwner, taskId: string, events: TaskEvent[]): Promise<number[]> {
    this.order.push(`events ${events.map((e) => (e.type === 'task.status' ? e.state : e.type)).join(',')}`);
    return super.appendTaskEvents(owner, taskId, events);
  }
}

describe('TaskLedger writes', () => {
  it('never stores an ending before the final status is logged, even while earlier writes wait', async () => {
    const store = new GatedStore();
    const ledger = new TaskLedger(store);
    const task = createTask('x', { id: 'ordered' });
    const { live } = ledger.begin(OWNER, task);
    const done: Task = { ...task, state: 'completed' };
    ledger.record(live, {
      type: 'task.status',
      task_id: task.id,
      state: 'working',
      final: false,
      timestamp: task.created_at,
    });
    ledger.record(live, finalStatusEvent(done));
    const finished = ledger.finish(live);
    store.release();
    await finished;
    // The first snapshot took the newer `working` task; the ending came only after the final status.
    expect(store.order).toEqual(['snapshot working', 'events working,completed', 'snapshot completed']);
    expect((await store.getTaskRecord(task.id, OWNER))?.state).toBe('completed');
  });
});
