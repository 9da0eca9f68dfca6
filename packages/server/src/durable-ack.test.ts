import {
  createTask,
  silentLogger,
  UnavailableError,
  ValueError,
  type AgentError,
  type Task,
  type TaskEvent,
} from '@agent/core';
import {
  InMemoryRunStore,
  type SaveTaskSnapshotOptions,
  type TaskOwner,
  type TaskWrite,
} from '@agent/events';
import { ServerPipeline } from './pipeline.js';
import type { RequestInfo } from './request.js';
import { ContractHandler } from './testing/contract-handler.js';

// Acknowledged means stored: a caller is told a task ended only once the store holds its ending.

function request(): RequestInfo {
  return { headers: {}, signal: new AbortController().signal };
}

/** A store that refuses the snapshots of finished tasks `failures` times with `error`. */
class RefusingStore extends InMemoryRunStore {
  constructor(
    private failures: number,
    private readonly error: () => Error,
  ) {
    super();
  }

  override async saveTaskSnapshot(task: Task, options?: SaveTaskSnapshotOptions): Promise<void> {
    this.refuseEnding([task]);
    return super.saveTaskSnapshot(task, options);
  }

  // The ledger hands this store a task's waiting writes in one call: the ending goes with its final status.
  override async writeTask(owner: TaskOwner, taskId: string, writes: readonly TaskWrite[]): Promise<void> {
    this.refuseEnding(writes.flatMap((write) => ('snapshot' in write ? [write.snapshot] : [])));
    return super.writeTask(owner, taskId, writes);
  }

  private refuseEnding(snapshots: Task[]): void {
    if (snapshots.some((task) => task.state === 'completed') && this.failures > 0) {
      this.failures--;
      throw this.error();
    }
  }
}

function pipelineOn(store: InMemoryRunStore): ServerPipeline {
  const pipeline = new ServerPipeline({
    transport: 'http',
    handler: new ContractHandler(),
    store,
    logger: silentLogger,
  });
  pipeline.markReady();
  return pipeline;
}

describe('durable acknowledgement', () => {
  it('a store that refuses the ending: the caller gets UNAVAILABLE, readiness says so until a write passes', async () => {
    const store = new RefusingStore(1, () => new ValueError('disk full'));
    const pipeline = pipelineOn(store);
    const error = (await pipeline
      .send(await pipeline.open(request()), createTask('echo hi', { id: 'lost-ack' }))
      .catch((e: unknown) => e)) as AgentError;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.data).toMatchObject({ task_id: 'lost-ack' });
    expect(pipeline.state).toBe('unavailable');
    // The store recovers: the next task is stored and acknowledged, and readiness is back.
    const next = await pipeline.send(await pipeline.open(request()), createTask('echo again'));
    expect(next.state).toBe('completed');
    expect(pipeline.state).toBe('ready');
  });

  it('a store method that throws instead of rejecting fails its write the same way, and the next task goes on', async () => {
    class ThrowingStore extends InMemoryRunStore {
      private failures = 1;
      // Not async: the throw happens in the call itself, before any promise exists.
      override saveTaskSnapshot(task: Task, options?: SaveTaskSnapshotOptions): Promise<void> {
        if (task.state === 'completed' && this.failures-- > 0) throw new ValueError('disk full');
        return super.saveTaskSnapshot(task, options);
      }

      override writeTask(owner: TaskOwner, taskId: string, writes: readonly TaskWrite[]): Promise<void> {
        const ending = writes.some((write) => 'snapshot' in write && write.snapshot.state === 'completed');
        if (ending && this.failures-- > 0) throw new ValueError('disk full');
        return super.writeTask(owner, taskId, writes);
      }
    }
    const pipeline = pipelineOn(new ThrowingStore());
    const error = (await pipeline
      .send(await pipeline.open(request()), createTask('echo hi', { id: 'thrown' }))
      .catch((e: unknown) => e)) as AgentError;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.data).toMatchObject({ task_id: 'thrown' });
    const next = await pipeline.send(await pipeline.open(request()), createTask('echo again'));
    expect(next.state).toBe('completed');
    expect(pipeline.state).toBe('ready');
  });

  it('a store that is briefly unavailable is retried: the caller gets its task, stored', async () => {
    const store = new RefusingStore(2, () => new UnavailableError('database is locked'));
    const pipeline = pipelineOn(store);
    const done = await pipeline.send(
      await pipeline.open(request()),
      createTask('echo hi', { id: 'retried' }),
    );
    expect(done.state).toBe('completed');
    expect((await store.getTaskRecord('retried', { tenant: '', principal_id: 'anonymous' }))?.state).toBe(
      'completed',
    );
    expect(pipeline.state).toBe('ready');
  });

  it('a stream gets every event but the final status, then UNAVAILABLE, when the ending is not stored', async () => {
    const store = new RefusingStore(1, () => new ValueError('disk full'));
    const pipeline = pipelineOn(store);
    const feed = pipeline.stream(await pipeline.open(request()), createTask('echo hi', { id: 'stream-ack' }));
    const seen: TaskEvent[] = [];
    const error = await (async () => {
      for await (const event of feed) seen.push(event);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.some((e) => e.type === 'task.status' && e.final)).toBe(false);
  });
});
