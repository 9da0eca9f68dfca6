import {
  AgentError,
  getDefaultLogger,
  isTerminalState,
  type Logger,
  type Task,
  type TaskEvent,
  type TaskHandler,
  UnavailableError,
} from '@agent/core';
import {
  coordinationOf,
  InMemoryRunStore,
  type RunStore,
  type TaskWrite,
  type TaskCoordination,
  type TaskOwner,
  type TaskRecord,
} from '@agent/events';
import { copyWith, ownerKey, ReleasingMap } from '@agent/core/internal';
import { isRunningState } from './remote-task.js';
import { sequencedEvents } from './sequenced-events.js';

/**
 * How many events a streamed run may record past what the caller that started it has read before
 * it waits for that caller: a consumer that stops reading stops its own run (through the runtime's
 * bounded queue, the agent's code too) instead of the run filling memory for nobody. It resumes
 * when the caller has read half of them.
 */
export const STREAM_WINDOW = 256;

/**
 * How many of a running task's latest events stay in memory once the store holds them: followers
 * near the head (nearly all of them) read from memory; one further behind reads the older ones back
 * from the store, so a long run costs the store's copy of its log, not a second one here. As many as
 * a streamed run may get ahead of its starter ({@link STREAM_WINDOW}), so a starter never reads its
 * own stream back from the store, and no more: a run holds between one and two tails, and every
 * event held is a copy the store has too.
 */
export const LIVE_TAIL = STREAM_WINDOW;

/** Reads a running task's stored events after a sequence (the ledger gives each LiveTask its store). */
export type StoredEventReader = (after: number, limit: number) => Promise<TaskEvent[]>;

/**
 * One task the pipeline is running now: its latest events in memory, in order, as the store will
 * have them. Every caller that attaches to it (a resubmission, a subscriber) reads from here (older
 * events from the store) until the run is over and the store holds everything; from then on the
 * store answers.
 */
export class LiveTask {
  /** The events of this run still held here: `held[i].sequence === base + dropped + i + 1`. */
  private held: TaskEvent[] = [];
  /** How many of this run's first events are no longer held (the store has them). */
  private dropped = 0;
  /** Where the events no longer held are read back from. */
  readStored: StoredEventReader = () => Promise.resolve([]);
  /** The latest known snapshot: the input, then the state of each status, then the final task. */
  task: Task;
  /** Set when the run failed before its first event: the caller that started it gets this error. */
  earlyFailure: unknown;
  /**
   * Set when the store could not take all of this run's writes (retries included): the run is over
   * but not durably recorded, so no caller may be told it finished.
   */
  storeFailure: unknown;
  /** Told once when the store refuses one of this run's writes for good (the run is then pointless). */
  onStoreFailure: ((error: unknown) => void) | undefined;
  private ended = false;
  /**
   * Called at the next change: the first in a field, any others after it in a list made only for
   * them. A task followed by one caller waits this way at every event, and a list made at each
   * wake (a new array, then its backing store) lived until the next one.
   */
  private waker: (() => void) | undefined;
  private moreWakers: (() => void)[] | undefined;
  private canceler: ((reason: string | undefined) => void) | undefined;
  private cancelAsked: { reason: string | undefined } | undefined;
  private resolveResult!: (task: Task) => void;
  /** The caller that started this run streaming: what it has read, and the run waiting for it. */
  private starter: { read: number; waiter: (() => void) | undefined } | undefined;
  /** Set when the starter's stream was ended for not reading: the error it ends with. */
  starterCut: AgentError | undefined;
  /** The final task, once the final status is recorded and stored. */
  readonly result: Promise<Task>;

  constructor(
    readonly owner: TaskOwner,
    input: Task,
    /**
     * Events the task recorded in earlier runs (a continued task: the store holds them, this run's
     * numbers follow on). 0 for a new task.
     */
    readonly base = 0,
  ) {
    this.task = input;
    this.result = new Promise<Task>((resolve) => (this.resolveResult = resolve));
  }

