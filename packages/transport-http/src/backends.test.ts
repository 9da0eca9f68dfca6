import { gzipSync } from 'node:zlib';
import express, { type Express } from 'express';
import { createTask, type CallContext, type Task } from '@agent/core';
import type { BackendOptions, HttpBackend, HttpEndpoint } from './backend.js';
import { ExpressBackend } from './express-backend.js';
import { HTTPTransport } from './http-transport.js';
import { NodeBackend } from './node-backend.js';
import { createTestAgent, rawRequest, type TestAgent } from '@agent/test-support';

/** A plugged-in backend: records what the transport hands it and serves through NodeBackend. */
class RecordingBackend implements HttpBackend {
  endpoints: readonly HttpEndpoint[] = [];
  started: Array<[string, number]> = [];
  stops = 0;
  private readonly inner: NodeBackend;

  constructor(readonly options: BackendOptions) {
    this.inner = new NodeBackend(options);
  }

  setupRoutes(endpoints: readonly HttpEndpoint[]): void {
    this.endpoints = endpoints;
    this.inner.setupRoutes(endpoints);
  }

  start(host: string, port: number): Promise<number> {
    this.started.push([host, port]);
    return this.inner.start(host, port);
  }

  async stop(): Promise<void> {
    this.stops += 1;
    await this.inner.stop();
  }
}

/** A transport on an express app of the test's own, with a fresh test agent bound. */
async function onApp(app: Express): Promise<{ transport: HTTPTransport; handler: TestAgent }> {
  const handler = createTestAgent({ announceWorking: false });
  const transport = new HTTPTransport({
    url: 'http://127.0.0.1:0',
    backend: (options) => new ExpressBackend({ ...options, app }),
  });
  transport.bind(handler);
  await transport.start();
  return { transport, handler };
}

describe('pluggable backends', () => {
  it('hands a custom backend the routes, the limits and the listen address', async () => {
    let backend: RecordingBackend | undefined;
    const transport = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      maxBodyBytes: 5000,
      stopGraceMs: 700,
      backend: (options) => (backend = new RecordingBackend(options)),
    });
    transport.bind(createTestAgent({ announceWorking: false }));
    await transport.start();
    try {
      expect(backend!.options).toEqual({ maxBodyBytes: 5000, basePath: '', state: expect.any(Function) });
      expect(backend!.options.state()).toBe('ready');
      expect(backend!.started).toEqual([['127.0.0.1', 0]]);
      expect(backend!.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual([
        'POST /tasks/',
        'POST /tasks/cancel',
        'GET /.well-known/agent.json',
        'POST /tasks/stream',
        'GET /tasks',
        'GET /tasks/{id}',
        'GET /tasks/{id}/events',
        'GET /openapi.json',
      ]);
      expect((await rawRequest(`${transport.url}/tasks/`, { body: createTask('plugged') })).status).toBe(200);
    } finally {
      await transport.stop();
      await transport.stop();
    }
    expect(backend!.stops).toBe(1);
  });

  it('mounts the routes into an existing express app, after its own middleware and routes', async () => {
    const app = express();
    const seen: string[] = [];
    app.use((req, _res, next) => {
      seen.push(req.path);
      next();
    });
    // An app that already parses JSON: the transport's parser steps aside and uses req.body.
    app.use(express.json());
    app.get('/custom', (_req, res) => {
      res.json({ custom: true });
    });
    const { transport } = await onApp(app);
    try {
      expect((await rawRequest(`${transport.url}/custom`)).json).toEqual({ custom: true });
      const task = createTask('mounted');
      const response = await rawRequest(`${transport.url}/tasks/`, { body: task });
      expect(response.status).toBe(200);
      expect((response.json as Task).state).toBe('completed');
      expect(seen).toEqual(['/custom', '/tasks/']);
      expect((await rawRequest(`${transport.url}/missing`)).status).toBe(404);
    } finally {
      await transport.stop();
    }
  });

  it('holds a body an app parsed itself to the same rules: a gzip body is refused, never used', async () => {
    const app = express();
    // express.json() inflates gzip by default; the transport still answers 400, as on the node backend.
    app.use(express.json());
    const { transport, handler } = await onApp(app);
    try {
      const response = await rawRequest(`${transport.url}/tasks/`, {
        body: gzipSync(JSON.stringify(createTask('zipped'))),
        headers: { 'content-encoding': 'gzip' },
      });
      expect(response.status).toBe(400);
      expect(response.json).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
      expect(handler.calls).toHaveLength(0);
    } finally {
      await transport.stop();
    }
  });

  it('serves a restarted transport on the same express app through its new pipeline', async () => {
    const { transport } = await onApp(express());
    await transport.stop();
    await transport.start();
    try {
      const response = await rawRequest(`${transport.url}/tasks/`, { body: createTask('again') });
      expect(response.status).toBe(200);
      expect((response.json as Task).state).toBe('completed');
    } finally {
      await transport.stop();
    }
  });

  it.each(['node', 'express'] as const)(
    '%s: a spread CallContext keeps its signal and headers',
    async (name) => {
      let copy: CallContext | undefined;
      const transport = new HTTPTransport({ url: 'http://127.0.0.1:0', backend: name });
      transport.onTaskReceived(async (task, ctx) => {
        copy = { ...ctx };
        return task;
      });
      await transport.start();
      try {
        await rawRequest(`${transport.url}/tasks/`, {
          body: createTask('spread'),
          headers: { 'X-Req': '1' },
        });
        expect(copy!.signal).toBeInstanceOf(AbortSignal);
        expect(copy!.headers['x-req']).toBe('1');
        expect(copy!.transport).toBe('http');
      } finally {
        await transport.stop();
      }
    },
  );

  it('stop() before start() resolves at once', async () => {
    await expect(new HTTPTransport({ url: 'http://127.0.0.1:0' }).stop()).resolves.toBeUndefined();
  });
});
