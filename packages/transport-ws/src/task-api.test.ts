import { CLIENT_OPERATIONS, type Task, type TaskEvent, type TaskList } from '@agent/core';
import { SlowConsumerError } from './client-stream.js';
import { client, closeAll, collect, rawSocket, serve, task, until } from './test-support/harness.js';

afterEach(closeAll);

/** The events a raw socket received for request `id`, in order. */
function eventsOf(frames: Array<Record<string, unknown>>, id: string): TaskEvent[] {
  return frames.filter((f) => f.id === id && f.op === 'event').map((f) => f.event as TaskEvent);
}

describe('task API frames', () => {
  it('task.get answers with the task, task.list with tasks and next_page_token', async () => {
    const { server } = await serve();
    const done = task('echo hello');
    await client().send(CLIENT_OPERATIONS.send_task, server.url, done);
    const data = await rawSocket(server.url);
    data.send({ op: 'task.get', id: 'g', task_id: done.id, history_length: 1 });
    data.send({ op: 'task.list', id: 'l', page_size: 1 });
    const got = await data.next((f) => f.id === 'g');
    expect(got).toMatchObject({ op: 'result', task: { id: done.id, state: 'completed' } });
    expect((got.task as Task).messages).toHaveLength(1);
    const listed = await data.next((f) => f.id === 'l');
    expect(listed).toEqual({
      op: 'result',
      id: 'l',
      tasks: [expect.objectContaining({ id: done.id })],
      next_page_token: '',
    });
  });

  it("reads the task id from task_id only: the frame's id is the request id", async () => {
    const { server } = await serve();
    const done = task('echo hello');
    await client().send(CLIENT_OPERATIONS.send_task, server.url, done);
    const data = await rawSocket(server.url);
    data.send({ op: 'task.get', id: done.id });
    expect(await data.next((f) => f.id === done.id)).toMatchObject({
      op: 'error',
      error: { code: 'VALIDATION_FAILED', data: { errors: [{ pointer: '/task_id' }] } },
    });
  });

  it('serves the task API on the data connection only', async () => {
    const { server } = await serve();
    const control = await rawSocket(`${server.url}/control`);
    control.send({ op: 'task.list', id: 'l' });
    control.send({ op: 'task.subscribe', id: 's', task_id: 'x' });
    for (const id of ['l', 's']) {
      expect(await control.next((f) => f.id === id)).toMatchObject({
        op: 'error',
        error: { code: 'METHOD_NOT_FOUND' },
      });
    }
  });

  it('task.subscribe for an unknown id gets one error frame with TASK_NOT_FOUND and nothing else', async () => {
    const { server } = await serve();
    const data = await rawSocket(server.url);
    data.send({ op: 'task.subscribe', id: 's', task_id: 'no-such-task', after: 0 });
    expect(await data.next((f) => f.id === 's')).toMatchObject({
      op: 'error',
      id: 's',
      error: { code: 'TASK_NOT_FOUND' },
    });
    // A later answer on the same socket proves nothing more was sent for "s".
    data.send({ op: 'agent.card', id: 'after' });
    await data.next((f) => f.id === 'after');
    expect(data.frames.filter((f) => f.id === 's')).toHaveLength(1);
  });

  it('two subscriptions on one socket each get their own task, in sequence, each ending with its own result', async () => {
    const { server, handler } = await serve();
    const data = await rawSocket(server.url);
    const control = await rawSocket(`${server.url}/control`);
    const a = task('sleep');
    const b = task('sleep');
    data.send({ op: 'task.send', id: 'run-a', task: a, stream: true });
    data.send({ op: 'task.send', id: 'run-b', task: b, stream: true });
    await Promise.all([handler.whenRunning(a.id), handler.whenRunning(b.id)]);
    data.send({ op: 'task.subscribe', id: 'sub-a', task_id: a.id });
    data.send({ op: 'task.subscribe', id: 'sub-b', task_id: b.id, after: 1 });
    await until(
      () => eventsOf(data.frames, 'sub-a').length >= 3 && eventsOf(data.frames, 'sub-b').length >= 3,
    );
    control.send({ op: 'task.cancel', id: 'cancel-a', task_id: a.id });
    const endA = await data.next((f) => f.id === 'sub-a' && f.op === 'result');
    expect(endA).toMatchObject({ task: { id: a.id, state: 'canceled' } });
    // B's subscription is still open after A's ended.
    expect(data.frames.some((f) => f.id === 'sub-b' && f.op === 'result')).toBe(false);
    control.send({ op: 'task.cancel', id: 'cancel-b', task_id: b.id });
    const endB = await data.next((f) => f.id === 'sub-b' && f.op === 'result');
    expect(endB).toMatchObject({ task: { id: b.id, state: 'canceled' } });

    const ofA = eventsOf(data.frames, 'sub-a');
    const ofB = eventsOf(data.frames, 'sub-b');
    expect(ofA.every((event) => event.task_id === a.id)).toBe(true);
    expect(ofB.every((event) => event.task_id === b.id)).toBe(true);
    expect(ofA.map((event) => event.sequence)).toEqual(ofA.map((_, index) => index + 1));
    expect(ofB.map((event) => event.sequence)).toEqual(ofB.map((_, index) => index + 2));
    for (const events of [ofA, ofB]) {
      expect(events.filter((event) => event.type === 'task.status' && event.final)).toEqual([events.at(-1)]);
      expect(events.at(-1)).toMatchObject({ state: 'canceled' });
    }
    // A subscription numbers nothing of its own: it sees the same sequences as the task's stream.
    expect(ofA).toEqual(eventsOf(data.frames, 'run-a'));
  });
});

