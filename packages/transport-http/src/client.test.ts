import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIKeyAuth, Authenticator, SecurityContext, SecurityScheme } from '@agent/auth';
import {
  type AgentError,
  CLIENT_OPERATIONS,
  DeadlineExceededError,
  InternalError,
  PayloadTooLargeError,
  TaskCanceledError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnavailableError,
  UnsupportedOperationError,
  ValidationError,
  ValueError,
  createTask,
  type AgentCard,
  type ComponentDescriptor,
  type Task,
} from '@agent/core';
import { describeComponent } from '@agent/core/internal';
import { HTTPTransport } from './http-transport.js';
import type { HttpResponseError } from './client.js';
import { createTestAgent, type TestAgent } from '@agent/test-support';

const SERVER_KEY = 'sk-server-key-abcdef';

/** APIKeyAuth that counts authenticate() calls and can describe itself for worker rebuilds. */
class CountingKeyAuth extends APIKeyAuth {
  calls = 0;
  override async authenticate(credentials: string): Promise<SecurityContext> {
    this.calls += 1;
    return super.authenticate(credentials);
  }
  override describe(): ComponentDescriptor {
    return describeComponent('@agent/auth', 'APIKeyAuth', { validKeys: this.validKeys });
  }
}

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    return error as AgentError;
  }
  throw new Error('expected a rejection');
}

