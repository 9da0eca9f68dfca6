import { Agent, request } from 'node:http';
import { createTask, type Task } from '@agent/core';
import { HTTPTransport } from './http-transport.js';
import type { BackendName } from './options.js';
import { createTestAgent, type TestAgent, rawRequest } from '@agent/test-support';

const BACKENDS: BackendName[] = ['node', 'express'];

describe.each(BACKENDS)('%s backend lifecycle', (backend) => {
  let transport: HTTPTransport;
  let handler: TestAgent;

  beforeEach(async () => {
    handler = createTestAgent({ announceWorking: false });
    transport = new HTTPTransport({ url: 'http://127.0.0.1:0', backend, stopGraceMs: 10_000 });
    transport.bind(handler);
    await transport.start();
  });

  afterEach(() => transport.stop());

  it('goes 503 stopping first, refuses new work, drains in-flight requests, then closes', async () => {
    handler.holdTasks();
    const task = createTask('in flight');
    const inFlight = rawRequest(`${transport.url}/tasks/`, { body: task });
    await handler.whenRunning(task.id);

    let stopped = false;
    const stopping = transport.stop().then(() => (stopped = true));
    const ready = await rawRequest(`${transport.url}/readyz`);
    expect([ready.status, ready.json]).toEqual([503, { status: 'stopping' }]);
    expect(ready.headers.connection).toBe('close');
    const health = await rawRequest(`${transport.url}/healthz`);
    expect(health.status).toBe(200);
    const refused = await rawRequest(`${transport.url}/tasks/`, { body: createTask('late') });
    expect(refused.status).toBe(503);
    expect((refused.json as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
    expect(stopped).toBe(false);

    handler.release(task.id);
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect((finished.json as Task).state).toBe('completed');
    await stopping;
    await expect(rawRequest(`${transport.url}/healthz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(transport.stop()).resolves.toBeUndefined();
  });

  it('closes idle keep-alive sockets on stop', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const closed = new Promise<void>((resolve) => {
        const req = request(`${transport.url}/healthz`, { agent }, (res) => {
          res.resume();
          res.on('end', () => undefined);
        });
        req.on('socket', (socket) => socket.once('close', () => resolve()));
        req.end();
      });
      // Wait until the response came back and the socket went idle in the pool.
      while (Object.keys(agent.freeSockets).length === 0)
        await new Promise((resolve) => setTimeout(resolve, 5));
      await transport.stop();
      await closed;
    } finally {
      agent.destroy();
    }
  });

  it('aborts requests that outlive stopGraceMs', async () => {
    await transport.stop();
    transport = new HTTPTransport({ url: 'http://127.0.0.1:0', backend, stopGraceMs: 50 });
    let reason: unknown;
    const started = new Promise<void>((resolve) => {
      transport.onTaskReceived(
        (task, ctx) =>
          new Promise<Task>((finish) => {
            resolve();
            ctx.signal.addEventListener('abort', () => {
              reason = ctx.signal.reason;
              finish({ ...task, state: 'canceled' });
            });
          }),
      );
    });
    await transport.start();
    const pending = rawRequest(`${transport.url}/tasks/`, { body: createTask('forever') });
    await started;
    await transport.stop();
    expect((reason as { code?: string }).code).toBe('UNAVAILABLE');
    const response = await pending.catch((error: unknown) => error);
    // Answered with the handler's result during the grace period, or cut off: never left hanging.
    expect(response).toBeDefined();
  });

  it('can start again after a stop', async () => {
    await transport.stop();
    await transport.start();
    expect((await rawRequest(`${transport.url}/readyz`)).json).toEqual({ status: 'ready' });
    expect((await rawRequest(`${transport.url}/tasks/`, { body: createTask('again') })).status).toBe(200);
  });
});

describe('stop during start', () => {
  it('waits for the listener and then closes it', async () => {
    const transport = new HTTPTransport({ url: 'http://127.0.0.1:0' });
    transport.bind(createTestAgent({ announceWorking: false }));
    const starting = transport.start();
    const stopping = transport.stop();
    await starting;
    const url = transport.url;
    await stopping;
    await expect(rawRequest(`${url}/healthz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