  get taskId(): string {
    return this.task.id;
  }

  /** The sequence of the latest recorded event (`base` before this run records any). */
  get lastSequence(): number {
    return this.base + this.recorded;
  }

  /** How many events this run has recorded. */
  get recorded(): number {
    return this.dropped + this.held.length;
  }

  /** How many of this run's first events are only in the store now. */
  get droppedCount(): number {
    return this.dropped;
  }

  /** This run's event at `index` (0 = its first), if recorded and still held here. */
  eventAt(index: number): TaskEvent | undefined {
    return this.held[index - this.dropped];
  }

  /** @internal The store holds this run's events up to `sequence`: the older ones past the tail may go. */
  stored(sequence: number): void {
    const keep = Math.min(sequence - this.base, this.recorded - LIVE_TAIL);
    // In batches, so a long run does not shift its array on every write.
    if (keep - this.dropped < LIVE_TAIL) return;
    this.held = this.held.slice(keep - this.dropped);
    this.dropped = keep;
  }

  /** True once the final status is recorded: no event follows it. */
  get finished(): boolean {
    return this.ended;
  }

  /** Resolves at the next recorded event or at the end, whichever comes first. */
  changed(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise<void>((resolve) => this.onChange(resolve));
  }

  /**
   * @internal Calls `wake` once, at the next recorded event or at the end (at once when ended), from
   * inside the ledger's own call: it should only schedule its work.
   */
  onChange(wake: () => void): void {
    if (this.ended) wake();
    else if (this.waker === undefined) this.waker = wake;
    else (this.moreWakers ??= []).push(wake);
  }

  /**
   * @internal How to cancel this run (the pipeline sets it once the handler runs it). A cancel asked
   * for before then is passed on as soon as it is set.
   */
  onCancel(cancel: (reason: string | undefined) => void): void {
    this.canceler = cancel;
    const asked = this.cancelAsked;
    this.cancelAsked = undefined;
    if (asked && !this.ended) cancel(asked.reason);
  }

  /** @internal A cancel that reached this process from elsewhere (another replica's caller). */
  cancel(reason: string | undefined): void {
    if (this.ended) return;
    if (this.canceler) this.canceler(reason);
    else this.cancelAsked ??= { reason };
  }

  /** @internal Numbers the event and keeps it; returns the sequenced copy. */
  add(event: TaskEvent): TaskEvent {
    return this.addOwn(copyWith(event, 'sequence', this.lastSequence + 1) as TaskEvent);
  }

  /**
   * @internal Numbers an event nobody else holds in place and keeps it: an event built for this run
   * (by the pipeline, or by a stream that hands its events over) needs no copy of its own.
   */
  addOwn(event: TaskEvent): TaskEvent {
    const sequenced = event as TaskEvent & { sequence: number };
    sequenced.sequence = this.lastSequence + 1;
    this.held.push(sequenced);
    if (sequenced.type === 'task.status') {
      this.task =
        sequenced.final && sequenced.task ? sequenced.task : { ...this.task, state: sequenced.state };
    }
    this.wake();
    return sequenced;
  }

  /** @internal The caller that started this run streaming reads it from `after` on: the run keeps pace with it. */
  paceBy(after: number): void {
    if (!this.ended) this.starter = { read: after, waiter: undefined };
  }

  /** @internal The starter has read up to `sequence`. */
  starterRead(sequence: number): void {
    const starter = this.starter;
    if (!starter) return;
    starter.read = sequence;
    if (starter.waiter && this.lastSequence - sequence <= STREAM_WINDOW / 2) {
      const waiter = starter.waiter;
      starter.waiter = undefined;
      waiter();
    }
  }

  /** @internal The starter left (or was cut off): the run goes on at its own pace. */
  unpace(): void {
    const starter = this.starter;
    this.starter = undefined;
    starter?.waiter?.();
  }