describe('HTTPTransport client side', () => {
  let server: HTTPTransport;
  let handler: TestAgent;
  const clients: HTTPTransport[] = [];

  function client(options: Partial<ConstructorParameters<typeof HTTPTransport>[0]> = {}): HTTPTransport {
    const transport = new HTTPTransport({ url: server.url, ...options });
    clients.push(transport);
    return transport;
  }

  beforeEach(async () => {
    handler = createTestAgent({ announceWorking: false });
    server = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      authenticator: new APIKeyAuth({ validKeys: { [SERVER_KEY]: [] } }),
    });
    server.bind(handler);
    await server.start();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.stop()));
    await server.stop();
  });

  function authed(): HTTPTransport {
    return client({
      authenticator: new APIKeyAuth({ validKeys: { [SERVER_KEY]: [] } }),
      credentials: SERVER_KEY,
    });
  }

  it('sends a task and resolves with the finished Task', async () => {
    const task = createTask('ping');
    const result = await authed().send<Task>(CLIENT_OPERATIONS.send_task, server.url, task);
    expect(result).toMatchObject({ id: task.id, state: 'completed' });
    expect(result.messages[1]!.parts[0]!.content).toBe('ping');
  });

  it('reads the card with a GET', async () => {
    const card = await authed().send<AgentCard>(CLIENT_OPERATIONS.get_card, server.url);
    expect(card.name).toBe('test-agent');
    expect(card.securitySchemes?.apiKey?.type).toBe('apiKey');
  });

  it("subscribe() streams the handler's events, ending with one final task.status carrying the Task", async () => {
    const task = createTask('stream 3');
    const events = [];
    for await (const event of authed().subscribe(server.url, task)) events.push(event);
    expect(events.map((e) => e.type)).toEqual([
      'task.artifact',
      'task.artifact',
      'task.artifact',
      'task.status',
    ]);
    expect(events.at(-1)).toMatchObject({
      type: 'task.status',
      task_id: task.id,
      state: 'completed',
      final: true,
    });
    expect((events.at(-1) as { task: Task }).task.id).toBe(task.id);
  });

  it('authenticates lazily, once, and sends both API key headers', async () => {
    const auth = new CountingKeyAuth({ validKeys: { [SERVER_KEY]: [] } });
    const transport = client({ authenticator: auth, credentials: SERVER_KEY });
    expect(auth.calls).toBe(0);
    await transport.send(CLIENT_OPERATIONS.send_task, server.url, createTask('a'));
    await transport.send(CLIENT_OPERATIONS.send_task, server.url, createTask('b'));
    expect(auth.calls).toBe(1);
    const headers = handler.calls[0]!.ctx.headers;
    expect(headers['x-api-key']).toBe(SERVER_KEY);
    expect(headers.authorization).toBe(`ApiKey ${SERVER_KEY}`);
  });

  it('turns a 401 into UnauthenticatedError carrying 401, and authenticates again on the next call', async () => {
    const clientKey = 'sk-client-only-key';
    const auth = new CountingKeyAuth({ validKeys: { [clientKey]: [] } });
    const transport = client({ authenticator: auth, credentials: clientKey });
    const error = (await rejection(
      transport.send(CLIENT_OPERATIONS.send_task, server.url, createTask('x')),
    )) as HttpResponseError;
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.status).toBe(401);
    expect(error.httpStatus).toBe(401);
    expect(error.message).not.toContain(clientKey);
    await rejection(transport.send(CLIENT_OPERATIONS.send_task, server.url, createTask('y')));
    expect(auth.calls).toBe(2);
    expect(handler.calls).toHaveLength(0);
  });

  it('sends without credentials when none are configured (and the server refuses)', async () => {
    const error = await rejection(client().send(CLIENT_OPERATIONS.get_card, server.url));
    expect(error).toBeInstanceOf(UnauthenticatedError);
  });

  it('reports a local authentication failure as UnauthenticatedError without the credential', async () => {
    const transport = client({
      authenticator: new APIKeyAuth({ validKeys: { other: [] } }),
      credentials: 'sk-not-known-here',
    });
    const error = await rejection(transport.send(CLIENT_OPERATIONS.get_card, server.url));
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect(error.message).toMatch(/^Client authentication failed/);
    expect(error.message).not.toContain('sk-not-known-here');
  });

  it('authenticate() replaces the credentials used by later calls', async () => {
    const transport = client({ authenticator: new APIKeyAuth({ validKeys: { [SERVER_KEY]: [] } }) });
    const context = await transport.authenticate(SERVER_KEY);
    expect(context.token).toBe(SERVER_KEY);
    expect(await transport.buildHeaders()).toEqual({
      'X-API-Key': SERVER_KEY,
      Authorization: `ApiKey ${SERVER_KEY}`,
    });
    await expect(
      transport.send(CLIENT_OPERATIONS.send_task, server.url, createTask('x')),
    ).resolves.toMatchObject({
      state: 'completed',
    });
    await expect(client().authenticate('x')).rejects.toBeInstanceOf(ValueError);
  });

  it('re-authenticates when the cached context has expired', async () => {
    class ExpiringAuth extends CountingKeyAuth {
      override async authenticate(credentials: string): Promise<SecurityContext> {
        const context = await super.authenticate(credentials);
        return new SecurityContext({
          principalId: context.principalId,
          token: context.token,
          expiresAt: '2000-01-01T00:00:00Z',
        });
      }
    }
    const auth = new ExpiringAuth({ validKeys: { [SERVER_KEY]: [] } });
    const transport = client({ authenticator: auth, credentials: SERVER_KEY });
    await transport.send(CLIENT_OPERATIONS.get_card, server.url);
    await transport.send(CLIENT_OPERATIONS.get_card, server.url);
    expect(auth.calls).toBeGreaterThanOrEqual(3);
  });

  it('rebuilds typed errors from error bodies', async () => {
    const transport = authed();
    const notFound = (await rejection(
      transport.send(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: 'missing' }),
    )) as HttpResponseError;
    expect(notFound).toBeInstanceOf(TaskNotFoundError);
    expect(notFound.status).toBe(404);
    const task = createTask('finish');
    await transport.send(CLIENT_OPERATIONS.send_task, server.url, task);
    const finished = await rejection(
      transport.send(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: task.id }),
    );
    expect(finished).toBeInstanceOf(TaskNotCancelableError);
    const invalid = await rejection(
      transport.send(CLIENT_OPERATIONS.send_task, server.url, { state: 'nope' }),
    );
    expect(invalid).toBeInstanceOf(ValidationError);
    expect((invalid.data as { errors: unknown[] }).errors.length).toBeGreaterThan(0);
  });

  it('cancels a running task through send()', async () => {
    handler.holdTasks();
    const transport = authed();
    const task = createTask('sleep');
    const pending = transport.send<Task>(CLIENT_OPERATIONS.send_task, server.url, task);
    await handler.whenRunning(task.id);
    const canceled = await transport.send<Task>(CLIENT_OPERATIONS.cancel_task, server.url, {
      task_id: task.id,
      reason: 'stop',
    });
    expect(canceled).toMatchObject({ state: 'canceled', metadata: { cancel_reason: 'stop' } });
    await expect(pending).resolves.toMatchObject({ state: 'canceled' });
  });

  it('times out with DeadlineExceededError after timeoutMs', async () => {
    handler.holdTasks();
    const task = createTask('slow');
    const error = await rejection(
      authed().send(CLIENT_OPERATIONS.send_task, server.url, task, undefined, { timeoutMs: 50 }),
    );
    expect(error).toBeInstanceOf(DeadlineExceededError);
    handler.release(task.id);
  });

  it('turns a caller abort into TaskCanceledError', async () => {
    handler.holdTasks();
    const task = createTask('slow');
    const controller = new AbortController();
    const pending = authed().send(CLIENT_OPERATIONS.send_task, server.url, task, undefined, {
      signal: controller.signal,
    });
    await handler.whenRunning(task.id);
    controller.abort();
    expect(await rejection(pending)).toBeInstanceOf(TaskCanceledError);
    handler.release(task.id);
  });

  it('turns a refused connection into UnavailableError with the network code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await rejection(client().send(CLIENT_OPERATIONS.get_card, `http://127.0.0.1:${port}`));
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.data).toEqual({ code: 'ECONNREFUSED' });
  });

  describe('against a server that does not speak the error body', () => {
    let foreign: Server;
    let foreignUrl: string;

    beforeAll(async () => {
      foreign = createServer((req, res) => {
        if (req.url === '/.well-known/agent.json') {
          res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not json</html>');
          return;
        }
        res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad Gateway from a proxy');
      });
      await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
      foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
    });

    afterAll(() => new Promise<void>((resolve) => foreign.close(() => resolve())));

    it('maps a plain-text error page by its status', async () => {
      const error = (await rejection(
        client().send(CLIENT_OPERATIONS.send_task, foreignUrl, createTask('x')),
      )) as HttpResponseError;
      expect(error).toBeInstanceOf(InternalError);
      expect(error.status).toBe(502);
      expect(error.message).toContain('502');
    });

    it('refuses a success response that is not JSON', async () => {
      expect(await rejection(client().send(CLIENT_OPERATIONS.get_card, foreignUrl))).toBeInstanceOf(
        InternalError,
      );
    });
  });

  describe('against a server that answers more than maxResponseBytes', () => {
    const LIMIT = 64 * 1024;
    let flood: Server;
    let floodUrl: string;

    beforeAll(async () => {
      // Streams up to 16 times the limit in 8 KiB chunks, chunked (no Content-Length to check first).
      flood = createServer((req, res) => {
        const status = req.url === '/.well-known/agent.json' ? 200 : 500;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.on('error', () => undefined);
        const chunk = Buffer.alloc(8 * 1024, 'x');
        let sent = 0;
        const pump = (): void => {
          while (sent < LIMIT * 16 && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        res.write('{"name":"');
        pump();
      });
      await new Promise<void>((resolve) => flood.listen(0, '127.0.0.1', resolve));
      floodUrl = `http://127.0.0.1:${(flood.address() as AddressInfo).port}`;
    });

    afterAll(() => {
      flood.closeAllConnections();
      return new Promise<void>((resolve) => flood.close(() => resolve()));
    });

    it('stops reading and throws PayloadTooLargeError naming the limit', async () => {
      const error = await rejection(
        client({ maxResponseBytes: LIMIT }).send(CLIENT_OPERATIONS.get_card, floodUrl),
      );
      expect(error).toBeInstanceOf(PayloadTooLargeError);
      expect(error.message).toContain(`${LIMIT} bytes`);
      expect(error.data).toEqual({ max_response_bytes: LIMIT });
    });

    it('applies the limit to error responses too', async () => {
      const error = await rejection(
        client({ maxResponseBytes: LIMIT }).send(CLIENT_OPERATIONS.send_task, floodUrl, createTask('x')),
      );
      expect(error).toBeInstanceOf(PayloadTooLargeError);
    });

    it('reads a response under the limit', async () => {
      const card = await client({
        maxResponseBytes: LIMIT,
        authenticator: new APIKeyAuth({ validKeys: { [SERVER_KEY]: [] } }),
        credentials: SERVER_KEY,
      }).send<AgentCard>(CLIENT_OPERATIONS.get_card, server.url);
      expect(card.name).toBe('test-agent');
    });
  });

  it('refuses streaming specs and non-http base URLs', async () => {
    const transport = client();
    expect(
      await rejection(transport.send(CLIENT_OPERATIONS.stream_task, server.url, createTask('x'))),
    ).toBeInstanceOf(UnsupportedOperationError);
    expect(await rejection(transport.send(CLIENT_OPERATIONS.get_card, 'ws://127.0.0.1:1'))).toBeInstanceOf(
      ValueError,
    );
    expect(await rejection(transport.send(CLIENT_OPERATIONS.get_card, 'not a url'))).toBeInstanceOf(
      ValueError,
    );
  });

  describe('describe()', () => {
    it('describes the client side with the authenticator nested', () => {
      const auth = new CountingKeyAuth({ validKeys: { [SERVER_KEY]: [] } });
      const transport = client({
        authenticator: auth,
        credentials: SERVER_KEY,
        timeoutMs: 1234,
        backend: 'express',
      });
      const descriptor = transport.describe();
      expect(descriptor.$component).toEqual({
        module: '@agent/transport-http',
        exportName: 'HTTPTransport',
        options: {
          url: server.url,
          timeoutMs: 1234,
          maxBodyBytes: 4 * 1024 * 1024,
          maxResponseBytes: 4 * 1024 * 1024,
          validateSchema: false,
          backend: 'express',
          credentials: SERVER_KEY,
          authenticator: auth.describe(),
        },
      });
      expect(structuredClone(descriptor)).toEqual(descriptor);
    });

    it('refuses to describe an authenticator that cannot describe itself', () => {
      class OpaqueAuth extends Authenticator {
        get securityScheme(): SecurityScheme {
          return new SecurityScheme({ authType: 'apiKey' });
        }
        async authenticate(credentials: string): Promise<SecurityContext> {
          return new SecurityContext({ principalId: 'opaque', token: credentials });
        }
        async refreshToken(context: SecurityContext): Promise<SecurityContext> {
          return context;
        }
      }
      const transport = client({ authenticator: new OpaqueAuth() });
      expect(() => transport.describe()).toThrow(UnsupportedOperationError);
    });
  });
});

