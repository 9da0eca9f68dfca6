import { CLIENT_OPERATIONS, ValueError, type Logger, type Task } from '@agent/core';
import { credentials, makeGenericClientConstructor, type ClientReadableStream } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { checkHealth } from './health-check.js';
import { Harness, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

const quiet: Logger = { error() {}, warn() {}, info() {}, debug() {} };

const HealthClient = makeGenericClientConstructor(healthService, 'grpc.health.v1.Health');

/** A `Watch` of the default service: resolves `next(status)` once the server pushes that status. */
function watchHealth(port: number): { next(status: string): Promise<void>; close(): void } {
  const client = new HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
  const call = (
    client as unknown as { Watch(request: object): ClientReadableStream<{ status: string }> }
  ).Watch({
    service: '',
  });
  call.on('error', () => undefined);
  const seen: string[] = [];
  const waiters: Array<() => void> = [];
  call.on('data', (update: { status: string }) => {
    seen.push(update.status);
    waiters.splice(0).forEach((wake) => wake());
  });
  return {
    async next(status) {
      // Each expected status once, in order: a later status does not satisfy an earlier wait.
      for (;;) {
        const index = seen.indexOf(status);
        if (index >= 0) {
          seen.splice(0, index + 1);
          return;
        }
        await new Promise<void>((wake) => waiters.push(wake));
      }
    },
    close() {
      call.cancel();
      client.close();
    },
  };
}

/** The task store a served task was recorded in, as the pipeline hands it to the handler. */
type Store = {
  saveTaskSnapshot(task: Task, options?: unknown): Promise<void>;
  writeTask?(
    owner: unknown,
    taskId: string,
    writes: ReadonlyArray<{ snapshot: Task } | { events: unknown[] }>,
  ): Promise<void>;
};

describe('GRPCTransport health: NOT_SERVING while the task store refuses writes', () => {
  it('Check and Watch follow the pipeline state: SERVING, NOT_SERVING while unavailable, SERVING after', async () => {
    const { server, url, handler } = await harness.server({ health: true, logger: quiet });
    const client = harness.client();
    const watch = watchHealth(server.port);
    try {
      await watch.next('SERVING');
      await client.send(CLIENT_OPERATIONS.send_task, url, task('echo first'));
      const store = handler.calls[0]!.ctx.taskStore as Store;
      expect(typeof store.saveTaskSnapshot).toBe('function');
      expect(await checkHealth(url)).toBe('SERVING');

      // The store refuses the next ending (a permanent failure, not retried): the task is not acknowledged.
      // The ledger writes a task's waiting snapshots and events in one writeTask when the store has
      // it: an ending is refused on either path.
      const save = store.saveTaskSnapshot.bind(store);
      store.saveTaskSnapshot = async (saved, options) => {
        if (saved.state === 'completed') throw new ValueError('disk full');
        return save(saved, options);
      };
      const group = store.writeTask?.bind(store);
      if (group)
        store.writeTask = async (owner, taskId, writes) => {
          if (writes.some((write) => 'snapshot' in write && write.snapshot.state === 'completed'))
            throw new ValueError('disk full');
          return group(owner, taskId, writes);
        };
      await expect(client.send(CLIENT_OPERATIONS.send_task, url, task('echo lost'))).rejects.toMatchObject({
        code: 'UNAVAILABLE',
      });
      expect(await checkHealth(url)).toBe('NOT_SERVING');
      expect(await checkHealth(url, { service: 'agent.v1.AgentService' })).toBe('NOT_SERVING');
      await watch.next('NOT_SERVING');

      // The store takes writes again: the next task is stored, and health is back.
      delete (store as Partial<Store>).saveTaskSnapshot;
      delete (store as Partial<Store>).writeTask;
      await expect(client.send(CLIENT_OPERATIONS.send_task, url, task('echo again'))).resolves.toMatchObject({
        state: 'completed',
      });
      expect(await checkHealth(url)).toBe('SERVING');
      await watch.next('SERVING');
    } finally {
      watch.close();
    }
  });
});