  /**
   * @internal Undefined while the run is within {@link STREAM_WINDOW} of its starter (or has none);
   * else a promise that resolves once the starter has caught up or is gone.
   */
  room(): Promise<void> | undefined {
    const starter = this.starter;
    if (!starter || this.lastSequence - starter.read < STREAM_WINDOW) return undefined;
    return new Promise<void>((resolve) => (starter.waiter = resolve));
  }

  /** @internal */
  end(): void {
    this.ended = true;
    this.unpace();
    this.wake();
  }

  /** @internal */
  settle(task: Task): void {
    this.resolveResult(task);
  }

  /** @internal Wakes whoever waits in {@link changed} without a new event (a starter that was cut off). */
  notify(): void {
    this.wake();
  }

  private wake(): void {
    const first = this.waker;
    if (first === undefined) return;
    // The others were added while the first waited: they run after it, in order.
    const more = this.moreWakers;
    this.waker = undefined;
    this.moreWakers = undefined;
    first();
    if (more !== undefined) for (const wake of more) wake();
  }
}

/** What a caller of a run the store could not record gets instead of its answer. */
export function unrecordedRun(taskId: string): UnavailableError {
  return new UnavailableError('The task ended but the task store could not record it', {
    data: { task_id: taskId },
  });
}

/**
 * Where a task of an owner stands: running here, running on another replica that shares the store
 * (`remote`: its latest stored snapshot), stored, or unknown.
 */
export type TaskLookup = { live: LiveTask } | { remote: TaskRecord } | { record: TaskRecord } | null;

/**
 * The tasks of one store as the pipelines serving it see them: the ones running now (by owner and
 * id) and the store, which records every task, its snapshots and its numbered event log. Pipelines
 * that share a store share one ledger, so a task started over one transport can be read, canceled
 * or followed over any other.
 *
 * Store writes of a task happen in order, one batch at a time; a task leaves the running set only
 * once they are all done, so whoever finds it gone finds all of it in the store.
 */
export class TaskLedger {
  /** A run's events and snapshots hang off its entry: deleted, it must die young (ReleasingMap). */
  private readonly running = new ReleasingMap<string, LiveTask>();
  private readonly writes = new WeakMap<LiveTask, TaskWrites>();
  private readonly queued: WriteState = { writes: 0, failing: false };
  /** Present when replicas share the store: how this ledger reaches the tasks the others run. */
  readonly coordination: TaskCoordination | undefined;

  constructor(
    readonly store: RunStore,
    private readonly logger: Logger = getDefaultLogger(),
  ) {
    this.coordination = coordinationOf(store);
    // One listener per store for this process's lifetime: the ledger lives as long as its store.
    this.coordination?.onCancelRequest((request) =>
      this.live(request.owner, request.task_id)?.cancel(request.reason),
    );
  }

  /** Tasks running now, of every owner. */
  get size(): number {
    return this.running.size;
  }

  /** Store writes (snapshots, event batches, claims) queued behind the one in progress, of every task. */
  get pendingWrites(): number {
    return this.queued.writes;
  }

  /**
   * False after a write the store refused even when retried, until the next write it takes: what
   * readiness reports, so a balancer sends new work elsewhere while the store is locked or failing.
   */
  get storeHealthy(): boolean {
    return !this.queued.failing;
  }

  live(owner: TaskOwner, taskId: string): LiveTask | undefined {
    return this.running.get(ownerKey(owner, taskId));
  }

  /** The owner's task: running, or its stored record; `null` for an unknown id and another owner's. */
  async lookup(owner: TaskOwner, taskId: string): Promise<TaskLookup> {
    const live = this.live(owner, taskId);
    if (live) return { live };
    const record = await this.store.getTaskRecord(taskId, owner);
    if (record) {
      const coordination = this.coordination;
      if (coordination && isRunningState(record.state)) {
        const placement = await coordination.placement(owner, taskId);
        if (placement === 'elsewhere') return { remote: record };
        const local = this.live(owner, taskId);
        if (local) return { live: local };
      }
      return { record };
    }
    // It may have started while the store was asked.
    const started = this.live(owner, taskId);
    return started ? { live: started } : null;
  }