describe('subscribeTask', () => {
  it('an aborted subscription leaves its task running; a new one continues after the last sequence', async () => {
    const { server, handler } = await serve();
    const transport = client();
    const held = task('hold');
    const answer = transport.send<Task>(CLIENT_OPERATIONS.send_task, server.url, held);
    await handler.whenRunning(held.id);
    const controller = new AbortController();
    const seen: TaskEvent[] = [];
    const outcome = await (async () => {
      for await (const event of transport.subscribeTask(server.url, held.id, { signal: controller.signal })) {
        seen.push(event);
        controller.abort();
      }
    })().catch((error: unknown) => error);
    // The caller's abort, not the task's cancel: the task below is still working.
    expect(outcome).toMatchObject({ code: 'TASK_CANCELED' });
    expect(seen).toEqual([expect.objectContaining({ sequence: 1, state: 'working' })]);
    await expect(
      transport.send(CLIENT_OPERATIONS.get_task, server.url, { task_id: held.id }),
    ).resolves.toMatchObject({ state: 'working' });
    // Leaving the loop early is no cancel either.
    for await (const event of transport.subscribeTask(server.url, held.id)) if (event.sequence === 1) break;
    expect(handler.cancels).toEqual([]);
    const rest = transport.subscribeTask(server.url, held.id, { after: 1 });
    handler.release(held.id);
    expect(await collect(rest)).toEqual([
      expect.objectContaining({ sequence: 2, final: true, state: 'completed' }),
    ]);
    await expect(answer).resolves.toMatchObject({ state: 'completed' });
  });

  it('a subscription whose consumer falls behind fails on its own with SlowConsumerError; the task is not canceled', async () => {
    const { server, handler } = await serve();
    const transport = client({ maxQueuedEvents: 4 });
    const sleeping = task('sleep');
    // Started as a stream (read to its end by another client), so the task records its progress events.
    const run = collect(client().subscribe(server.url, sleeping));
    await handler.whenRunning(sleeping.id);
    const stalled = transport.subscribeTask(server.url, sleeping.id)[Symbol.asyncIterator]();
    const first = (await stalled.next()).value as TaskEvent;
    // The socket goes on for the other calls while this consumer reads nothing: a second
    // subscription to the same task, read until the stalled one must be more than 4 events behind.
    for await (const event of transport.subscribeTask(server.url, sleeping.id, { after: first.sequence })) {
      if ((event.sequence ?? 0) >= (first.sequence ?? 0) + 8) break;
    }
    const list = await transport.send<TaskList>(CLIENT_OPERATIONS.list_tasks, server.url, {});
    expect(list.tasks.map((t) => [t.id, t.state])).toEqual([[sleeping.id, 'working']]);
    const outcome = await collect({ [Symbol.asyncIterator]: () => stalled }).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(SlowConsumerError);
    expect(outcome).toMatchObject({ code: 'UNAVAILABLE', data: { max_queued_events: 4 } });
    expect(handler.cancels).toEqual([]);
    await expect(
      transport.send(CLIENT_OPERATIONS.get_task, server.url, { task_id: sleeping.id }),
    ).resolves.toMatchObject({ state: 'working' });
    await transport.send(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: sleeping.id });
    expect((await run).at(-1)).toMatchObject({ final: true, state: 'canceled' });
  });

  it('send() refuses the streaming subscribe_task: it goes through subscribeTask()', async () => {
    const { server } = await serve();
    await expect(
      client().send(CLIENT_OPERATIONS.subscribe_task, server.url, { task_id: 'x' }),
    ).rejects.toMatchObject({ code: 'UNSUPPORTED_OPERATION' });
  });
});