describe('HTTPTransport configuration', () => {
  it.each([
    ['a missing url', {}],
    ['an unparsable url', { url: 'nope' }],
    ['a ws url', { url: 'ws://127.0.0.1:1' }],
    ['a server certificate with an http url', { url: 'http://127.0.0.1:1', tls: { cert: 'x', key: 'y' } }],
    ['the old stopTimeoutMs option', { url: 'http://127.0.0.1:1', stopTimeoutMs: 10 }],
    ['a negative maxResponseBytes', { url: 'http://127.0.0.1:1', maxResponseBytes: -1 }],
    ['a negative timeout', { url: 'http://127.0.0.1:1', timeoutMs: -1 }],
    ['a non-numeric body limit', { url: 'http://127.0.0.1:1', maxBodyBytes: Number.NaN }],
    ['an unknown backend', { url: 'http://127.0.0.1:1', backend: 'koa' }],
    ['credentials without an authenticator', { url: 'http://127.0.0.1:1', credentials: 'k' }],
  ])('refuses %s with ValueError', (_name, options) => {
    expect(() => new HTTPTransport(options as ConstructorParameters<typeof HTTPTransport>[0])).toThrow(
      ValueError,
    );
  });

  it('starts only with a handler, once, and reports the real port', async () => {
    const transport = new HTTPTransport({ url: 'http://127.0.0.1:0' });
    await expect(transport.start()).rejects.toBeInstanceOf(ValueError);
    transport.onTaskReceived(async (task) => ({ ...task, state: 'completed' }));
    await transport.start();
    try {
      expect(transport.port).toBeGreaterThan(0);
      expect(transport.url).toBe(`http://127.0.0.1:${transport.port}`);
      await expect(transport.start()).rejects.toBeInstanceOf(ValueError);
      const card = await transport.send<AgentCard>(CLIENT_OPERATIONS.get_card, transport.url);
      expect(card.url).toBe(transport.url);
      const done = await transport.send<Task>(CLIENT_OPERATIONS.send_task, transport.url, createTask('fn'));
      expect(done.state).toBe('completed');
    } finally {
      await transport.stop();
    }
  });

  it('refuses a port that is taken with UnavailableError', async () => {
    const first = new HTTPTransport({ url: 'http://127.0.0.1:0' });
    first.bind(createTestAgent({ announceWorking: false }));
    await first.start();
    const second = new HTTPTransport({ url: `http://127.0.0.1:${first.port}` });
    second.bind(createTestAgent({ announceWorking: false }));
    try {
      await expect(second.start()).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await first.stop();
      await second.stop();
    }
  });

  it('validateUrl() accepts local URLs and refuses remote ones', async () => {
    expect(new HTTPTransport({ url: 'http://127.0.0.1:0' }).validateUrl()).toBe(true);
    expect(new HTTPTransport({ url: 'http://localhost:8080' }).validateUrl()).toBe(true);
    expect(new HTTPTransport({ url: 'http://0.0.0.0:8080' }).validateUrl()).toBe(true);
    expect(new HTTPTransport({ url: 'http://[::1]:8080' }).validateUrl()).toBe(true);
    expect(new HTTPTransport({ url: 'http://example.com:8080' }).validateUrl()).toBe(false);
    expect(new HTTPTransport({ url: 'http://203.0.113.9:80' }).validateUrl()).toBe(false);
    const local = new HTTPTransport({ url: 'http://127.0.0.1:8080' });
    expect(local.validateUrl('http://localhost:8080/tasks/')).toBe(true);
    expect(local.validateUrl('http://localhost:9090')).toBe(false);
    expect(local.validateUrl('http://example.com:8080')).toBe(false);
    expect(local.validateUrl('garbage')).toBe(false);
  });
});