  /**
   * Registers a new run of `task` for `owner` and stores its first snapshot. Synchronous up to the
   * registration, so two submissions of one id cannot both start it: the second gets `attached`.
   * `base`: the events a continued task recorded before (its new events are numbered after them).
   */
  begin(owner: TaskOwner, task: Task, base = 0): { live: LiveTask; attached: boolean } {
    const key = ownerKey(owner, task.id);
    const existing = this.running.get(key);
    if (existing) return { live: existing, attached: true };
    const live = new LiveTask({ tenant: owner.tenant, principal_id: owner.principal_id }, task, base);
    live.readStored = async (after, limit) => {
      const rows = await this.store.listTaskEvents(live.owner, task.id, { after, limit });
      return sequencedEvents(rows);
    };
    this.running.set(key, live);
    const writes = new TaskWrites(this.store, this.coordination, live, this.logger, this.queued, base === 0);
    this.writes.set(live, writes);
    // Claimed before its first snapshot: no other replica ever sees it running with nobody on it.
    writes.claim();
    writes.snapshot(task);
    return { live, attached: false };
  }

  /** Numbers and keeps one event of a running task, and queues it for the store. */
  record(live: LiveTask, event: TaskEvent): TaskEvent {
    return this.recorded(live, live.add(event));
  }

  /** {@link record} for an event nobody else holds: it is numbered in place ({@link LiveTask.addOwn}). */
  recordOwn(live: LiveTask, event: TaskEvent): TaskEvent {
    return this.recorded(live, live.addOwn(event));
  }

  private recorded(live: LiveTask, sequenced: TaskEvent): TaskEvent {
    const writes = this.writes.get(live);
    writes?.append(sequenced);
    // A state change is worth a snapshot: listing by state must see it while the task runs.
    if (sequenced.type === 'task.status' && !sequenced.final) writes?.snapshot(live.task);
    return sequenced;
  }

  /**
   * Ends a run after its final status was recorded: stores the final snapshot, waits for every write,
   * then lets the store answer for the task. Resolves with the final task; never rejects.
   */
  async finish(live: LiveTask): Promise<Task> {
    live.end();
    const writes = this.writes.get(live);
    writes?.snapshot(live.task);
    writes?.release();
    await writes?.idle();
    const key = ownerKey(live.owner, live.taskId);
    if (this.running.get(key) === live) this.running.delete(key);
    live.settle(live.task);
    return live.task;
  }
}

type Write = { events: TaskEvent[] } | { snapshot: Task } | { claim: boolean };

/** What one ledger's write queues share: how many writes wait (metrics), whether the store fails (readiness). */
interface WriteState {
  writes: number;
  failing: boolean;
}

/** Waits before each retry of a write the store refused as unavailable (a locked file, a lost connection). */
const RETRY_DELAYS_MS = [20, 100, 400];

/**
 * One task's store writes, in the order they were made, one at a time. Events recorded while a write
 * is busy go to the store in one append, and a snapshot still waiting its turn takes the newer task
 * instead of a second snapshot being queued (the first is only ever overwritten by the second). A
 * store with `writeTask` gets every snapshot and append waiting at once in one call, all or none: for
 * a database, one commit where there would be several, each waiting for the last.
 *
 * The loop is callbacks bound once per task, not an async function: every event a task logs passes
 * through it, and an async frame, its awaits and a closure per write were ~0.6 KB of garbage each.
 */
