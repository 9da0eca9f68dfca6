import { APIKeyAuth, Authenticator, SecurityContext, SecurityScheme } from '@agent/auth';
import {
  CLIENT_OPERATIONS,
  createTask,
  UnauthenticatedError,
  type ComponentDescriptor,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { describeComponent } from '@agent/core/internal';
import type { SSETransportOptions } from './options.js';
import { SSETransport } from './sse-transport.js';
import { startHarness, type Harness } from './test-support/harness.js';
import { rawRequest, rpcBody } from './test-support/raw-http.js';

const KEY = 'sk-test-0123456789';

/** An API-key authenticator that counts its calls and can be described for a worker thread. */
class CountingKeyAuth extends Authenticator {
  calls = 0;
  private readonly scheme = new SecurityScheme({ authType: 'apiKey' });
  constructor(private readonly key: string) {
    super();
  }
  get securityScheme(): SecurityScheme {
    return this.scheme;
  }
  async authenticate(credentials: string): Promise<SecurityContext> {
    this.calls += 1;
    if (credentials !== this.key) throw new Error('Invalid API key');
    return new SecurityContext({ principalId: 'counted', token: credentials });
  }
  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }
  describe(): ComponentDescriptor {
    return describeComponent('test', 'CountingKeyAuth', { key: this.key });
  }
}

/** The same without describe(): a transport using it cannot be rebuilt elsewhere. */
class OpaqueAuth extends CountingKeyAuth {
  override describe = undefined as unknown as () => ComponentDescriptor;
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('authentication', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ authenticator: new APIKeyAuth({ validKeys: { [KEY]: ['tasks'] } }) });
  });
  afterAll(() => h.stop());

  it('authenticates lazily once and sends the same headers on unary calls and streams', async () => {
    const clientAuth = new CountingKeyAuth(KEY);
    const client = new SSETransport({ url: h.url, authenticator: clientAuth, credentials: KEY });
    try {
      expect(clientAuth.calls).toBe(0);
      const task = await client.send<Task>(CLIENT_OPERATIONS.send_task, h.url, createTask('echo hi'));
      expect(task.state).toBe('completed');
      const events = await collect(client.subscribe(h.url, createTask('stream 2')));
      expect(events.at(-1)).toMatchObject({ type: 'task.status', state: 'completed' });
      expect(clientAuth.calls).toBe(1);
      const ctx = h.agent.contexts.at(-1)!;
      expect(ctx.security?.principalId).toBe(`api-key-${KEY.slice(0, 8)}`);
      expect(ctx.headers['x-api-key']).toBe(KEY);
      expect(ctx.headers.authorization).toBe(`ApiKey ${KEY}`);
    } finally {
      await client.stop();
    }
  });

  it('rejects a stream without credentials with 401 before any stream byte; the handler is never reached', async () => {
    const streamsBefore = h.agent.counts.handleTaskStreaming;
    const res = await rawRequest(`${h.url}/tasks/stream`, {
      body: rpcBody('tasks/stream', { task: createTask('stream 1') }),
    });
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.json).toEqual({ error: { code: 'UNAUTHENTICATED', message: 'Missing credentials' } });
    await expect(collect(h.client.subscribe(h.url, createTask('stream 1')))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
    expect(h.agent.counts.handleTaskStreaming).toBe(streamsBefore);
  });

  it('rejects a wrong key with 401 and never echoes it', async () => {
    const res = await rawRequest(`${h.url}/rpc`, {
      body: rpcBody('agent/card', {}),
      headers: { 'x-api-key': 'sk-wrong-key-value' },
    });
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ error: { code: 'UNAUTHENTICATED', message: 'Invalid API key' } });
    expect(res.text).not.toContain('sk-wrong-key-value');
    const wrongClient = new SSETransport({
      url: h.url,
      authenticator: new APIKeyAuth({ validKeys: { 'sk-wrong-key-value': [] } }),
      credentials: 'sk-wrong-key-value',
    });
    const failure = wrongClient.send(CLIENT_OPERATIONS.get_card, h.url);
    await expect(failure).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(failure).rejects.toMatchObject({ httpStatus: 401 });
    await wrongClient.stop();
  });

  it('authenticates again after the server refused the credential', async () => {
    const unknownKey = 'sk-unknown-to-the-server';
    const clientAuth = new CountingKeyAuth(unknownKey);
    const client = new SSETransport({ url: h.url, authenticator: clientAuth, credentials: unknownKey });
    try {
      await expect(client.send(CLIENT_OPERATIONS.get_card, h.url)).rejects.toBeInstanceOf(
        UnauthenticatedError,
      );
      await expect(collect(client.subscribe(h.url, createTask('stream 1')))).rejects.toBeInstanceOf(
        UnauthenticatedError,
      );
      expect(clientAuth.calls).toBe(2);
    } finally {
      await client.stop();
    }
  });

  it('protects the native card route but leaves the health routes public', async () => {
    expect((await rawRequest(`${h.url}/.well-known/agent.json`, { method: 'GET' })).status).toBe(401);
    expect((await rawRequest(`${h.url}/healthz`, { method: 'GET' })).status).toBe(200);
    expect((await rawRequest(`${h.url}/readyz`, { method: 'GET' })).status).toBe(200);
  });

  it('accepts the credential as an api_key query parameter', async () => {
    const res = await rawRequest(`${h.url}/rpc?api_key=${KEY}`, { body: rpcBody('agent/card', {}) });
    expect(res.json).toMatchObject({ result: { name: 'test-agent' } });
    const card = await h.client.send(CLIENT_OPERATIONS.get_card, h.url, undefined, { api_key: KEY });
    expect(card).toMatchObject({ name: 'test-agent' });
  });

  it('raises UnauthenticatedError when the client-side authenticator refuses the credential', async () => {
    const client = new SSETransport({
      url: h.url,
      authenticator: new APIKeyAuth({ validKeys: {} }),
      credentials: 'anything',
    });
    await expect(client.send(CLIENT_OPERATIONS.get_card, h.url)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: expect.stringContaining('Invalid API key'),
    });
    await expect(collect(client.subscribe(h.url, createTask('x')))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
  });

  it('authenticate() replaces the credential used by later calls', async () => {
    const client = new SSETransport({
      url: h.url,
      authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }),
    });
    await expect(client.send(CLIENT_OPERATIONS.get_card, h.url)).rejects.toBeInstanceOf(UnauthenticatedError);
    const context = await client.authenticate(KEY);
    expect(context.token).toBe(KEY);
    await expect(client.send(CLIENT_OPERATIONS.get_card, h.url)).resolves.toMatchObject({
      name: 'test-agent',
    });
    await client.stop();
  });
});

