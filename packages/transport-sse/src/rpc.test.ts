import {
  AgentError,
  CLIENT_OPERATIONS,
  createTask,
  DeadlineExceededError,
  MethodNotFoundError,
  TaskNotFoundError,
  UnavailableError,
  UnsupportedOperationError,
  ValidationError,
  type AgentCard,
  type Task,
} from '@agent/core';
import { gzipSync } from 'node:zlib';
import { RecordingLogger } from '@agent/server/testing';
import { SSETransport } from './sse-transport.js';
import { startHarness, type Harness } from './test-support/harness.js';
import { rawRequest, rpcBody } from './test-support/raw-http.js';

describe('JSON-RPC unary calls on POST /rpc', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ server: { maxBodyBytes: 64 * 1024 } });
  });
  afterAll(() => h.stop());

  it('maps send_task onto tasks/send and returns the finished task', async () => {
    const task = createTask('echo hello');
    const result = await h.client.send<Task>(CLIENT_OPERATIONS.send_task, h.url, task);
    expect(result.id).toBe(task.id);
    expect(result.state).toBe('completed');
    expect(result.messages.at(-1)?.parts[0]?.content).toBe('hello');
    expect(h.agent.contexts.at(-1)?.transport).toBe('sse');
  });

  it('accepts send_task data already wrapped as {task}', async () => {
    const task = createTask('echo wrapped');
    const result = await h.client.send<Task>(CLIENT_OPERATIONS.send_task, h.url, { task });
    expect(result.state).toBe('completed');
  });

  it('maps get_card onto agent/card', async () => {
    const card = await h.client.send<AgentCard>(CLIENT_OPERATIONS.get_card, h.url);
    expect(card.name).toBe('test-agent');
  });

  it('rebuilds typed errors from error.data.code: cancel of an unknown task', async () => {
    const failure = h.client.send(CLIENT_OPERATIONS.cancel_task, h.url, { task_id: 'nope', reason: 'x' });
    await expect(failure).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(failure).rejects.toMatchObject({
      code: 'TASK_NOT_FOUND',
      message: 'Task nope not found',
    });
  });

  it('answers tasks/cancel of a finished task with TASK_NOT_CANCELABLE', async () => {
    const task = await h.client.send<Task>(CLIENT_OPERATIONS.send_task, h.url, createTask('echo done'));
    await expect(
      h.client.send(CLIENT_OPERATIONS.cancel_task, h.url, { task_id: task.id }),
    ).rejects.toMatchObject({
      code: 'TASK_NOT_CANCELABLE',
    });
    // A bare task id is accepted as cancel data too.
    await expect(h.client.send(CLIENT_OPERATIONS.cancel_task, h.url, task.id)).rejects.toMatchObject({
      code: 'TASK_NOT_CANCELABLE',
    });
  });

  it('reports an invalid task as VALIDATION_FAILED (-32602) with the issues in data.data', async () => {
    const res = await rawRequest(`${h.url}/rpc`, { body: rpcBody('tasks/send', { task: { id: 7 } }, 'a') });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      jsonrpc: '2.0',
      id: 'a',
      error: { code: -32602, data: { code: 'VALIDATION_FAILED', data: { errors: expect.any(Array) } } },
    });
    await expect(h.client.send(CLIENT_OPERATIONS.send_task, h.url, { id: 7 })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it('masks an unexpected handler error as INTERNAL with data.data.error_id, the id of its log line', async () => {
    const logger = new RecordingLogger();
    const masked = await startHarness({ server: { logger } });
    masked.agent.behaviour = () => Promise.reject(new Error('db password rejected by 10.0.0.5:5432'));
    try {
      const res = await rawRequest(`${masked.url}/rpc`, {
        body: rpcBody('tasks/send', { task: createTask('x') }, 5),
      });
      expect(res.text).not.toContain('10.0.0.5');
      const body = res.json as { error: { data: { data: { error_id: string } } } };
      expect(body).toEqual({
        jsonrpc: '2.0',
        id: 5,
        error: {
          code: -32603,
          message: 'Internal error',
          data: { code: 'INTERNAL', data: { error_id: expect.any(String) } },
        },
      });
      expect(logger.withErrorId(body.error.data.data.error_id)).toBeDefined();
      const error = await masked.client
        .send(CLIENT_OPERATIONS.send_task, masked.url, createTask('y'))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentError);
      expect(error).toMatchObject({
        code: 'INTERNAL',
        message: 'Internal error',
        data: { error_id: expect.any(String) },
      });
    } finally {
      await masked.stop();
    }
  });

  it('answers an unknown method with -32601 and the request id', async () => {
    const res = await rawRequest(`${h.url}/rpc`, { body: rpcBody('tasks/teleport', {}, 42) });
    expect(res.json).toEqual({
      jsonrpc: '2.0',
      id: 42,
      error: { code: -32601, message: 'Unknown method: tasks/teleport', data: { code: 'METHOD_NOT_FOUND' } },
    });
  });

  it('points tasks/stream sent to /rpc at the streaming route', async () => {
    const res = await rawRequest(`${h.url}/rpc`, {
      body: rpcBody('tasks/stream', { task: createTask('echo') }),
    });
    expect(res.json).toMatchObject({
      error: { code: -32601, message: expect.stringContaining('/tasks/stream') },
    });
  });

  it('answers malformed JSON with the JSON-RPC parse error (-32700, id null) and HTTP 200', async () => {
    const res = await rawRequest(`${h.url}/rpc`, { body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32700,
        message: expect.stringMatching(/^Malformed JSON/),
        data: { code: 'PARSE_ERROR' },
      },
    });
  });

  it('refuses a compressed body with 400 on both routes, never inflating it', async () => {
    for (const route of ['/rpc', '/tasks/stream']) {
      const res = await rawRequest(`${h.url}${route}`, {
        body: gzipSync(rpcBody('agent/card', {})),
        headers: { 'content-encoding': 'gzip' },
      });
      expect([res.status, res.json]).toMatchObject([
        400,
        { error: { code: 'INVALID_REQUEST', data: { content_encoding: 'gzip' } } },
      ]);
    }
  });

  it.each([
    ['a missing jsonrpc version', { id: 1, method: 'agent/card' }],
    ['a wrong jsonrpc version', { jsonrpc: '1.0', id: 1, method: 'agent/card' }],
    ['a missing method', { jsonrpc: '2.0', id: 1 }],
    ['an object id', { jsonrpc: '2.0', id: { a: 1 }, method: 'agent/card' }],
    ['scalar params', { jsonrpc: '2.0', id: 1, method: 'agent/card', params: 3 }],
    ['a non-object request', 'agent/card'],
    ['an empty batch', []],
  ])('answers %s with -32600', async (_name, body) => {
    const res = await rawRequest(`${h.url}/rpc`, { body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32600, data: { code: 'INVALID_REQUEST' } },
    });
  });

  it('answers a batch in order and leaves notifications unanswered', async () => {
    const body = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'agent/card' },
      { jsonrpc: '2.0', method: 'agent/card' },
      { jsonrpc: '2.0', id: 2, method: 'tasks/cancel', params: { task_id: 'ghost' } },
    ]);
    const res = await rawRequest(`${h.url}/rpc`, { body });
    expect(res.json).toEqual([
      { jsonrpc: '2.0', id: 1, result: h.agent.card },
      expect.objectContaining({ id: 2, error: expect.objectContaining({ code: -32001 }) }),
    ]);
  });

  it('answers a lone notification with 204 and no body', async () => {
    const res = await rawRequest(`${h.url}/rpc`, {
      body: JSON.stringify({ jsonrpc: '2.0', method: 'agent/card' }),
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('refuses a body over maxBodyBytes with 413 and the JSON error body', async () => {
    const huge = rpcBody('tasks/send', { task: createTask('x'.repeat(70 * 1024)) });
    const res = await rawRequest(`${h.url}/rpc`, { body: huge });
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('refuses an oversized chunked body (no Content-Length) with 413', async () => {
    const huge = rpcBody('tasks/send', { task: createTask('x'.repeat(70 * 1024)) });
    const res = await rawRequest(`${h.url}/rpc`, { body: huge, headers: { 'transfer-encoding': 'chunked' } });
    expect(res.status).toBe(413);
  });

  it('answers unknown routes with 404 and wrong methods with 405, both as JSON errors', async () => {
    const missing = await rawRequest(`${h.url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const wrongMethod = await rawRequest(`${h.url}/rpc`, { method: 'GET' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');
    expect(wrongMethod.json).toMatchObject({ error: { code: 'METHOD_NOT_ALLOWED' } });
  });

  it('serves /healthz, /readyz and the native card', async () => {
    expect((await rawRequest(`${h.url}/healthz`, { method: 'GET' })).json).toEqual({ status: 'ok' });
    const ready = await rawRequest(`${h.url}/readyz`, { method: 'GET' });
    expect([ready.status, ready.json]).toEqual([200, { status: 'ready' }]);
    expect((await rawRequest(`${h.url}/.well-known/agent.json`, { method: 'GET' })).json).toEqual(
      h.agent.card,
    );
  });

  it('refuses a streaming operation in send() and an unknown operation name', async () => {
    await expect(h.client.send(CLIENT_OPERATIONS.stream_task, h.url, createTask('x'))).rejects.toBeInstanceOf(
      UnsupportedOperationError,
    );
    await expect(h.client.send(CLIENT_OPERATIONS.subscribe_task, h.url, { task_id: 'x' })).rejects.toThrow(
      /use subscribeTask\(\)/,
    );
    await expect(
      h.client.send({ name: 'teleport', method: 'POST', path: '/x' }, h.url),
    ).rejects.toBeInstanceOf(UnsupportedOperationError);
  });
});

describe('client failures', () => {
  it('raises UnavailableError when nothing listens', async () => {
    const server = new SSETransport({ url: 'http://127.0.0.1:0' });
    server.bind((await import('./test-support/harness.js')).createSseTestAgent());
    await server.start();
    const url = server.url;
    await server.stop();
    const client = new SSETransport({ url });
    await expect(client.send(CLIENT_OPERATIONS.get_card, url)).rejects.toBeInstanceOf(UnavailableError);
    await client.stop();
  });

  it('raises DeadlineExceededError after timeoutMs; the task goes on, the server owns it', async () => {
    const h = await startHarness({ client: { timeoutMs: 100 } });
    try {
      await expect(
        h.client.send(CLIENT_OPERATIONS.send_task, h.url, createTask('hang')),
      ).rejects.toBeInstanceOf(DeadlineExceededError);
      expect(h.agent.contexts.at(-1)?.signal.aborted).toBe(false);
    } finally {
      await h.stop();
    }
  });

  it('honours the caller signal while the call is in flight', async () => {
    const h = await startHarness();
    try {
      const controller = new AbortController();
      const before = h.agent.contexts.length;
      const call = h.client.send(CLIENT_OPERATIONS.send_task, h.url, createTask('hang'), undefined, {
        signal: controller.signal,
      });
      while (h.agent.contexts.length === before) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
      await expect(call).rejects.toMatchObject({ code: 'TASK_CANCELED' });
    } finally {
      await h.stop();
    }
  });

  it('rejects a non-http base URL with a ValueError', async () => {
    const client = new SSETransport({ url: 'http://127.0.0.1:1' });
    await expect(client.send(CLIENT_OPERATIONS.get_card, 'ftp://127.0.0.1/')).rejects.toMatchObject({
      code: 'VALUE_ERROR',
    });
    await expect(client.send(CLIENT_OPERATIONS.get_card, 'not a url')).rejects.toBeInstanceOf(AgentError);
  });

  it('maps a JSON-RPC error without data.code by its numeric code', async () => {
    const { fromJsonRpcError } = await import('./codec.js');
    expect(fromJsonRpcError({ code: -32601, message: 'nope' })).toBeInstanceOf(MethodNotFoundError);
    expect(fromJsonRpcError({ code: -32001, message: 'gone' })).toBeInstanceOf(TaskNotFoundError);
    expect(fromJsonRpcError({ code: 12345, message: '?' }).code).toBe('INTERNAL');
  });
});

describe('a URL with a base path', () => {
  it('serves every route below the base path and nothing outside it', async () => {
    const h = await startHarness({ server: { url: 'http://127.0.0.1:0/agents/a1/' } });
    try {
      expect(h.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/agents\/a1\/$/);
      const base = h.url.replace(/\/$/, '');
      const task = await h.client.send<Task>(CLIENT_OPERATIONS.send_task, h.url, createTask('echo based'));
      expect(task.state).toBe('completed');
      const events: string[] = [];
      for await (const event of h.client.subscribe(base, createTask('stream 1'))) events.push(event.type);
      expect(events).toEqual(['task.artifact', 'task.status']);
      expect((await rawRequest(`${base}/healthz`, { method: 'GET' })).status).toBe(200);
      expect((await rawRequest(`${base}/readyz`, { method: 'GET' })).json).toEqual({ status: 'ready' });
      const outside = await rawRequest(`${new URL(h.url).origin}/rpc`, { body: rpcBody('agent/card', {}) });
      expect([outside.status, outside.json]).toMatchObject([404, { error: { code: 'NOT_FOUND' } }]);
    } finally {
      await h.stop();
    }
  });
});

describe('JSON-RPC error mapping', () => {
  it('round-trips every core error code through toJsonRpcError / fromJsonRpcError', async () => {
    const { toJsonRpcError, fromJsonRpcError } = await import('./codec.js');
    const { ERROR_CODES, errorClassFor } = await import('@agent/core');
    for (const code of Object.keys(ERROR_CODES) as Array<keyof typeof ERROR_CODES>) {
      const original = new (errorClassFor(code))(`failed with ${code}`, { data: { detail: code } });
      const wire = JSON.parse(JSON.stringify(toJsonRpcError(original))) as unknown;
      expect(wire).toEqual({
        code: ERROR_CODES[code].jsonRpcCode,
        message: `failed with ${code}`,
        data: { code, data: { detail: code } },
      });
      const rebuilt = fromJsonRpcError(wire);
      expect(rebuilt).toBeInstanceOf(errorClassFor(code));
      expect([rebuilt.code, rebuilt.message, rebuilt.data]).toEqual([code, original.message, original.data]);
    }
  });
});
