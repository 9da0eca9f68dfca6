import {
  CLIENT_OPERATIONS,
  isFinalEvent,
  TaskNotCancelableError,
  UnavailableError,
  type Task,
  type TaskEvent,
} from '@agent/core';
import type { Socket } from 'node:net';
import { STREAM_WINDOW } from '@agent/server';
import { SlowConsumerError } from './client-stream.js';
import { client, closeAll, collect, rawSocket, serve, task, until } from './test-support/harness.js';

afterEach(closeAll);

function finals(events: TaskEvent[]): TaskEvent[] {
  return events.filter((event) => event.type === 'task.status' && event.final);
}

describe('streaming', () => {
  it('yields the events in order and ends after exactly one final status', async () => {
    const { server } = await serve();
    const sent = task('stream 5');
    const events = await collect(client().subscribe(server.url, sent));
    expect(events.map((event) => event.type)).toEqual([
      'task.status',
      ...Array<string>(5).fill('task.artifact'),
      'task.status',
    ]);
    expect(
      events
        .slice(1, 6)
        .map((event) => (event.type === 'task.artifact' ? event.artifact.parts[0]?.content : null)),
    ).toEqual(['chunk 0', 'chunk 1', 'chunk 2', 'chunk 3', 'chunk 4']);
    expect(finals(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({
      final: true,
      state: 'completed',
      task: { id: sent.id, state: 'completed' },
    });
  });

  it('sendTaskStream yields partial Tasks as artifacts arrive, then the finished Task', async () => {
    const { server } = await serve();
    const transport = client({ url: 'ws://127.0.0.1:1' });
    const sent = task('stream 3');
    const viaBase = await collect(transport.sendTaskStream(sent, { baseUrl: server.url }));
    expect(
      viaBase.map((result) => ('state' in result ? [result.state, result.artifacts.length] : ['message'])),
    ).toEqual([
      ['working', 1],
      ['working', 2],
      ['working', 3],
      ['completed', 0],
    ]);
    // The default target is the transport's own url.
    const own = client({ url: server.url });
    const results = await collect(own.sendTaskStream(task('stream 1')));
    expect(results.at(-1)).toMatchObject({ state: 'completed' });
  });

  it('a cancel on the control connection ends a running stream with one canceled status, then its result frame', async () => {
    const { server, handler } = await serve();
    const transport = client();
    const sleeping = task('sleep');
    const events = collect(transport.subscribe(server.url, sleeping));
    await handler.whenRunning(sleeping.id);
    const canceled = await transport.send<Task>(CLIENT_OPERATIONS.cancel_task, server.url, {
      task_id: sleeping.id,
      reason: 'user asked',
    });
    expect(canceled).toMatchObject({
      id: sleeping.id,
      state: 'canceled',
      metadata: { cancel_reason: 'user asked' },
    });
    const received = await events;
    const statuses = received.filter((event) => event.type === 'task.status' && event.state === 'canceled');
    expect(statuses).toHaveLength(1);
    expect(finals(received)).toHaveLength(1);
    expect(received.at(-1)).toMatchObject({
      type: 'task.status',
      state: 'canceled',
      final: true,
      task: { metadata: { cancel_reason: 'user asked' } },
    });
    expect(received.some((event) => event.type === 'task.error')).toBe(false);
    // Canceling again: the task is kept, finished.
    await expect(
      transport.send(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: sleeping.id }),
    ).rejects.toThrow(TaskNotCancelableError);
  });

  it('on the wire, the canceled final event is followed by exactly one result frame and nothing else', async () => {
    const { server, handler } = await serve();
    const data = await rawSocket(server.url);
    const control = await rawSocket(`${server.url}/control`);
    const sleeping = task('sleep');
    data.send({ op: 'task.send', id: 'run', task: sleeping, stream: true });
    await handler.whenRunning(sleeping.id);
    control.send({ op: 'task.cancel', id: 'c1', task_id: sleeping.id, reason: 'stop' });
    expect(await control.next((f) => f.id === 'c1')).toMatchObject({
      op: 'result',
      task: { state: 'canceled' },
    });
    await data.next((f) => f.op === 'result' && f.id === 'run');
    // A later frame proves nothing more was queued for "run".
    data.send({ op: 'agent.card', id: 'after' });
    await data.next((f) => f.id === 'after');
    const mine = data.frames.filter((f) => f.id === 'run');
    const canceledStatuses = mine.filter(
      (f) =>
        (f.event as TaskEvent | undefined)?.type === 'task.status' &&
        (f.event as { state: string }).state === 'canceled',
    );
    expect(canceledStatuses).toHaveLength(1);
    expect(mine.at(-2)).toMatchObject({
      op: 'event',
      event: { type: 'task.status', state: 'canceled', final: true },
    });
    expect(mine.at(-1)).toMatchObject({
      op: 'result',
      task: { state: 'canceled', metadata: { cancel_reason: 'stop' } },
    });
  });

  it('runs 100 concurrent streams on one socket, each ending with exactly one final status', async () => {
    const { server, handler } = await serve();
    const transport = client();
    const tasks = Array.from({ length: 100 }, (_, i) => task(`stream ${(i % 5) + 1}`));
    const all = await Promise.all(tasks.map((t) => collect(transport.subscribe(server.url, t))));
    all.forEach((events, i) => {
      const n = (i % 5) + 1;
      expect(events.every((event) => event.task_id === tasks[i]!.id)).toBe(true);
      expect(events).toHaveLength(n + 2);
      expect(finals(events)).toHaveLength(1);
      expect(isFinalEvent(events.at(-1)!)).toBe(true);
      expect(events.at(-1)).toMatchObject({ state: 'completed' });
    });
    expect(new Set(handler.contexts.map((ctx) => ctx.headers['sec-websocket-key'])).size).toBe(1);
  });

  it('a peer that stops reading holds back its own run, not the server: cancels still get through, then its events arrive in order', async () => {
    const total = 1000;
    const { server, handler } = await serve({ maxBufferedBytes: 256 * 1024 });
    const data = await rawSocket(server.url);
    // Stop reading at the TCP level: the server's socket buffer fills up and stays full.
    const tcp = (data.socket as unknown as { _socket: Socket })._socket;
    tcp.pause();
    const flood = task(`flood ${total} 65536`);
    data.send({ op: 'task.send', id: 'flood', task: flood, stream: true });
    // The run stops a bounded window ahead of what the peer took, instead of recording 64 MB for nobody.
    await until(() => handler.produced > STREAM_WINDOW);
    let before = -1;
    while (before !== handler.produced) {
      before = handler.produced;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(handler.produced).toBeLessThan(total);
    // The control connection is independent of the stalled data socket, and the cancel ends the run.
    const transport = client();
    await expect(
      transport.send<Task>(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: flood.id }),
    ).resolves.toMatchObject({ state: 'canceled' });
    await until(() => handler.activeTaskIds.length === 0);
    tcp.resume();
    const result = await data.next((f) => f.op === 'result' && f.id === 'flood');
    expect(result).toMatchObject({ task: { state: 'canceled' } });
    const events = data.frames
      .filter((f) => f.id === 'flood' && f.op === 'event')
      .map((f) => f.event as TaskEvent);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
    expect(finals(events)).toHaveLength(1);
  });

  it('one stream whose consumer stops reading fails on its own; other streams and calls on the socket go on', async () => {
    const total = 1000;
    const { server, handler } = await serve();
    const transport = client({ maxQueuedEvents: 4 });
    const stalled = transport.subscribe(server.url, task(`flood ${total} 65536`))[Symbol.asyncIterator]();
    // The first event proves the request is running; then this consumer reads nothing more.
    await stalled.next();
    const other = await collect(transport.subscribe(server.url, task('stream 20')));
    expect(other).toHaveLength(22);
    expect(other.at(-1)).toMatchObject({ final: true, state: 'completed' });
    await expect(
      transport.send<Task>(CLIENT_OPERATIONS.send_task, server.url, task('echo still flowing')),
    ).resolves.toMatchObject({ state: 'completed' });
    // The stalled stream failed once it fell 4 events behind; its task was not canceled.
    const outcome = await collect({ [Symbol.asyncIterator]: () => stalled }).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(SlowConsumerError);
    expect(outcome).toMatchObject({ code: 'UNAVAILABLE', data: { max_queued_events: 4 } });
    await until(() => handler.activeTaskIds.length === 0);
    expect(handler.produced).toBe(total);
    expect(handler.cancels).toHaveLength(0);
    // Each upgrade carries its own Sec-WebSocket-Key, so one key means one socket.
    expect(new Set(handler.contexts.map((ctx) => ctx.headers['sec-websocket-key'])).size).toBe(1);
  });

  it('two streams on one client: the one never read fails, the one read to its end completes', async () => {
    const { server } = await serve();
    const transport = client({ maxQueuedEvents: 8 });
    const neverRead = transport.subscribe(server.url, task('flood 1000 65536'))[Symbol.asyncIterator]();
    const first = neverRead.next();
    const read = collect(transport.subscribe(server.url, task('stream 50')));
    const events = await read;
    expect(events.at(-1)).toMatchObject({ final: true, state: 'completed' });
    expect((await first).done).toBe(false);
    const outcome = await collect({ [Symbol.asyncIterator]: () => neverRead }).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(SlowConsumerError);
  });

  it('stop() with open calls past stopGraceMs cancels their tasks: streams end canceled, unary calls get the canceled task', async () => {
    const { server, handler } = await serve({ stopGraceMs: 0 });
    const transport = client();
    const hung = [task('hang'), task('hang'), task('hang')];
    const streams = hung.map((t) => collect(transport.subscribe(server.url, t)));
    const unary = transport.send<Task>(CLIENT_OPERATIONS.send_task, server.url, task('hang'));
    await Promise.all(hung.map((t) => handler.whenRunning(t.id)));
    await until(() => handler.contexts.length === 4);
    await server.stop();
    for (const events of await Promise.all(streams)) {
      expect(finals(events)).toHaveLength(1);
      expect(events.at(-1)).toMatchObject({
        state: 'canceled',
        task: { metadata: { cancel_reason: 'server shutting down' } },
      });
    }
    expect(await unary).toMatchObject({
      state: 'canceled',
      metadata: { cancel_reason: 'server shutting down' },
    });
    await server.stop();
    await expect(transport.send(CLIENT_OPERATIONS.get_card, server.url)).rejects.toThrow(UnavailableError);
  });

  it('stop() drains: /readyz says stopping, new calls are refused, running ones finish, then it resolves', async () => {
    const { server, handler } = await serve({ stopGraceMs: 60_000 });
    const transport = client();
    const held = task('hold');
    const events = collect(transport.subscribe(server.url, held));
    // Keeps a failing assertion below from turning into an unhandled rejection at teardown.
    events.catch(() => undefined);
    await handler.whenRunning(held.id);
    const stopped = server.stop();
    const ready = await fetch(`${server.url.replace('ws://', 'http://')}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([503, { status: 'stopping' }]);
    // On the open data socket, and on new sockets (the handshake is refused with 503).
    await expect(transport.send(CLIENT_OPERATIONS.send_task, server.url, task('echo late'))).rejects.toThrow(
      UnavailableError,
    );
    await expect(client().send(CLIENT_OPERATIONS.get_card, server.url)).rejects.toThrow(UnavailableError);
    await expect(
      transport.send(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: held.id }),
    ).rejects.toThrow(UnavailableError);
    handler.release(held.id);
    const received = await events;
    expect(received.at(-1)).toMatchObject({ state: 'completed', final: true });
    await stopped;
  });
});
