import {
  AgentError,
  CLIENT_OPERATIONS,
  DeadlineExceededError,
  PayloadTooLargeError,
  TaskNotFoundError,
  UnavailableError,
  UnsupportedOperationError,
  ValueError,
  type AgentCard,
  type Task,
} from '@agent/core';
import { APIKeyAuth } from '@agent/auth';
import { WebSocketTransport } from './websocket-transport.js';
import { client, closeAll, collect, rawSocket, serve, task, until } from './test-support/harness.js';

afterEach(closeAll);

describe('WebSocketTransport unary calls', () => {
  it('runs send_task over the data connection and reports the real url and port', async () => {
    const { server, handler } = await serve();
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`ws://127.0.0.1:${server.port}`);
    const sent = task('echo hello');
    const result = await client().send<Task>(CLIENT_OPERATIONS.send_task, server.url, sent);
    expect(result.id).toBe(sent.id);
    expect(result.state).toBe('completed');
    expect(result.messages.at(-1)?.parts[0]?.content).toBe('hello');
    expect(handler.contexts[0]?.transport).toBe('ws');
  });

  it('answers get_card with the agent card', async () => {
    const card: AgentCard = { name: 'carded', description: 'has a card', url: 'ws://x' };
    const { createDemoHandler } = await import('./test-support/harness.js');
    const { server } = await serve({}, createDemoHandler(card));
    await expect(client().send(CLIENT_OPERATIONS.get_card, server.url)).resolves.toEqual(card);
  });

  it('turns handler errors and unknown cancels into typed errors', async () => {
    const { server } = await serve();
    const transport = client();
    await expect(
      transport.send(CLIENT_OPERATIONS.send_task, server.url, task('throw on purpose')),
    ).rejects.toThrow(ValueError);
    const cancel = transport.send(CLIENT_OPERATIONS.cancel_task, server.url, {
      task_id: 'nope',
      reason: 'x',
    });
    await expect(cancel).rejects.toThrow(TaskNotFoundError);
  });

  it('matches many concurrent requests on one data socket by id', async () => {
    const { server, handler } = await serve();
    const transport = client();
    const tasks = Array.from({ length: 40 }, (_, i) => task(`echo n${i}`));
    const results = await Promise.all(
      tasks.map((t) => transport.send<Task>(CLIENT_OPERATIONS.send_task, server.url, t)),
    );
    results.forEach((result, i) => {
      expect(result.id).toBe(tasks[i]!.id);
      expect(result.messages.at(-1)?.parts[0]?.content).toBe(`n${i}`);
    });
    // Each upgrade carries its own Sec-WebSocket-Key, so one key means one socket.
    expect(new Set(handler.contexts.map((ctx) => ctx.headers['sec-websocket-key'])).size).toBe(1);
  });

  it('validates the task on the client before sending', async () => {
    const { server, handler } = await serve();
    const error = await client()
      .send(CLIENT_OPERATIONS.send_task, server.url, { id: 'x', state: 'bogus' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('VALIDATION_FAILED');
    expect(handler.contexts).toHaveLength(0);
  });

  it('refuses an unknown operation and points streams to subscribe', async () => {
    const { server } = await serve();
    const transport = client();
    await expect(
      transport.send({ name: 'frobnicate', method: 'POST', path: '/x' }, server.url),
    ).rejects.toMatchObject({ code: 'METHOD_NOT_FOUND' });
    await expect(
      transport.send(CLIENT_OPERATIONS.stream_task, server.url, task('echo')),
    ).rejects.toMatchObject({ code: 'UNSUPPORTED_OPERATION' });
  });

  it('enforces timeoutMs on the caller; the task belongs to the server and runs on, nothing is canceled', async () => {
    const { server, handler } = await serve();
    const transport = client({ timeoutMs: 100 });
    const hung = task('hang');
    await expect(transport.send(CLIENT_OPERATIONS.send_task, server.url, hung)).rejects.toThrow(
      DeadlineExceededError,
    );
    await expect(
      client().send<Task>(CLIENT_OPERATIONS.get_task, server.url, { task_id: hung.id }),
    ).resolves.toMatchObject({ state: 'working' });
    expect(handler.abortedCalls).toBe(0);
    await expect(
      transport.send<Task>(CLIENT_OPERATIONS.send_task, server.url, task('echo still here')),
    ).resolves.toMatchObject({ state: 'completed' });
  });

  it('refuses an oversized frame locally, and the server closes a socket that sends one', async () => {
    const { server } = await serve({ maxBodyBytes: 2048 });
    const big = task(`echo ${'y'.repeat(4096)}`);
    await expect(
      client({ maxBodyBytes: 1024 }).send(CLIENT_OPERATIONS.send_task, server.url, big),
    ).rejects.toThrow(PayloadTooLargeError);
    await expect(client().send(CLIENT_OPERATIONS.send_task, server.url, big)).rejects.toThrow(
      PayloadTooLargeError,
    );
  });

  it('fails with UnavailableError when nothing listens', async () => {
    const { server } = await serve();
    const url = server.url;
    await server.stop();
    await expect(client().send(CLIENT_OPERATIONS.get_card, url)).rejects.toThrow(UnavailableError);
  });

  it('reconnects dropped data and control connections on next use', async () => {
    const first = await serve();
    const port = first.server.port;
    const transport = client();
    await expect(
      transport.send(CLIENT_OPERATIONS.cancel_task, first.server.url, { task_id: 'a' }),
    ).rejects.toThrow(TaskNotFoundError);
    await expect(transport.send(CLIENT_OPERATIONS.get_card, first.server.url)).resolves.toMatchObject({
      name: 'demo',
    });
    await first.server.stop();
    const second = await serve({ url: `ws://127.0.0.1:${port}` });
    await expect(
      transport.send(CLIENT_OPERATIONS.cancel_task, second.server.url, { task_id: 'b' }),
    ).rejects.toThrow(TaskNotFoundError);
    await expect(transport.send(CLIENT_OPERATIONS.get_card, second.server.url)).resolves.toMatchObject({
      name: 'demo',
    });
    // The card reached the new server's handler; the cancel of an id nobody owns is the new
    // server's answer too, given before its handler.
    expect(second.handler.contexts).toHaveLength(1);
  });

  it('detaches a caller that abandons a stream: the task neither aborts nor is canceled', async () => {
    const { server, handler } = await serve();
    const controller = new AbortController();
    const hung = task('hang');
    const events = collect(client().subscribe(server.url, hung, { signal: controller.signal }));
    await handler.whenRunning(hung.id);
    controller.abort();
    await expect(events).rejects.toBeInstanceOf(AgentError);
    await expect(
      client().send<Task>(CLIENT_OPERATIONS.get_task, server.url, { task_id: hung.id }),
    ).resolves.toMatchObject({ state: 'working' });
    expect(handler.abortedCalls).toBe(0);
    expect(handler.cancels).toEqual([]);
  });
});

describe('WebSocketTransport frames', () => {
  it('answers malformed frames with error frames and keeps serving the socket', async () => {
    const { server } = await serve();
    const raw = await rawSocket(server.url);
    raw.send('not json');
    expect(await raw.next((f) => f.op === 'error' && f.id === null)).toMatchObject({
      error: { code: 'PARSE_ERROR' },
    });
    raw.send({ op: 'nope', id: 'a' });
    expect(await raw.next((f) => f.id === 'a')).toMatchObject({
      op: 'error',
      error: { code: 'INVALID_REQUEST' },
    });
    raw.send({ op: 'task.send', id: 'b', task: { id: 1 } });
    expect(await raw.next((f) => f.id === 'b')).toMatchObject({
      op: 'error',
      error: { code: 'VALIDATION_FAILED' },
    });
    raw.send({ op: 'task.cancel', id: 'c', task_id: 't' });
    expect(await raw.next((f) => f.id === 'c')).toMatchObject({
      op: 'error',
      error: { code: 'METHOD_NOT_FOUND' },
    });
    raw.send({ op: 'task.send', id: 'd', task: task('echo x'), stream: 'yes' });
    expect(await raw.next((f) => f.id === 'd')).toMatchObject({
      op: 'error',
      error: { code: 'INVALID_REQUEST' },
    });
    raw.socket.send(Buffer.from([1, 2, 3]));
    expect(
      await raw.next(
        (f) => f.op === 'error' && f.id === null && (f.error as { code: string }).code === 'INVALID_REQUEST',
      ),
    ).toBeTruthy();
    raw.send([1, 2]);
    raw.send({ op: 'task.send', id: 'e', task: task('echo fine') });
    expect(await raw.next((f) => f.id === 'e')).toMatchObject({ op: 'result', task: { state: 'completed' } });
  });

  it('refuses a second request with an id already in flight', async () => {
    const { server, handler } = await serve();
    const raw = await rawSocket(server.url);
    const hung = task('hang');
    raw.send({ op: 'task.send', id: 'same', task: hung, stream: true });
    await handler.whenRunning(hung.id);
    raw.send({ op: 'task.send', id: 'same', task: task('echo') });
    expect(await raw.next((f) => f.op === 'error' && f.id === 'same')).toMatchObject({
      error: { code: 'INVALID_REQUEST' },
    });
  });

  it('refuses requests beyond maxInFlightPerSocket with UNAVAILABLE', async () => {
    const { server, handler } = await serve({ maxInFlightPerSocket: 1 });
    const raw = await rawSocket(server.url);
    const hung = task('hang');
    raw.send({ op: 'task.send', id: 'first', task: hung, stream: true });
    await handler.whenRunning(hung.id);
    raw.send({ op: 'agent.card', id: 'second' });
    expect(await raw.next((f) => f.id === 'second')).toMatchObject({
      op: 'error',
      error: { code: 'UNAVAILABLE' },
    });
    raw.send({ op: 'call.abort', id: 'first' });
    // The aborted call leaves its slot as soon as the socket has let go of it (the task runs on).
    for (let attempt = 0; ; attempt++) {
      raw.send({ op: 'agent.card', id: `third-${attempt}` });
      const answer = await raw.next((f) => f.id === `third-${attempt}`);
      if (answer.op === 'result') {
        expect(answer).toMatchObject({ card: { name: 'demo' } });
        break;
      }
      expect(answer).toMatchObject({ op: 'error', error: { code: 'UNAVAILABLE' } });
    }
    expect(handler.abortedCalls).toBe(0);
  });

  it('serves agent.card on both connections and interleaves concurrent streams by id', async () => {
    const { server } = await serve();
    const control = await rawSocket(`${server.url}/control`);
    control.send({ op: 'agent.card', id: 'k' });
    expect(await control.next((f) => f.id === 'k')).toMatchObject({ op: 'result', card: { name: 'demo' } });
    const data = await rawSocket(server.url);
    for (const id of ['s1', 's2', 's3'])
      data.send({ op: 'task.send', id, task: task('stream 20'), stream: true });
    for (const id of ['s1', 's2', 's3']) await data.next((f) => f.op === 'result' && f.id === id);
    for (const id of ['s1', 's2', 's3']) {
      const mine = data.frames.filter((f) => f.id === id);
      expect(mine).toHaveLength(1 + 20 + 1 + 1);
      expect(mine.at(-2)).toMatchObject({
        op: 'event',
        event: { type: 'task.status', final: true, state: 'completed' },
      });
      expect(mine.at(-1)).toMatchObject({ op: 'result', task: { state: 'completed' } });
    }
  });

  it('detaches every call when the socket closes: their tasks run on', async () => {
    const { server, handler } = await serve();
    const raw = await rawSocket(server.url);
    const tasks = [task('hang'), task('hang')];
    raw.send({ op: 'task.send', id: '1', task: tasks[0], stream: true });
    raw.send({ op: 'task.send', id: '2', task: tasks[1] });
    await handler.whenRunning(tasks[0]!.id);
    await until(() => handler.contexts.length === 2);
    const closed = new Promise((resolve) => raw.socket.once('close', resolve));
    raw.socket.terminate();
    await closed;
    for (const { id } of tasks) {
      await expect(
        client().send<Task>(CLIENT_OPERATIONS.get_task, server.url, { task_id: id }),
      ).resolves.toMatchObject({ state: 'working' });
    }
    expect(handler.abortedCalls).toBe(0);
  });

  it('upgrades on the URL it advertises, its /control sibling and the earlier /ws paths', async () => {
    for (const url of ['ws://127.0.0.1:0', 'ws://127.0.0.1:0/agent/']) {
      const { server } = await serve({ url });
      const base = server.url.replace(/\/$/, '');
      for (const [path, op] of [
        ['', 'agent.card'],
        ['/', 'agent.card'],
        ['/control', 'task.cancel'],
        ['/ws', 'agent.card'],
        ['/ws/control', 'task.cancel'],
      ] as const) {
        const raw = await rawSocket(`${base}${path}`);
        raw.send({ op, id: 'x', task_id: 'unknown' });
        const answer = await raw.next((f) => f.id === 'x');
        if (op === 'agent.card') expect(answer).toMatchObject({ op: 'result', card: { name: 'demo' } });
        else expect(answer).toMatchObject({ op: 'error', error: { code: 'TASK_NOT_FOUND' } });
      }
      await expect(client().send(CLIENT_OPERATIONS.get_card, server.url)).resolves.toMatchObject({
        name: 'demo',
      });
    }
  });

  it('serves /healthz and /readyz and answers other HTTP requests with JSON errors', async () => {
    const { server } = await serve({ url: 'ws://127.0.0.1:0/agent' });
    const http = server.url.replace('ws://', 'http://');
    const health = await fetch(`${http}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`${http}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    for (const path of ['', '/control', '/ws']) {
      const plain = await fetch(`${http}${path}`);
      expect(plain.status).toBe(400);
      expect(await plain.json()).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    }
    const missing = await fetch(`${http}/elsewhere`);
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([
      404,
      'NOT_FOUND',
    ]);
    await expect(rawSocket(`${server.url}/nowhere`)).rejects.toThrow(/404/);
    await expect(client().send(CLIENT_OPERATIONS.get_card, server.url)).resolves.toMatchObject({
      name: 'demo',
    });
  });
});

describe('WebSocketTransport lifecycle and options', () => {
  it('describes its client side', () => {
    const transport = new WebSocketTransport({
      url: 'ws://127.0.0.1:9000',
      timeoutMs: 1234,
      maxQueuedEvents: 7,
      authenticator: new APIKeyAuth({ validKeys: { k: [] } }),
      credentials: 'k',
    });
    expect(transport.describe()).toEqual({
      $component: {
        module: '@agent/transport-ws',
        exportName: 'WebSocketTransport',
        options: expect.objectContaining({
          url: 'ws://127.0.0.1:9000',
          timeoutMs: 1234,
          maxQueuedEvents: 7,
          credentials: 'k',
        }),
      },
    });
  });

  it('nests the authenticator descriptor and refuses an authenticator that cannot describe itself', () => {
    const auth = new APIKeyAuth({ validKeys: { k: [] } });
    const described = new WebSocketTransport({
      url: 'ws://127.0.0.1:9000',
      authenticator: auth,
      credentials: 'k',
    }).describe();
    expect(described.$component.options.authenticator).toEqual(auth.describe());
    const opaque = new (class extends APIKeyAuth {})({ validKeys: {} });
    Object.defineProperty(opaque, 'describe', { value: undefined });
    expect(() =>
      new WebSocketTransport({ url: 'ws://127.0.0.1:9000', authenticator: opaque }).describe(),
    ).toThrow(UnsupportedOperationError);
  });

  it('rejects bad options with ValueError', () => {
    expect(() => new WebSocketTransport({ url: 'http://127.0.0.1:1' })).toThrow(ValueError);
    expect(() => new WebSocketTransport({ url: 'nonsense' })).toThrow(ValueError);
    expect(() => new WebSocketTransport({ url: 'ws://127.0.0.1:1', timeoutMs: -1 })).toThrow(ValueError);
    expect(() => new WebSocketTransport({ url: 'ws://127.0.0.1:1', maxBufferedBytes: Number.NaN })).toThrow(
      ValueError,
    );
    expect(() => new WebSocketTransport({ url: 'ws://127.0.0.1:1', maxQueuedEvents: 0 })).toThrow(ValueError);
    expect(() => new WebSocketTransport({ url: 'ws://127.0.0.1:1', credentials: 'k' })).toThrow(ValueError);
    // The stop grace is the shared `stopGraceMs`: the old name is an unknown option.
    expect(() => new WebSocketTransport({ url: 'ws://127.0.0.1:1', shutdownGraceMs: 5 } as never)).toThrow(
      /stopGraceMs/,
    );
    expect(new WebSocketTransport({ url: 'ws://127.0.0.1:1', timeoutMs: 0 }).timeoutMs).toBe(0);
  });

  it('validates its own URL as local', () => {
    expect(new WebSocketTransport({ url: 'ws://127.0.0.1:1' }).validateUrl()).toBe(true);
    expect(new WebSocketTransport({ url: 'ws://example.com:1' }).validateUrl()).toBe(false);
  });

  it('needs tls material for a wss server, a handler to start, and bind before start', async () => {
    const secure = new WebSocketTransport({ url: 'wss://127.0.0.1:0' });
    secure.onTaskReceived(async (t) => t);
    await expect(secure.start()).rejects.toThrow(ValueError);
    await expect(client().start()).rejects.toThrow(ValueError);
    const { server } = await serve();
    expect(() => server.bind({} as never)).toThrow(ValueError);
  });

  it('accepts http(s) and /ws-suffixed base URLs for the client', async () => {
    const { server } = await serve();
    const transport = client();
    await expect(
      transport.send(CLIENT_OPERATIONS.get_card, server.url.replace('ws://', 'http://')),
    ).resolves.toMatchObject({ name: 'demo' });
    await expect(transport.send(CLIENT_OPERATIONS.get_card, `${server.url}/ws`)).resolves.toMatchObject({
      name: 'demo',
    });
    await expect(transport.send(CLIENT_OPERATIONS.get_card, 'ftp://127.0.0.1:1')).rejects.toThrow(ValueError);
  });
});
