import { gzipSync } from 'node:zlib';
import { APIKeyAuth } from '@agent/auth';
import { BudgetExceededError, createTask, type CallContext, type Task } from '@agent/core';
import { HTTPTransport } from './http-transport.js';
import type { BackendName } from './options.js';
import { RecordingLogger } from '@agent/server/testing';
import { createTestAgent, type TestAgent, rawRequest, type RawResponse } from '@agent/test-support';

const BACKENDS: BackendName[] = ['node', 'express'];
const KEY = 'sk-route-test-0123456789';

function errorOf(response: RawResponse): { code: string; message: string; data?: unknown } {
  return (response.json as { error: { code: string; message: string; data?: unknown } }).error;
}

describe.each(BACKENDS)('%s backend routes', (backend) => {
  let transport: HTTPTransport;
  let handler: TestAgent;
  let logger: RecordingLogger;
  let base: string;

  async function serve(options: Partial<ConstructorParameters<typeof HTTPTransport>[0]> = {}): Promise<void> {
    handler = createTestAgent({ announceWorking: false });
    logger = new RecordingLogger();
    transport = new HTTPTransport({ url: 'http://127.0.0.1:0', backend, logger, ...options });
    transport.bind(handler);
    await transport.start();
    base = transport.url;
  }

  afterEach(async () => {
    await transport?.stop();
  });

  describe('without an authenticator', () => {
    beforeEach(() => serve({ maxBodyBytes: 2048 }));

    it('runs a task on POST /tasks/ and answers the finished Task', async () => {
      const task = createTask('hello');
      const response = await rawRequest(`${base}/tasks/`, { body: task });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const result = response.json as Task;
      expect(result.id).toBe(task.id);
      expect(result.state).toBe('completed');
      expect(result.messages[1]!.parts[0]!.content).toBe('hello');
      expect(handler.calls).toHaveLength(1);
    });

    it('streams a task on POST /tasks/stream as text/event-stream frames', async () => {
      const task = createTask('stream 1');
      const response = await rawRequest(`${base}/tasks/stream`, { body: task });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(response.text).toMatch(
        /^id: 1\nevent: task\.artifact\ndata: \{.*\}\n\nid: 2\nevent: task\.status\ndata: \{.*\}\n\n$/,
      );
      const wrongMethod = await rawRequest(`${base}/tasks/stream`, { method: 'PUT', body: '{}' });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.allow).toBe('POST, GET');
      // A GET of that path reads the task whose id is `stream`.
      const read = await rawRequest(`${base}/tasks/stream`);
      expect([read.status, errorOf(read).code]).toEqual([404, 'TASK_NOT_FOUND']);
    });

    it('serves /tasks without the trailing slash as the same route', async () => {
      const response = await rawRequest(`${base}/tasks`, { body: createTask('no slash') });
      expect(response.status).toBe(200);
      expect((response.json as Task).state).toBe('completed');
    });

    it('hands the handler an http CallContext with lowercase headers and a live signal', async () => {
      await rawRequest(`${base}/tasks/`, { body: createTask('ctx'), headers: { 'X-Trace-Id': 'abc' } });
      const ctx: CallContext = handler.calls[0]!.ctx;
      expect(ctx.transport).toBe('http');
      expect(ctx.headers['x-trace-id']).toBe('abc');
      expect(ctx.security).toBeUndefined();
      expect(ctx.signal.aborted).toBe(false);
    });

    it('fills task defaults: a body with only an id is a valid Task', async () => {
      const response = await rawRequest(`${base}/tasks/`, { body: { id: 't-minimal' } });
      expect(response.status).toBe(200);
      expect(handler.calls[0]!.task).toMatchObject({
        id: 't-minimal',
        state: 'submitted',
        messages: [],
        artifacts: [],
      });
    });

    it('serves the card without securitySchemes, and health and readiness', async () => {
      const card = await rawRequest(`${base}/.well-known/agent.json`);
      expect(card.status).toBe(200);
      expect(card.json).toEqual({ name: 'test-agent', description: 'a test agent', url: '' });
      const health = await rawRequest(`${base}/healthz`);
      expect([health.status, health.json]).toEqual([200, { status: 'ok' }]);
      const ready = await rawRequest(`${base}/readyz`);
      expect([ready.status, ready.json]).toEqual([200, { status: 'ready' }]);
    });

    it('answers HEAD on a GET route without a body', async () => {
      const response = await rawRequest(`${base}/healthz`, { method: 'HEAD' });
      expect(response.status).toBe(200);
      expect(response.text).toBe('');
    });

    it('answers an unknown route with a 404 JSON error', async () => {
      const response = await rawRequest(`${base}/nope?x=1`);
      expect(response.status).toBe(404);
      expect(errorOf(response).code).toBe('NOT_FOUND');
    });

    it('answers a wrong method with 405 and an Allow header', async () => {
      const response = await rawRequest(`${base}/tasks/`, { method: 'DELETE' });
      expect(response.status).toBe(405);
      expect(errorOf(response).code).toBe('METHOD_NOT_ALLOWED');
      expect(response.headers.allow).toBe('POST, GET');
      const cancel = await rawRequest(`${base}/tasks/cancel`, { method: 'PUT', body: '{}' });
      expect([cancel.status, cancel.headers.allow]).toEqual([405, 'POST, GET']);
      for (const path of ['/tasks/t1', '/tasks/t1/events']) {
        const post = await rawRequest(`${base}${path}`, { body: '{}' });
        expect([path, post.status, post.headers.allow]).toEqual([path, 405, 'GET']);
      }
      const card = await rawRequest(`${base}/.well-known/agent.json`, { method: 'PUT', body: '{}' });
      expect(card.status).toBe(405);
      expect(card.headers.allow).toBe('GET');
      // Health and readiness are the host's GET/HEAD probes; any other method is no route.
      const put = await rawRequest(`${base}/healthz`, { method: 'PUT', body: '{}' });
      expect(put.status).toBe(404);
      expect(errorOf(put).code).toBe('NOT_FOUND');
    });

    it('refuses malformed JSON with 400 INVALID_REQUEST', async () => {
      const response = await rawRequest(`${base}/tasks/`, { body: '{"id": ' });
      expect(response.status).toBe(400);
      expect(errorOf(response).code).toBe('INVALID_REQUEST');
      expect(errorOf(response).message).toMatch(/Malformed JSON/);
      expect(handler.calls).toHaveLength(0);
    });

    it.each([['gzip'], ['br'], ['deflate'], ['x-unknown'], ['gzip, identity']])(
      'refuses a body with Content-Encoding %s with 400 INVALID_REQUEST',
      async (encoding) => {
        const response = await rawRequest(`${base}/tasks/`, {
          body: createTask('compressed?'),
          headers: { 'content-encoding': encoding },
        });
        expect(response.status).toBe(400);
        expect(errorOf(response).code).toBe('INVALID_REQUEST');
        expect(errorOf(response).message).toContain(`Unsupported Content-Encoding: ${encoding}`);
        expect(handler.calls).toHaveLength(0);
      },
    );

    it('refuses a really gzipped body the same way', async () => {
      const response = await rawRequest(`${base}/tasks/`, {
        body: gzipSync(JSON.stringify(createTask('zipped'))),
        headers: { 'content-encoding': 'gzip' },
      });
      expect(response.status).toBe(400);
      expect(errorOf(response).code).toBe('INVALID_REQUEST');
    });

    it('accepts Content-Encoding identity', async () => {
      const response = await rawRequest(`${base}/tasks/`, {
        body: createTask('plain'),
        headers: { 'content-encoding': 'Identity' },
      });
      expect(response.status).toBe(200);
    });

    it('refuses an empty body with 400', async () => {
      const response = await rawRequest(`${base}/tasks/`, {
        method: 'POST',
        headers: { 'content-length': '0' },
      });
      expect(response.status).toBe(400);
      expect(errorOf(response).code).toBe('INVALID_REQUEST');
    });

    it.each([['[1, 2]'], ['42'], ['"text"'], ['null']])(
      'refuses the non-object JSON body %s with 422',
      async (body) => {
        const response = await rawRequest(`${base}/tasks/`, { body });
        expect(response.status).toBe(422);
        expect(errorOf(response).code).toBe('VALIDATION_FAILED');
      },
    );

    it('refuses a Task that fails the schema with 422 and field pointers', async () => {
      const response = await rawRequest(`${base}/tasks/`, { body: { state: 'dreaming' } });
      expect(response.status).toBe(422);
      const pointers = (errorOf(response).data as { errors: Array<{ pointer: string }> }).errors.map(
        (e) => e.pointer,
      );
      expect(pointers).toEqual(expect.arrayContaining(['/id', '/state']));
    });

    it('accepts unknown fields unless validateSchema is on', async () => {
      const response = await rawRequest(`${base}/tasks/`, { body: { ...createTask('x'), extra: true } });
      expect(response.status).toBe(200);
    });

    it('refuses a body over maxBodyBytes with 413, declared or streamed', async () => {
      const big = createTask('x'.repeat(4096));
      const declared = await rawRequest(`${base}/tasks/`, { body: big });
      expect(declared.status).toBe(413);
      expect(errorOf(declared).code).toBe('PAYLOAD_TOO_LARGE');
      const streamed = await rawRequest(`${base}/tasks/`, { body: big, chunked: true });
      expect(streamed.status).toBe(413);
      expect(errorOf(streamed).code).toBe('PAYLOAD_TOO_LARGE');
      expect(handler.calls).toHaveLength(0);
      // The server still answers afterwards.
      expect((await rawRequest(`${base}/tasks/`, { body: createTask('small') })).status).toBe(200);
    });

    it('maps a typed handler error through the error table', async () => {
      handler.behaviour = async () => {
        throw new BudgetExceededError('max_steps reached', { data: { limit: 'max_steps' } });
      };
      const response = await rawRequest(`${base}/tasks/`, { body: createTask('x') });
      expect(response.status).toBe(429);
      expect(response.json).toEqual({
        error: { code: 'BUDGET_EXCEEDED', message: 'max_steps reached', data: { limit: 'max_steps' } },
      });
    });

    it('answers 500 INTERNAL without leaking the message of an unexpected error', async () => {
      handler.behaviour = async () => {
        throw new Error('database password is hunter2');
      };
      const response = await rawRequest(`${base}/tasks/`, { body: createTask('x') });
      expect(response.status).toBe(500);
      expect(errorOf(response).code).toBe('INTERNAL');
      expect(response.text).not.toContain('hunter2');
      const errorId = (errorOf(response).data as { error_id: string }).error_id;
      expect(logger.withErrorId(errorId)).toBeDefined();
    });

    it('cancels a running task; its own request answers 200 with the canceled Task', async () => {
      handler.holdTasks();
      const task = createTask('sleep');
      const pending = rawRequest(`${base}/tasks/`, { body: task });
      await handler.whenRunning(task.id);
      const cancel = await rawRequest(`${base}/tasks/cancel`, {
        body: { task_id: task.id, reason: 'user asked' },
      });
      expect(cancel.status).toBe(200);
      expect(cancel.json).toMatchObject({
        id: task.id,
        state: 'canceled',
        metadata: { cancel_reason: 'user asked' },
      });
      const original = await pending;
      expect(original.status).toBe(200);
      expect(original.json).toMatchObject({ id: task.id, state: 'canceled' });
    });

    it('accepts the id alias and metadata.reason in a cancel body', async () => {
      handler.holdTasks();
      const task = createTask('sleep');
      const pending = rawRequest(`${base}/tasks/`, { body: task });
      await handler.whenRunning(task.id);
      const cancel = await rawRequest(`${base}/tasks/cancel`, {
        body: { id: task.id, metadata: { reason: 'alias' } },
      });
      expect(cancel.status).toBe(200);
      expect(handler.cancels).toEqual([{ taskId: task.id, reason: 'alias' }]);
      await pending;
    });

    it('answers 404 TASK_NOT_FOUND and 409 TASK_NOT_CANCELABLE for cancels that cannot happen', async () => {
      const unknown = await rawRequest(`${base}/tasks/cancel`, { body: { task_id: 'never-seen' } });
      expect(unknown.status).toBe(404);
      expect(errorOf(unknown).code).toBe('TASK_NOT_FOUND');
      const task = createTask('done');
      await rawRequest(`${base}/tasks/`, { body: task });
      const finished = await rawRequest(`${base}/tasks/cancel`, { body: { task_id: task.id } });
      expect(finished.status).toBe(409);
      expect(errorOf(finished).code).toBe('TASK_NOT_CANCELABLE');
    });

    it('refuses a cancel body without a task id with 422', async () => {
      const response = await rawRequest(`${base}/tasks/cancel`, { body: { reason: 'why' } });
      expect(response.status).toBe(422);
      expect(errorOf(response).code).toBe('VALIDATION_FAILED');
      expect(handler.cancels).toHaveLength(0);
    });

    it('keeps the task running when the client disconnects: its signal does not abort, nothing cancels it', async () => {
      let release: ((task: Task) => void) | undefined;
      let signal: AbortSignal | undefined;
      handler.behaviour = (task, ctx) =>
        new Promise<Task>((finish) => {
          signal = ctx.signal;
          release = (done) => finish(done);
        });
      const { request } = await import('node:http');
      const req = request(`${base}/tasks/`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json' },
      });
      req.on('error', () => undefined);
      const task = createTask('hang up');
      req.end(JSON.stringify(task));
      while (handler.calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
      const closed = new Promise((resolve) => req.on('close', resolve));
      req.destroy();
      await closed;
      // The run is the server's: it goes on and is recorded when it ends.
      const running = await rawRequest(`${base}/tasks/${encodeURIComponent(task.id)}`, { method: 'GET' });
      expect(running.status).toBe(200);
      expect(signal?.aborted).toBe(false);
      release?.({ ...task, state: 'completed' });
      for (;;) {
        const read = await rawRequest(`${base}/tasks/${encodeURIComponent(task.id)}`, { method: 'GET' });
        if ((read.json as Task).state === 'completed') break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(handler.cancels).toHaveLength(0);
    });
  });

  describe('with validateSchema', () => {
    beforeEach(() => serve({ validateSchema: true }));

    it('rejects unknown Task fields with 422 naming them', async () => {
      const response = await rawRequest(`${base}/tasks/`, { body: { ...createTask('x'), extra: true } });
      expect(response.status).toBe(422);
      expect(errorOf(response).data).toEqual({ errors: [{ pointer: '/extra', message: 'is not allowed' }] });
      expect(handler.calls).toHaveLength(0);
    });

    it('rejects unknown cancel fields with 422', async () => {
      const response = await rawRequest(`${base}/tasks/cancel`, { body: { task_id: 'a', force: true } });
      expect(response.status).toBe(422);
      expect(errorOf(response).data).toEqual({ errors: [{ pointer: '/force', message: 'is not allowed' }] });
      expect(handler.cancels).toHaveLength(0);
    });

    it('still accepts a well-formed Task', async () => {
      expect((await rawRequest(`${base}/tasks/`, { body: createTask('ok') })).status).toBe(200);
    });
  });

  describe('with an authenticator', () => {
    beforeEach(() =>
      serve({ authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }), maxBodyBytes: 1024 }),
    );

    it('answers 401 UNAUTHENTICATED without credentials and never runs the handler', async () => {
      const response = await rawRequest(`${base}/tasks/`, { body: createTask('x') });
      expect(response.status).toBe(401);
      expect(errorOf(response).code).toBe('UNAUTHENTICATED');
      expect(handler.calls).toHaveLength(0);
    });

    it('answers 401 for a wrong key without echoing it', async () => {
      const wrong = 'sk-wrong-credential-999';
      for (const headers of [{ 'x-api-key': wrong }, { authorization: `Bearer ${wrong}` }]) {
        const response = await rawRequest(`${base}/tasks/`, { body: createTask('x'), headers });
        expect(response.status).toBe(401);
        expect(errorOf(response).code).toBe('UNAUTHENTICATED');
        expect(response.text).not.toContain(wrong);
      }
      const cancel = await rawRequest(`${base}/tasks/cancel`, {
        body: { task_id: 'x' },
        headers: { 'x-api-key': wrong },
      });
      expect(cancel.status).toBe(401);
      expect(handler.calls).toHaveLength(0);
      expect(handler.cancels).toHaveLength(0);
    });

    it.each([
      ['Authorization ApiKey', { headers: { authorization: `ApiKey ${KEY}` } }, ''],
      ['Authorization Bearer', { headers: { authorization: `Bearer ${KEY}` } }, ''],
      ['X-API-Key', { headers: { 'x-api-key': KEY } }, ''],
      ['query api_key', {}, `?api_key=${KEY}`],
      ['query token', {}, `?token=${KEY}`],
    ])(
      'accepts the key from %s and hands the security context to the handler',
      async (_name, options, query) => {
        const response = await rawRequest(`${base}/tasks/${query}`, { body: createTask('x'), ...options });
        expect(response.status).toBe(200);
        expect(handler.calls[0]!.ctx.security?.principalId).toBe(`api-key-${KEY.slice(0, 8)}`);
      },
    );

    it('authenticates before reading the body: an oversized unauthenticated body gets 401', async () => {
      const response = await rawRequest(`${base}/tasks/`, { body: createTask('x'.repeat(8192)) });
      expect(response.status).toBe(401);
    });

    it('keeps health and readiness public but protects the card, which then lists the scheme', async () => {
      expect((await rawRequest(`${base}/healthz`)).status).toBe(200);
      expect((await rawRequest(`${base}/readyz`)).status).toBe(200);
      expect((await rawRequest(`${base}/.well-known/agent.json`)).status).toBe(401);
      const card = await rawRequest(`${base}/.well-known/agent.json`, { headers: { 'x-api-key': KEY } });
      expect(card.status).toBe(200);
      expect((card.json as { securitySchemes: unknown }).securitySchemes).toEqual({
        apiKey: { type: 'apiKey', scheme: null, description: 'API key authentication', metadata: {} },
      });
    });
  });

  describe('under a base path', () => {
    beforeEach(async () => {
      handler = createTestAgent({ announceWorking: false });
      transport = new HTTPTransport({ url: 'http://127.0.0.1:0/agents/echo', backend });
      transport.bind(handler);
      await transport.start();
    });

    it('serves every route below the path of the URL', async () => {
      expect(transport.url).toBe(`http://127.0.0.1:${transport.port}/agents/echo`);
      expect((await rawRequest(`${transport.url}/tasks/`, { body: createTask('x') })).status).toBe(200);
      expect((await rawRequest(`${transport.url}/healthz`)).status).toBe(200);
      const stream = await rawRequest(`${transport.url}/tasks/stream`, { body: createTask('x') });
      expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(
        (await rawRequest(`http://127.0.0.1:${transport.port}/tasks/`, { body: createTask('x') })).status,
      ).toBe(404);
    });
  });
});

describe('responses JSON cannot represent', () => {
  it.each(BACKENDS)('%s: answers 500 INTERNAL instead of crashing', async (backend) => {
    const transport = new HTTPTransport({ url: 'http://127.0.0.1:0', backend });
    transport.onTaskReceived(async (task) => ({
      ...task,
      metadata: { big: BigInt(1) as unknown as number },
    }));
    await transport.start();
    try {
      const response = await rawRequest(`${transport.url}/tasks/`, { body: createTask('x') });
      expect(response.status).toBe(500);
      expect(errorOf(response).code).toBe('INTERNAL');
      expect((await rawRequest(`${transport.url}/healthz`)).status).toBe(200);
    } finally {
      await transport.stop();
    }
  });
});