class TaskWrites {
  private readonly queue: Write[] = [];
  /** True from the first queued write until the queue is empty again. */
  private busy = false;
  /** The write in progress, and the retries it has had. */
  private current: Write | undefined;
  /**
   * For a store with `writeTask`, when more than one snapshot or append waited: all of them, from
   * `current` on, in one call. Null for a single write.
   */
  private group: TaskWrite[] | null = null;
  private readonly grouping: boolean;
  /**
   * True while none of a new task's writes has gone to a store with `writeTask`. Its first write
   * waits for the end of the turn (`setImmediate`, after the poll phase) instead of the end of the
   * current callback: a run that ends by then reaches the store in one call, and that call's one
   * snapshot is the ending, in the first snapshot's place (see {@link snapshot}).
   */
  private unsent: boolean;
  private attempt = 0;
  /** Made only when someone waits for the queue to empty ({@link idle}). */
  private emptied: { promise: Promise<void>; resolve: () => void } | null = null;

  constructor(
    private readonly store: RunStore,
    private readonly coordination: TaskCoordination | undefined,
    private readonly live: LiveTask,
    private readonly logger: Logger,
    private readonly depth: WriteState,
    newTask: boolean,
  ) {
    this.grouping = typeof store.writeTask === 'function';
    this.unsent = newTask && this.grouping;
  }

  private push(write: Write): void {
    this.queue.push(write);
    this.depth.writes++;
    if (this.busy) return;
    this.busy = true;
    // Events recorded in the same turn go in one append.
    if (this.unsent) setImmediate(this.next);
    else queueMicrotask(this.next);
  }

  /** Marks the task as running on this replica (a store shared by replicas only). */
  claim(): void {
    if (!this.coordination) return;
    this.push({ claim: true });
  }

  /** The run is over here: after its final snapshot, the claim goes. */
  release(): void {
    if (!this.coordination) return;
    this.push({ claim: false });
  }

  snapshot(task: Task): void {
    // The waiting snapshot may sit before events queued after it: saving the newer task there still
    // creates the record before they are appended, and leaves the same record once all is written.
    // Not an ending, though: a record that says the task is over while its final status is not yet
    // logged would let a store shared by replicas refuse that status (an ending is final there).
    // Unless the record is new and nothing of it is sent: everything waiting then goes in one
    // `writeTask` call, all or none, and a new record's empty log takes the status after its ending.
    const waiting = this.queue.find((write): write is { snapshot: Task } => 'snapshot' in write);
    if (waiting && (this.unsent || !isTerminalState(task.state) || this.queue.at(-1) === waiting))
      waiting.snapshot = task;
    else this.push({ snapshot: task });
  }

  append(event: TaskEvent): void {
    const last = this.queue[this.queue.length - 1];
    if (last && 'events' in last) last.events.push(event);
    else this.push({ events: [event] });
  }

