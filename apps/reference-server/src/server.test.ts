/** The assembled server in-process: every transport serves the same agent. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { A2AServer } from '@agent/a2a';
import { AgentClient } from '@agent/client';
import { createTask, isFinalEvent, type TaskEvent } from '@agent/core';
import { SqliteRunStore } from '@agent/events';
import { RegistryClient, type RegistryEntryView } from '@agent/registry';
import { GRPCTransport } from '@agent/transport-grpc';
import { HTTPTransport } from '@agent/transport-http';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import { DEFAULT_CONFIG, type ServerConfig } from './config.js';
import { TEST_CONFIG } from './test-support/test-config.js';
import { createDemoCard } from './demo-agent.js';
import { createAuthenticator, startReferenceServer, type ReferenceServer } from './server.js';

jest.setTimeout(60_000);

describe('startReferenceServer', () => {
  let server: ReferenceServer;
  const dir = mkdtempSync(path.join(tmpdir(), 'reference-server-'));
  const dbPath = path.join(dir, 'runs.db');

  beforeAll(async () => {
    const config: ServerConfig = {
      ...TEST_CONFIG,
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

  it('serves no registry unless registry.enabled', async () => {
    expect(server.registry).toBeUndefined();
    const res = await fetch(`${server.urls.http}/registry/agents`);
    expect(res.status).toBe(404);
  });

  it('publishes its real HTTP URL in the card', async () => {
    expect(server.agent.card.url).toBe(server.urls.http);
    expect(server.urls.http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.urls.grpc).toMatch(/:\d+$/);
  });
});

it('restricts a configured API key to its tenants (over HTTP and gRPC)', async () => {
  const config: ServerConfig = {
    ...TEST_CONFIG,
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

it('serves A2A beside the registry and the task routes on the HTTP port when both are on', async () => {
  const server = await startReferenceServer({
    ...TEST_CONFIG,
    a2a: true,
    registry: { ...DEFAULT_CONFIG.registry, enabled: true },
  });
  const http = new HTTPTransport({ url: server.urls.http });
  try {
    expect(server.a2a).toBeInstanceOf(A2AServer);
    const card = await fetch(`${server.urls.http}/.well-known/agent-card.json`);
    expect(card.status).toBe(200);
    expect(await card.json()).toMatchObject({ name: 'reference-agent' });
    const registry = await fetch(`${server.urls.http}/registry/agents`);
    expect(registry.status).toBe(200);
    const native = await new AgentClient({ transport: http, baseUrl: server.urls.http }).sendTask(
      createTask('echo hi'),
    );
    expect(native.state).toBe('completed');
  } finally {
    await http.stop();
    await server.stop();
  }
});

it('serves no A2A unless asked', async () => {
  const server = await startReferenceServer(TEST_CONFIG);
  try {
    expect(server.a2a).toBeUndefined();
    expect((await fetch(`${server.urls.http}/.well-known/agent-card.json`)).status).toBe(404);
  } finally {
    await server.stop();
  }
});

describe('the registry it serves (registry.enabled)', () => {
  it('keeps entries in the SQLite file of the run store, so they outlive a restart', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'reference-registry-'));
    const config: ServerConfig = {
      ...TEST_CONFIG,
      runStore: `sqlite:${path.join(dir, 'server.db')}`,
      registry: { enabled: true, ttlMs: 600_000, maxEntries: 5, url: null, apiKey: null },
    };
    const card = createDemoCard({ name: 'stored-agent', url: 'http://127.0.0.1:9/' });
    const first = await startReferenceServer(config);
    let registered: RegistryEntryView;
    try {
      expect(first.registry?.ttlMs).toBe(600_000);
      expect(first.registry?.maxEntries).toBe(5);
      const client = new RegistryClient({ url: first.urls.http });
      registered = await client.register(card);
      await client.close();
    } finally {
      await first.stop();
    }
    const second = await startReferenceServer(config);
    try {
      const client = new RegistryClient({ url: second.urls.http });
      expect(await client.get('stored-agent')).toEqual(registered);
      // Tasks still go to the demo agent beside the registry routes.
      const http = new HTTPTransport({ url: second.urls.http });
      const done = await new AgentClient({ transport: http, baseUrl: second.urls.http }).sendTask(
        createTask('echo beside the registry'),
      );
      expect(done.state).toBe('completed');
      await http.stop();
      await client.close();
    } finally {
      await second.stop();
    }
  });

  it('registers the demo agent with another server, and deregisters it on stop', async () => {
    const registry = await startReferenceServer({
      ...TEST_CONFIG,
      registry: { enabled: true, url: null, apiKey: null },
    });
    const client = new RegistryClient({ url: registry.urls.http });
    try {
      const agent = await startReferenceServer({
        ...TEST_CONFIG,
        registry: { enabled: false, url: registry.urls.http, apiKey: null, heartbeatMs: 60_000 },
      });
      try {
        expect((await client.get('reference-agent')).card.url).toBe(agent.urls.http);
      } finally {
        await agent.stop();
      }
      await expect(client.get('reference-agent')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await client.close();
      await registry.stop();
    }
  });

  it('fails the start when the registry it joins refuses it', async () => {
    const registry = await startReferenceServer({
      ...TEST_CONFIG,
      auth: { ...DEFAULT_CONFIG.auth, mode: 'apikey', apiKeys: ['sk-registry-1'] },
      registry: { enabled: true, url: null, apiKey: null },
    });
    try {
      const joining: ServerConfig = {
        ...TEST_CONFIG,
        registry: { enabled: false, url: registry.urls.http, apiKey: 'sk-wrong-key', heartbeatMs: 60_000 },
      };
      await expect(startReferenceServer(joining)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    } finally {
      await registry.stop();
    }
  });
});
