import express from 'express';
import { createTask, type CallContext, type Task } from '@agent/core';
import type { BackendOptions, HttpBackend, HttpEndpoint } from './backend.js';
import { ExpressBackend } from './express-backend.js';
import { HTTPTransport } from './http-transport.js';
import { NodeBackend } from './node-backend.js';
import { createTestAgent, rawRequest } from '@agent/test-support';

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

describe('pluggable backends', () => {
  it('hands a custom backend the routes, the limits and the listen address', async () => {
    let backend: RecordingBackend | undefined;
    const transport = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      maxBodyBytes: 5000,
      stopTimeoutMs: 700,
      backend: (options) => (backend = new RecordingBackend(options)),
    });
    transport.bind(createTestAgent({ announceWorking: false }));
    await transport.start();
    try {
      expect(backend!.options).toEqual({ maxBodyBytes: 5000, stopTimeoutMs: 700 });
      expect(backend!.started).toEqual([['127.0.0.1', 0]]);
      expect(backend!.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual([
        'POST /tasks/',
        'POST /tasks/cancel',
        'GET /.well-known/agent.json',
        'GET /healthz',
        'GET /readyz',
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
    const handler = createTestAgent({ announceWorking: false });
    const transport = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      backend: (options) => new ExpressBackend({ ...options, app }),
    });
    transport.bind(handler);
    await transport.start();
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