  /** Resolves when every write queued so far is done. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    if (!this.emptied) {
      let resolve!: () => void;
      const promise = new Promise<void>((settle) => (resolve = settle));
      this.emptied = { promise, resolve };
    }
    return this.emptied.promise;
  }

  private readonly next = (): void => {
    const write = this.queue.shift();
    this.current = write;
    this.group = null;
    if (!write) {
      this.busy = false;
      const emptied = this.emptied;
      this.emptied = null;
      emptied?.resolve();
      return;
    }
    if (!('claim' in write)) this.unsent = false;
    // A claim or release goes to the coordination, not the store: a group ends before one.
    if (this.grouping && !('claim' in write) && this.queue.length > 0 && !('claim' in this.queue[0]!)) {
      const group: TaskWrite[] = [write];
      while (this.queue.length > 0 && !('claim' in this.queue[0]!))
        group.push(this.queue.shift() as TaskWrite);
      this.group = group;
    }
    this.depth.writes -= this.group?.length ?? 1;
    this.attempt = 0;
    this.start();
  };

  private readonly start = (): void => {
    let done: Promise<unknown>;
    try {
      done = Promise.resolve(this.perform());
    } catch (error) {
      done = Promise.reject(error);
    }
    done.then(this.succeeded, this.failed);
  };

  private readonly succeeded = (): void => {
    this.depth.failing = false;
    const write = this.group === null ? this.current! : lastAppendOf(this.group);
    if (write && 'events' in write) {
      const last = write.events[write.events.length - 1]?.sequence;
      if (last !== undefined) this.live.stored(last);
    }
    this.next();
  };

  private readonly failed = (error: unknown): void => {
    const delay = RETRY_DELAYS_MS[this.attempt];
    if (delay !== undefined && mayPass(error)) {
      this.attempt++;
      setTimeout(this.start, delay);
      return;
    }
    try {
      // Not acknowledged: whoever waits for this run is told the store failed, not that it ended.
      this.depth.failing = true;
      // One line per run: its later writes fail the same way and would only repeat it.
      if (this.live.storeFailure === undefined) {
        this.live.storeFailure = error;
        this.report(error, this.group === null ? operationOf(this.current!) : 'writeTask');
        this.live.onStoreFailure?.(error);
      }
    } finally {
      this.next();
    }
  };

  /** The store's own promise, the outcome of the write (or group) in progress. */
  private perform(): Promise<unknown> {
    const { owner, taskId } = this.live;
    if (this.group !== null) return this.store.writeTask!(owner, taskId, this.group);
    const write = this.current!;
    if ('events' in write) return this.store.appendTaskEvents(owner, taskId, write.events);
    if ('snapshot' in write) return this.store.saveTaskSnapshot(write.snapshot, { owner });
    if (write.claim) return this.coordination!.claimTask(owner, taskId);
    return this.coordination!.releaseTask(owner, taskId);
  }

  private report(error: unknown, operation: string): void {
    try {
      this.logger.error({ err: error, operation, task_id: this.live.taskId }, 'Task store write failed');
    } catch {
      // A failing logger changes nothing either.
    }
  }
}

/** A store that is unavailable (locked, disconnected) may take the write a moment later; a refusal of the data will not. */
function mayPass(error: unknown): boolean {
  return !(error instanceof AgentError) || error.code === 'UNAVAILABLE';
}

/** The last append of a group, if it has one. */
function lastAppendOf(group: readonly TaskWrite[]): TaskWrite | undefined {
  for (let index = group.length - 1; index >= 0; index--) if ('events' in group[index]!) return group[index];
  return undefined;
}

function operationOf(write: Write): string {
  if ('events' in write) return 'appendTaskEvents';
  if ('snapshot' in write) return 'saveTaskSnapshot';
  return write.claim ? 'claimTask' : 'releaseTask';
}

const ledgers = new WeakMap<RunStore, TaskLedger>();
const defaultStores = new WeakMap<TaskHandler, RunStore>();

/**
 * The ledger of the store a handler's tasks go to: `store` when given, else the handler's own
 * `runStore` (an Agent's), else one in-memory store per handler. Every pipeline serving the same
 * store gets the same ledger.
 */
export function ledgerFor(handler: TaskHandler, store: RunStore | undefined, logger: Logger): TaskLedger {
  const chosen = store ?? storeOf(handler);
  let ledger = ledgers.get(chosen);
  if (!ledger) {
    ledger = new TaskLedger(chosen, logger);
    ledgers.set(chosen, ledger);
  }
  return ledger;
}

function storeOf(handler: TaskHandler): RunStore {
  const own = (handler as { runStore?: unknown }).runStore;
  if (isRunStore(own)) return own;
  let store = defaultStores.get(handler);
  if (!store) {
    store = new InMemoryRunStore();
    defaultStores.set(handler, store);
  }
  return store;
}

function isRunStore(value: unknown): value is RunStore {
  if (typeof value !== 'object' || value === null) return false;
  const store = value as Partial<Record<keyof RunStore, unknown>>;
  return (
    typeof store.appendTaskEvents === 'function' &&
    typeof store.getTaskRecord === 'function' &&
    typeof store.pageTaskRecords === 'function'
  );
}
