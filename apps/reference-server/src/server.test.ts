/** The assembled server in-process: every transport serves the same agent. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentClient } from '@agent/client';
import { createTask, isFinalEvent, UnsupportedOperationError, type TaskEvent } from '@agent/core';
import { SqliteRunStore } from '@agent/events';
import { GRPCTransport } from '@agent/transport-grpc';
import { HTTPTransport } from '@agent/transport-http';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import { DEFAULT_CONFIG, type ServerConfig } from './config.js';
import { createAuthenticator, startReferenceServer, type ReferenceServer } from './server.js';

jest.setTimeout(60_000);

const ZERO_PORTS = { http: 0, sse: 0, ws: 0, grpc: 0 };

describe('startReferenceServer', () => {
  let server: ReferenceServer;
  const dir = mkdtempSync(path.join(tmpdir(), 'reference-server-'));
  const dbPath = path.join(dir, 'runs.db');

  beforeAll(async () => {
    const config: ServerConfig = {
      ...DEFAULT_CONFIG,
      ports: ZERO_PORTS,
      runStore: `sqlite:${dbPath}`,
      approvals: 'approve',
    };
    server = await startReferenceServer(config);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('serves the same agent on every transport, so another transport can cancel a stream', async () => {
    const ws = new WebSocketTransport({ url: server.urls.ws });
    const grpc = new GRPCTransport({ url: server.urls.grpc });
    try {
      const streaming = new AgentClient({ transport: ws, baseUrl: server.urls.ws });
      const canceling = new AgentClient({ transport: grpc, baseUrl: server.urls.grpc });
      const task = createTask('sleep 20000');
      const events: TaskEvent[] = [];
      const done = (async () => {
        for await (const event of streaming.streamTask(task)) events.push(event);
      })();
      for (;;) {
        try {
          await canceling.cancelTask(task.id, 'from grpc');
          break;
        } catch (error) {
          if ((error as { code?: string }).code !== 'TASK_NOT_FOUND') throw error;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      await done;
      const finals = events.filter(isFinalEvent);
      expect(finals).toHaveLength(1);
      expect(finals[0]!.state).toBe('canceled');
      expect(finals[0]!.task?.metadata.cancel_reason).toBe('from grpc');
    } finally {
      await Promise.all([ws.stop(), grpc.stop()]);
    }
  });

  it('runs approval-gated tools when the approval handler approves', async () => {
    const http = new HTTPTransport({ url: server.urls.http });
    const client = new AgentClient({ transport: http, baseUrl: server.urls.http });
    const done = await client.sendTask(createTask('tool delete_record {"id":"r2"}'));
    expect(done.state).toBe('completed');
    expect(JSON.parse(String(done.messages[done.messages.length - 1]!.parts[0]!.content))).toEqual({
      id: 'r2',
      deleted: true,
    });
    await http.stop();
  });

  it('answers SSE clients too and stores snapshots in the SQLite run store', async () => {
    const sse = new SSETransport({ url: server.urls.sse });
    const client = new AgentClient({ transport: sse, baseUrl: server.urls.sse });
    const done = await client.sendTask(createTask('echo stored'));
    expect(done.state).toBe('completed');
    await sse.stop();
    const reader = new SqliteRunStore({ path: dbPath });
    try {
      const record = await reader.getTaskRecord(done.id);
      expect(record?.state).toBe('completed');
      expect(record?.agent_name).toBe('reference-agent');
    } finally {
      await reader.close();
    }
  });

  it('publishes its real HTTP URL in the card', async () => {
    expect(server.agent.card.url).toBe(server.urls.http);
    expect(server.urls.http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.urls.grpc).toMatch(/:\d+$/);
  });
});

it('restricts a configured API key to its tenants (over HTTP and gRPC)', async () => {
  const config: ServerConfig = {
    ...DEFAULT_CONFIG,
    ports: ZERO_PORTS,
    auth: {
      ...DEFAULT_CONFIG.auth,
      mode: 'apikey',
      apiKeys: ['sk-tenant-1', 'sk-free-2'],
      tenants: { 'sk-tenant-1': ['acme'] },
    },
  };
  const server = await startReferenceServer(config);
  const open: { stop(): Promise<void> }[] = [];
  const client = (kind: 'http' | 'grpc', tenant: string, credentials: string): AgentClient => {
    const options = { tenant, credentials, authenticator: createAuthenticator(config)! };
    const transport =
      kind === 'http'
        ? new HTTPTransport({ url: server.urls.http, ...options })
        : new GRPCTransport({ url: server.urls.grpc, ...options });
    open.push(transport);
    return new AgentClient({ transport, baseUrl: server.urls[kind] });
  };
  try {
    for (const kind of ['http', 'grpc'] as const) {
      const allowed = await client(kind, 'acme', 'sk-tenant-1').sendTask(createTask('echo hi'));
      expect(allowed.state).toBe('completed');
      await expect(
        client(kind, 'globex', 'sk-tenant-1').sendTask(createTask('echo hi')),
      ).rejects.toMatchObject({ code: 'PERMISSION_DENIED' });
      const unlisted = await client(kind, 'globex', 'sk-free-2').sendTask(createTask('echo hi'));
      expect(unlisted.state).toBe('completed');
    }
  } finally {
    await Promise.all(open.map((transport) => transport.stop()));
    await server.stop();
  }
});

it('refuses A2A mode with a typed error instead of ignoring it', async () => {
  await expect(
    startReferenceServer({ ...DEFAULT_CONFIG, ports: ZERO_PORTS, a2a: true }),
  ).rejects.toBeInstanceOf(UnsupportedOperationError);
});
