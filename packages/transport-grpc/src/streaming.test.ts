import {
  CLIENT_OPERATIONS,
  DeadlineExceededError,
  InvalidRequestError,
  isFinalEvent,
  TaskCanceledError,
  UnavailableError,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import * as pb from './gen/agent/v1/agent.js';
import { ERROR_CODE_METADATA } from './grpc-errors.js';
import { Harness, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('GRPCTransport: Stream', () => {
  it('yields every event in order, ending with exactly one final status that carries the task', async () => {
    const { url } = await harness.server();
    const events = await collect(harness.client().subscribe(url, task('stream 5')));
    expect(events.map((event) => event.type)).toEqual([
      'task.status',
      ...Array.from({ length: 5 }, () => ['task.artifact', 'task.progress']).flat(),
      'task.status',
    ]);
    const artifacts = events.filter((event) => event.type === 'task.artifact');
    expect(artifacts.map((event) => event.artifact.metadata.index)).toEqual([0, 1, 2, 3, 4]);
    expect(artifacts.map((event) => event.last_chunk)).toEqual([false, false, false, false, true]);
    expect(events.filter(isFinalEvent)).toHaveLength(1);
    const final = events[events.length - 1]!;
    expect(final).toMatchObject({ type: 'task.status', state: 'completed', final: true });
    expect(final.type === 'task.status' && final.task?.artifacts).toHaveLength(5);
    expect(events[2]).toMatchObject({ type: 'task.progress', step: 0, run_id: 'run-1' });
  });

  it("lets the handler's generator finish (its cleanup runs) once the final status is sent", async () => {
    const { url, handler } = await harness.server();
    await collect(harness.client().subscribe(url, task('stream 2')));
    expect(handler.activeTaskIds).toEqual([]);
  });

  it('carries runtime events such as task.error and ends a failed task with its final status', async () => {
    const { url } = await harness.server();
    const events = await collect(harness.client().subscribe(url, task('fail oops')));
    expect(events.map((event) => event.type)).toEqual(['task.status', 'task.error', 'task.status']);
    expect(events[1]).toMatchObject({ error: { code: 'INTERNAL', message: 'oops' } });
    expect(events[2]).toMatchObject({ state: 'failed', final: true });
  });

  it('serves 100 concurrent streams, each with its own events and exactly one final status', async () => {
    const { url } = await harness.server();
    const client = harness.client();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        collect(client.subscribe(url, task(`stream ${1 + (index % 4)}`))),
      ),
    );
    results.forEach((events, index) => {
      const taskId = events[0]!.task_id;
      expect(events.every((event) => event.task_id === taskId)).toBe(true);
      expect(events.filter((event) => event.type === 'task.artifact')).toHaveLength(1 + (index % 4));
      expect(events.filter((event) => event.type === 'task.status' && event.final)).toHaveLength(1);
      expect(isFinalEvent(events[events.length - 1]!)).toBe(true);
    });
    expect(new Set(results.map((events) => events[0]!.task_id)).size).toBe(100);
  });

  it('a cancel from another connection ends a streaming task with one final canceled status', async () => {
    const { url, handler } = await harness.server();
    const sleeper = task('sleep 60000');
    const started = handler.nextStarted();
    const streaming = collect(harness.client().subscribe(url, sleeper));
    await started;
    await harness
      .client()
      .send(CLIENT_OPERATIONS.cancel_task, url, { task_id: sleeper.id, reason: 'stop it' });
    const events = await streaming;
    expect(events.filter(isFinalEvent)).toHaveLength(1);
    expect(events[events.length - 1]).toMatchObject({
      state: 'canceled',
      final: true,
      task: { metadata: { cancel_reason: 'stop it' } },
    });
  });

  it('aborting the client signal cancels the RPC, not the task', async () => {
    const { url, handler } = await harness.server();
    const controller = new AbortController();
    const sleeper = task('sleep 60000');
    const started = handler.nextStarted();
    const seen: TaskEvent[] = [];
    const consuming = (async () => {
      for await (const event of harness.client().subscribe(url, sleeper, { signal: controller.signal }))
        seen.push(event);
    })();
    await started;
    controller.abort();
    await expect(consuming).rejects.toBeInstanceOf(TaskCanceledError);
    const ctx = handler.contexts[0]!;
    // The RPC ended, the task did not: it is the server's, and its signal stays quiet.
    expect(ctx.signal.aborted).toBe(false);
    expect(handler.activeTaskIds).toEqual([sleeper.id]);
    // Still cancelable through the API afterwards.
    await expect(
      harness.client().send(CLIENT_OPERATIONS.cancel_task, url, { task_id: sleeper.id }),
    ).resolves.toMatchObject({ state: 'canceled' });
  });

  it('leaving the loop early cancels the RPC, not the task', async () => {
    const { url, handler } = await harness.server();
    const sleeper = task('sleep 60000');
    for await (const event of harness.client().subscribe(url, sleeper)) {
      expect(event).toMatchObject({ type: 'task.status', state: 'working' });
      break;
    }
    const ctx = handler.contexts[0]!;
    // The RPC ended, the task did not: it is the server's, and its signal stays quiet.
    expect(ctx.signal.aborted).toBe(false);
    expect(handler.activeTaskIds).toEqual([sleeper.id]);
  });

  it('a per-call timeoutMs is the stream deadline', async () => {
    const { url } = await harness.server();
    await expect(
      collect(harness.client().subscribe(url, task('sleep 60000'), { timeoutMs: 150 })),
    ).rejects.toBeInstanceOf(DeadlineExceededError);
  });

  it('a handler error after the first event ends the stream failed, with its task.error first', async () => {
    const { url } = await harness.server();
    const events = await collect(harness.client().subscribe(url, task('throw bad stream')));
    expect(events.map((event) => event.type)).toEqual(['task.status', 'task.error', 'task.status']);
    expect(events[1]).toMatchObject({ error: { code: 'VALUE_ERROR', message: 'bad stream' } });
    expect(events[2]).toMatchObject({
      state: 'failed',
      final: true,
      task: { metadata: { error: { code: 'VALUE_ERROR' } } },
    });
  });

  it('a handler stream that ends without a final status ends failed INTERNAL', async () => {
    const { url } = await harness.server();
    const events = await collect(harness.client().subscribe(url, task('truncate')));
    expect(events.map((event) => event.type)).toEqual([
      'task.status',
      'task.progress',
      'task.error',
      'task.status',
    ]);
    expect(events.filter(isFinalEvent)).toHaveLength(1);
    expect(events[3]).toMatchObject({ state: 'failed', task: { metadata: { error: { code: 'INTERNAL' } } } });
  });

  it('Stream refuses operations other than send_task with INVALID_ARGUMENT', async () => {
    const { url } = await harness.server();
    const client = new pb.AgentServiceClient(url.replace('grpc://', ''), credentials.createInsecure());
    try {
      const error = await new Promise<ServiceError>((resolve, reject) => {
        const call = client.stream({ operation: { $case: 'getAgentCard', value: {} } }, new Metadata());
        call.on('data', () => reject(new Error('no data expected')));
        call.on('error', resolve);
      });
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual([new InvalidRequestError().code]);
    } finally {
      client.close();
    }
  });

  it('stop(): open streams past stopGraceMs end with one final canceled status, reason "server shutting down"', async () => {
    const { server, url, handler } = await harness.server({ stopGraceMs: 50 });
    const client = harness.client();
    const streams: Array<Promise<TaskEvent[]>> = [];
    for (let index = 0; index < 5; index += 1) {
      const started = handler.nextStarted();
      streams.push(collect(client.subscribe(url, task('sleep 60000'))));
      await started;
    }
    await server.stop();
    for (const events of await Promise.all(streams)) {
      expect(events.filter(isFinalEvent)).toHaveLength(1);
      expect(events.at(-1)).toMatchObject({
        state: 'canceled',
        final: true,
        task: { metadata: { cancel_reason: 'server shutting down' } },
      });
    }
    expect(handler.cancels.map((cancel) => cancel.reason)).toEqual(Array(5).fill('server shutting down'));
    expect(handler.activeTaskIds).toEqual([]);
    await expect(
      client.send(CLIENT_OPERATIONS.get_card, url, undefined, undefined, { timeoutMs: 2000 }),
    ).rejects.toBeInstanceOf(UnavailableError);
  });

  it('stop(): an in-flight unary call past stopGraceMs gets the canceled Task', async () => {
    const { server, url, handler } = await harness.server({ stopGraceMs: 50 });
    const started = handler.nextStarted();
    const outcome = harness.client().send<Task>(CLIENT_OPERATIONS.send_task, url, task('sleep 60000'));
    await started;
    await server.stop();
    expect(await outcome).toMatchObject({
      state: 'canceled',
      metadata: { cancel_reason: 'server shutting down' },
    });
  });

  it('stop(): in-flight calls finish within stopGraceMs, new calls get UNAVAILABLE meanwhile', async () => {
    const { server, url, handler } = await harness.server({ stopGraceMs: 60_000 });
    const client = harness.client();
    const held = task('hold');
    const running = handler.whenRunning(held.id);
    const unary = client.send<Task>(CLIENT_OPERATIONS.send_task, url, held);
    await running;
    const stopping = server.stop();
    await expect(client.send(CLIENT_OPERATIONS.get_card, url)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    handler.release(held.id);
    expect(await unary).toMatchObject({ state: 'completed' });
    await stopping;
    expect(handler.cancels).toEqual([]);
  });
});
