import { createTask, UnavailableError, type Task, type TaskEvent } from '@agent/core';
import { finalStatusEvent } from '@agent/core/internal';
import {
  InMemoryRunStore,
  type SaveTaskSnapshotOptions,
  type TaskOwner,
  type TaskWrite,
} from '@agent/events';
import { TaskLedger } from './task-ledger.js';

const OWNER: TaskOwner = { tenant: '', principal_id: 'anonymous' };

/**
 * A store whose first write waits for a gate, recording the order writes reach it. It has no
 * `writeTask`: the ledger's one-write-at-a-time path, the one a store without it gets.
 */
class GatedStore extends InMemoryRunStore {
  readonly order: string[] = [];
  private open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));
  private first = true;

  constructor() {
    super();
    (this as { writeTask?: unknown }).writeTask = undefined;
  }

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

const describeWrite = (write: TaskWrite): string =>
  'snapshot' in write
    ? `snapshot ${write.snapshot.state}`
    : `events ${write.events.map((e) => (e.type === 'task.status' ? e.state : e.type)).join(',')}`;

/**
 * A store with `writeTask`, recording each group it gets; it applies a group through the calls one by
 * one (what matters here is what the ledger hands it), after refusing the first `refusals` groups.
 */
class GroupingStore extends InMemoryRunStore {
  readonly groups: string[][] = [];
  readonly single: string[] = [];

  constructor(private refusals = 0) {
    super();
  }

  override async writeTask(owner: TaskOwner, taskId: string, writes: readonly TaskWrite[]): Promise<void> {
    this.groups.push(writes.map(describeWrite));
    if (this.refusals > 0) {
      this.refusals--;
      throw new UnavailableError('database is locked');
    }
    for (const write of writes) {
      if ('snapshot' in write) await super.saveTaskSnapshot(write.snapshot, { owner });
      else await super.appendTaskEvents(owner, taskId, write.events);
    }
  }

  override async saveTaskSnapshot(task: Task, options?: SaveTaskSnapshotOptions): Promise<void> {
    this.single.push(`snapshot ${task.state}`);
    return super.saveTaskSnapshot(task, options);
  }

  override async appendTaskEvents(owner: TaskOwner, taskId: string, events: TaskEvent[]): Promise<number[]> {
    this.single.push(describeWrite({ events }));
    return super.appendTaskEvents(owner, taskId, events);
  }
}

describe('TaskLedger writes to a store with writeTask', () => {
  const working = (task: Task): TaskEvent => ({
    type: 'task.status',
    task_id: task.id,
    state: 'working',
    final: false,
    timestamp: task.created_at,
  });

  it('hands it every snapshot and append waiting, in order, in one call', async () => {
    const store = new GroupingStore();
    const ledger = new TaskLedger(store);
    const task = createTask('x', { id: 'grouped' });
    const { live } = ledger.begin(OWNER, task);
    ledger.record(live, working(task));
    await new Promise(setImmediate);
    // The first group went as soon as the turn ended; what comes later waits for it, then goes as one.
    ledger.record(live, { ...working(task), type: 'task.progress', message: 'half way' } as TaskEvent);
    ledger.record(live, finalStatusEvent({ ...task, state: 'completed' }));
    await ledger.finish(live);
    expect(store.groups).toEqual([
      ['snapshot working', 'events working'],
      ['events task.progress,completed', 'snapshot completed'],
    ]);
    expect(store.single).toEqual([]);
    expect((await store.getTaskRecord(task.id, OWNER))?.state).toBe('completed');
    expect((await store.listTaskEvents(OWNER, task.id)).map((e) => e.sequence)).toEqual([1, 2, 3]);
  });

  it('writes a new task that ends within its first turn in one call, with one snapshot: its ending', async () => {
    const store = new GroupingStore();
    const ledger = new TaskLedger(store);
    const task = createTask('x', { id: 'quick' });
    const { live } = ledger.begin(OWNER, task);
    ledger.record(live, working(task));
    await Promise.resolve();
    // Nothing went at the end of the callback: the first write waits for the end of the turn.
    expect(store.groups).toEqual([]);
    ledger.record(live, finalStatusEvent({ ...task, state: 'completed' }));
    await ledger.finish(live);
    expect(store.groups).toEqual([['snapshot completed', 'events working,completed']]);
    expect(store.single).toEqual([]);
    expect((await store.getTaskRecord(task.id, OWNER))?.state).toBe('completed');
    expect((await store.listTaskEvents(OWNER, task.id)).map((e) => e.sequence)).toEqual([1, 2]);
  });

  it("keeps a continued task's ending after its final status: its log may already end with one", async () => {
    const store = new GroupingStore();
    const ledger = new TaskLedger(store);
    const task = createTask('x', { id: 'continued' });
    await store.saveTaskSnapshot({ ...task, state: 'input-required' }, { owner: OWNER });
    await store.appendTaskEvents(OWNER, task.id, [finalStatusEvent({ ...task, state: 'input-required' })]);
    const { live } = ledger.begin(OWNER, task, 1);
    ledger.record(live, working(task));
    ledger.record(live, finalStatusEvent({ ...task, state: 'completed' }));
    await ledger.finish(live);
    expect(store.groups).toEqual([['snapshot working', 'events working,completed', 'snapshot completed']]);
    expect((await store.listTaskEvents(OWNER, task.id)).map((e) => e.sequence)).toEqual([1, 2, 3]);
  });

  it('retries a refused group whole, so each event is stored once', async () => {
    const store = new GroupingStore(1);
    const ledger = new TaskLedger(store);
    const task = createTask('x', { id: 'retried' });
    const { live } = ledger.begin(OWNER, task);
    ledger.record(live, working(task));
    ledger.record(live, finalStatusEvent({ ...task, state: 'completed' }));
    await ledger.finish(live);
    const group = ['snapshot completed', 'events working,completed'];
    expect(store.groups).toEqual([group, group]);
    expect((await store.getTaskRecord(task.id, OWNER))?.state).toBe('completed');
    expect((await store.listTaskEvents(OWNER, task.id)).map((e) => e.sequence)).toEqual([1, 2]);
  });
});
