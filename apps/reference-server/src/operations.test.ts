/**
 * Request logs, limits and their wire answers on the assembled server, in-process over its real
 * transports: the log is the server's own JSON writer, captured line by line.
 */
import { mintJwt } from '@agent/auth/testing';
import { CLIENT_OPERATIONS, createTask, type AgentError, type Task } from '@agent/core';
import { rawRequest } from '@agent/test-support';
import { GRPCTransport } from '@agent/transport-grpc';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import { DEFAULT_CONFIG, type ServerConfig } from './config.js';
import { createServerLogger } from './logging.js';
import { startReferenceServer, type ReferenceServer } from './server.js';

jest.setTimeout(60_000);

const ZERO_PORTS = { http: 0, sse: 0, ws: 0, grpc: 0 };
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

interface Started {
  server: ReferenceServer;
  /** Every line the server logged, as written. */
  lines: string[];
}

async function start(overrides: Partial<ServerConfig>): Promise<Started> {
  const lines: string[] = [];
  const logger = createServerLogger({ level: 'info', format: 'json' }, (line) => lines.push(line));
  const server = await startReferenceServer(
    { ...DEFAULT_CONFIG, ports: ZERO_PORTS, ...overrides },
    { logger },
  );
  return { server, lines };
}

function taskBody(text: string): Task {
  return createTask(text);
}

function requestLines(lines: string[]): Record<string, unknown>[] {
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === 'request');
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not met');
}