describe('describe() and options', () => {
  it('describes the client side with the authenticator nested', () => {
    const transport = new SSETransport({
      url: 'http://127.0.0.1:9000',
      timeoutMs: 1234,
      authenticator: new CountingKeyAuth('k'),
      credentials: 'k',
    });
    const descriptor = transport.describe();
    expect(descriptor).toEqual({
      $component: {
        module: '@agent/transport-sse',
        exportName: 'SSETransport',
        options: {
          url: 'http://127.0.0.1:9000',
          timeoutMs: 1234,
          maxBodyBytes: 4 * 1024 * 1024,
          validateSchema: false,
          maxResponseBytes: 64 * 1024 * 1024,
          credentials: 'k',
          authenticator: {
            $component: {
              module: 'test',
              exportName: 'CountingKeyAuth',
              options: { key: 'k' },
            },
          },
        },
      },
    });
    expect(structuredClone(descriptor)).toEqual(descriptor);
  });

  it('refuses to describe a transport whose authenticator cannot be described', () => {
    const transport = new SSETransport({ url: 'http://127.0.0.1:9000', authenticator: new OpaqueAuth('k') });
    expect(() => transport.describe()).toThrow(/cannot be rebuilt/);
  });

  it.each([
    [{ url: 'ws://127.0.0.1:1' }, /http or https/],
    [{ url: 'nonsense' }, /Invalid transport URL/],
    [{ url: 'http://127.0.0.1:1', timeoutMs: -1 }, /timeoutMs/],
    [{ url: 'http://127.0.0.1:1', heartbeatMs: Number.NaN }, /heartbeatMs/],
    [{ url: 'http://127.0.0.1:1', maxBodyBytes: 0 }, /maxBodyBytes/],
    [{ url: 'http://127.0.0.1:1', maxResponseBytes: 0 }, /maxResponseBytes/],
    [{ url: 'http://127.0.0.1:1', credentials: 'k' }, /authenticator/],
    [{ url: 'http://127.0.0.1:1', shutdownGraceMs: 5 }, /does not accept the option "shutdownGraceMs"/],
  ])('refuses bad options %j with a ValueError', (options, message) => {
    expect(() => new SSETransport(options as SSETransportOptions)).toThrow(message);
    expect(() => new SSETransport(options as SSETransportOptions)).toThrow(
      expect.objectContaining({ code: 'VALUE_ERROR' }),
    );
  });

  it('accepts timeoutMs 0 (no deadline) and heartbeatMs 0 (no heartbeat)', () => {
    const transport = new SSETransport({ url: 'http://127.0.0.1:1', timeoutMs: 0, heartbeatMs: 0 });
    expect(transport.timeoutMs).toBe(0);
    expect(transport.stopGraceMs).toBe(10_000);
  });

  it('refuses to start without a handler, twice, or on a port in use', async () => {
    const first = new SSETransport({ url: 'http://127.0.0.1:0' });
    await expect(first.start()).rejects.toMatchObject({ code: 'VALUE_ERROR' });
    first.onTaskReceived(async (task) => ({ ...task, state: 'completed' }));
    await first.start();
    await expect(first.start()).rejects.toMatchObject({ code: 'VALUE_ERROR' });
    const clash = new SSETransport({ url: `http://127.0.0.1:${first.port}` });
    clash.onTaskReceived(async (task) => task);
    await expect(clash.start()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await first.stop();
    await clash.stop();
  });

  it('starts again after stop()', async () => {
    const server = new SSETransport({ url: 'http://127.0.0.1:0' });
    server.onTaskReceived(async (task) => ({ ...task, state: 'completed' }));
    await server.start();
    await server.stop();
    await server.start();
    try {
      const done = await server.send<Task>(CLIENT_OPERATIONS.send_task, server.url, createTask('again'));
      expect(done.state).toBe('completed');
    } finally {
      await server.stop();
    }
  });

  it('validateUrl() knows local addresses from remote ones', () => {
    expect(new SSETransport({ url: 'http://localhost:8081' }).validateUrl()).toBe(true);
    expect(new SSETransport({ url: 'http://192.0.2.10:8081' }).validateUrl()).toBe(false);
  });
});