describe('request logs carry who, what and how it ended, and never a credential', () => {
  const cases: {
    name: string;
    config: Partial<ServerConfig>;
    secrets: string[];
    /** Headers (and a query) that authenticate, and ones that do not. */
    valid: { headers: Record<string, string>; query?: string };
    invalid: { headers: Record<string, string>; query?: string };
  }[] = [
    {
      name: 'API key in a header',
      config: { auth: { ...DEFAULT_CONFIG.auth, mode: 'apikey', apiKeys: ['sk-logline-secret-0001'] } },
      secrets: ['sk-logline-secret-0001', 'sk-logline-wrong-9999'],
      valid: { headers: { 'x-api-key': 'sk-logline-secret-0001' } },
      invalid: { headers: { 'x-api-key': 'sk-logline-wrong-9999' } },
    },
    {
      name: 'API key in the query string',
      config: { auth: { ...DEFAULT_CONFIG.auth, mode: 'apikey', apiKeys: ['sk-logline-secret-0001'] } },
      secrets: ['sk-logline-secret-0001', 'sk-logline-wrong-9999', 'api_key'],
      valid: { headers: {}, query: 'api_key=sk-logline-secret-0001' },
      invalid: { headers: {}, query: 'api_key=sk-logline-wrong-9999' },
    },
    (() => {
      const secret = 'jwt-signing-secret-for-logs';
      const token = mintJwt({ secret, claims: { sub: 'alice', exp: Math.floor(Date.now() / 1000) + 3600 } });
      const forged = mintJwt({ secret: 'not-the-secret', claims: { sub: 'mallory' } });
      return {
        name: 'bearer token',
        config: {
          auth: {
            ...DEFAULT_CONFIG.auth,
            mode: 'bearer' as const,
            jwt: { ...DEFAULT_CONFIG.auth.jwt, secret },
          },
        },
        secrets: [secret, token, token.split('.')[2]!, forged],
        valid: { headers: { authorization: `Bearer ${token}` } },
        invalid: { headers: { authorization: `Bearer ${forged}` } },
      };
    })(),
    {
      name: 'Basic credentials',
      config: { auth: { ...DEFAULT_CONFIG.auth, mode: 'basic', basicUsers: { alice: 'pa55-for-logs' } } },
      secrets: [
        'pa55-for-logs',
        Buffer.from('alice:pa55-for-logs').toString('base64'),
        Buffer.from('alice:wrong-pa55').toString('base64'),
        'wrong-pa55',
      ],
      valid: { headers: { authorization: `Basic ${Buffer.from('alice:pa55-for-logs').toString('base64')}` } },
      invalid: { headers: { authorization: `Basic ${Buffer.from('alice:wrong-pa55').toString('base64')}` } },
    },
  ];

  for (const { name, config, secrets, valid, invalid } of cases) {
    it(name, async () => {
      const { server, lines } = await start(config);
      try {
        const query = (q: string | undefined) => (q === undefined ? '' : `?${q}`);
        const headers = {
          ...valid.headers,
          traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01`,
          'x-tenant': 'acme',
        };
        const task = taskBody('echo logged');
        const sent = await rawRequest(`${server.urls.http}/tasks/${query(valid.query)}`, {
          headers,
          body: task,
        });
        expect(sent.status).toBe(200);
        const listed = await rawRequest(
          `${server.urls.http}/tasks${query(valid.query)}${valid.query ? '&' : '?'}page_size=5`,
          {
            headers,
          },
        );
        expect(listed.status).toBe(200);
        const refused = await rawRequest(`${server.urls.http}/tasks/${query(invalid.query)}`, {
          headers: invalid.headers,
          body: taskBody('echo refused'),
        });
        expect(refused.status).toBe(401);

        // Every line the server wrote is JSON, and none holds a credential, whole or in part.
        for (const line of lines) {
          expect(() => JSON.parse(line)).not.toThrow();
          for (const secret of secrets) expect(line).not.toContain(secret);
        }
        const logged = requestLines(lines);
        const send = logged.find((line) => line.operation === 'send_task');
        expect(send).toMatchObject({
          level: 30,
          transport: 'http',
          status: 'ok',
          tenant: 'acme',
          task_id: task.id,
          trace_id: TRACE_ID,
          principal_id: expect.any(String),
        });
        expect(typeof send?.duration_ms).toBe('number');
        expect(logged.find((line) => line.operation === 'list_tasks')).toMatchObject({
          status: 'ok',
          tenant: 'acme',
        });
        expect(logged.find((line) => line.status === 'UNAUTHENTICATED')).toMatchObject({
          operation: 'open',
          transport: 'http',
        });
      } finally {
        await server.stop();
      }
    });
  }

  it('logs a stream once, when it ends, with the events it carried', async () => {
    const { server, lines } = await start({});
    const sse = new SSETransport({ url: server.urls.sse });
    try {
      const events = [];
      for await (const event of sse.subscribe(server.urls.sse, taskBody('stream 3'))) events.push(event);
      const streamed = requestLines(lines).filter((line) => line.operation === 'stream_task');
      expect(streamed).toEqual([
        expect.objectContaining({
          transport: 'sse',
          status: 'ok',
          events: events.length,
          principal_id: 'anonymous',
        }),
      ]);
    } finally {
      await sse.stop();
      await server.stop();
    }
  });
});

describe('limits answer at once, the same way on every wire', () => {
  it('refuses a task over maxConcurrentTasks with 503 UNAVAILABLE and Retry-After (HTTP), UNAVAILABLE and retry-after-ms (gRPC), the same data on SSE and WebSocket', async () => {
    // A share as large as the limit: one caller here reaches the shared limit itself.
    const { server } = await start({ limits: { maxConcurrentTasks: 1, maxConcurrentTasksPerCaller: 2 } });
    const grpc = new GRPCTransport({ url: server.urls.grpc });
    const sse = new SSETransport({ url: server.urls.sse });
    const ws = new WebSocketTransport({ url: server.urls.ws });
    const sleeper = taskBody('sleep 20000');
    try {
      const running = rawRequest(`${server.urls.http}/tasks/`, { body: sleeper });
      await until(async () => {
        const read = await rawRequest(`${server.urls.http}/tasks/${sleeper.id}`);
        return (read.json as Task | undefined)?.state === 'working';
      });

      const http = await rawRequest(`${server.urls.http}/tasks/`, { body: taskBody('echo over') });
      expect(http.status).toBe(503);
      expect(http.headers['retry-after']).toBe('1');
      expect(http.json).toEqual({
        error: {
          code: 'UNAVAILABLE',
          message: expect.any(String),
          data: { retry_after_ms: 1000, limit: 'tasks' },
        },
      });
      const streamed = await rawRequest(`${server.urls.http}/tasks/stream`, { body: taskBody('echo over') });
      expect(streamed.status).toBe(503);
      expect(streamed.headers['retry-after']).toBe('1');

      const viaGrpc = await grpc
        .send(CLIENT_OPERATIONS.send_task, server.urls.grpc, taskBody('echo over'))
        .then(
          () => undefined,
          (error: unknown) =>
            error as AgentError & { cause?: { code?: number; metadata?: { get(key: string): unknown[] } } },
        );
      expect(viaGrpc).toMatchObject({ code: 'UNAVAILABLE', data: { retry_after_ms: 1000, limit: 'tasks' } });
      expect(viaGrpc?.cause?.code).toBe(14); // grpc UNAVAILABLE
      expect(viaGrpc?.cause?.metadata?.get('retry-after-ms')).toEqual(['1000']);

      for (const [transport, url] of [
        [sse, server.urls.sse],
        [ws, server.urls.ws],
      ] as const) {
        await expect(
          transport.send(CLIENT_OPERATIONS.send_task, url, taskBody('echo over')),
        ).rejects.toMatchObject({
          code: 'UNAVAILABLE',
          data: { retry_after_ms: 1000, limit: 'tasks' },
        });
      }

      // Reads are not task runs; a cancel frees the slot and the next task runs.
      const canceled = await rawRequest(`${server.urls.http}/tasks/cancel`, {
        body: { task_id: sleeper.id },
      });
      expect(canceled.status).toBe(200);
      await running;
      const after = await rawRequest(`${server.urls.http}/tasks/`, { body: taskBody('echo again') });
      expect(after.status).toBe(200);
    } finally {
      await Promise.all([grpc.stop(), sse.stop(), ws.stop()]);
      await server.stop();
    }
  });

  it("holds one caller to half the task slots by default, over every wire together, while another caller's tasks still run", async () => {
    const { server } = await start({
      auth: { ...DEFAULT_CONFIG.auth, mode: 'apikey', apiKeys: ['sk-alice-share-1', 'sk-bobby-share-2'] },
      limits: { maxConcurrentTasks: 4 },
    });
    const alice = { 'x-api-key': 'sk-alice-share-1' };
    const aliceWs = new WebSocketTransport({
      url: server.urls.ws,
      authenticator: server.authenticator!,
      credentials: 'sk-alice-share-1',
    });
    const sleepers = [taskBody('sleep 20000'), taskBody('sleep 20000')];
    try {
      const running = [
        rawRequest(`${server.urls.http}/tasks/`, { headers: alice, body: sleepers[0] }),
        aliceWs.send(CLIENT_OPERATIONS.send_task, server.urls.ws, sleepers[1]!),
      ];
      for (const sleeper of sleepers) {
        await until(async () => {
          const read = await rawRequest(`${server.urls.http}/tasks/${sleeper.id}`, { headers: alice });
          return (read.json as Task | undefined)?.state === 'working';
        });
      }
      const refused = await rawRequest(`${server.urls.http}/tasks/`, {
        headers: alice,
        body: taskBody('echo 3'),
      });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.json).toEqual({
        error: {
          code: 'UNAVAILABLE',
          message: expect.stringContaining('at most 2'),
          data: { retry_after_ms: 1000, limit: 'tasks_per_caller' },
        },
      });
      const bob = await rawRequest(`${server.urls.http}/tasks/`, {
        headers: { 'x-api-key': 'sk-bobby-share-2' },
        body: taskBody('echo bob'),
      });
      expect(bob.status).toBe(200);
      for (const sleeper of sleepers) {
        const canceled = await rawRequest(`${server.urls.http}/tasks/cancel`, {
          headers: alice,
          body: { task_id: sleeper.id },
        });
        expect(canceled.status).toBe(200);
      }
      await Promise.allSettled(running);
      const again = await rawRequest(`${server.urls.http}/tasks/`, {
        headers: alice,
        body: taskBody('echo 4'),
      });
      expect(again.status).toBe(200);
    } finally {
      await aliceWs.stop();
      await server.stop();
    }
  });

  it('refuses a principal past its rate limit with 429 RESOURCE_EXHAUSTED and Retry-After', async () => {
    const { server } = await start({
      auth: { ...DEFAULT_CONFIG.auth, mode: 'apikey', apiKeys: ['sk-alice-rate-1', 'sk-bobby-rate-2'] },
      limits: { rateLimit: { perSecond: 0.01, burst: 2 } },
    });
    const grpc = new GRPCTransport({ url: server.urls.grpc });
    try {
      const alice = { 'x-api-key': 'sk-alice-rate-1' };
      expect(
        (await rawRequest(`${server.urls.http}/tasks/`, { headers: alice, body: taskBody('echo 1') })).status,
      ).toBe(200);
      expect((await rawRequest(`${server.urls.http}/tasks`, { headers: alice })).status).toBe(200);
      const limited = await rawRequest(`${server.urls.http}/tasks/`, {
        headers: alice,
        body: taskBody('echo 3'),
      });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(limited.json).toMatchObject({ error: { code: 'RESOURCE_EXHAUSTED', data: { limit: 'rate' } } });
      // One bucket per principal across the transports: alice is limited on gRPC too, bob is not.
      const aliceGrpc = new GRPCTransport({
        url: server.urls.grpc,
        authenticator: server.authenticator!,
        credentials: 'sk-alice-rate-1',
      });
      await expect(
        aliceGrpc.send(CLIENT_OPERATIONS.send_task, server.urls.grpc, taskBody('echo 4')),
      ).rejects.toMatchObject({
        code: 'RESOURCE_EXHAUSTED',
      });
      await aliceGrpc.stop();
      const bob = await rawRequest(`${server.urls.http}/tasks/`, {
        headers: { 'x-api-key': 'sk-bobby-rate-2' },
        body: taskBody('echo bob'),
      });
      expect(bob.status).toBe(200);
    } finally {
      await grpc.stop();
      await server.stop();
    }
  });
});
