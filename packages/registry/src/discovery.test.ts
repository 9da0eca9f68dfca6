/**
 * The registry as agents use it, over real sockets: a membership that survives a registry restart
 * and leaves on stop, and a client that finds an agent by skill and sends it a task.
 */
import { APIKeyAuth } from '@agent/auth';
import { AgentError, NotFoundError, messageText, type AgentCard } from '@agent/core';
import { createTestAgent } from '@agent/test-support';
import { HTTPTransport } from '@agent/transport-http';
import { clientFor } from './client-for.js';
import { RegistryMembership } from './membership.js';
import { Registry } from './registry.js';
import { RegistryClient } from './registry-client.js';
import { card } from './test-support/cards.js';
import {
  ALICE_KEY,
  BOB_KEY,
  registryAuth,
  serveRegistry,
  type RegistryServer,
} from './test-support/registry-server.js';

async function eventually(check: () => Promise<boolean>, what: string, bound = 10_000): Promise<void> {
  const end = Date.now() + bound;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const isRegistered = (client: RegistryClient, name: string) => (): Promise<boolean> =>
  client.get(name).then(
    () => true,
    (error: unknown) => {
      if (error instanceof NotFoundError) return false;
      throw error;
    },
  );

describe('RegistryMembership against a registry', () => {
  const servers: RegistryServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((served) => served.stop()));
  });

  it('registers, heartbeats, re-registers after the registry restarts, and deregisters on stop', async () => {
    const first = await serveRegistry({ ttlMs: 60_000 });
    servers.push(first);
    const port = first.server.port;
    const errors: unknown[] = [];
    const client = new RegistryClient({
      url: first.url,
      credentials: ALICE_KEY,
      authenticator: registryAuth(),
    });
    const agent = card('worker', { skills: [{ id: 'work', name: 'Work' }] });
    const membership = new RegistryMembership({
      client,
      card: () => agent,
      heartbeatMs: 20,
      onError: (error) => errors.push(error),
    });
    await membership.start();
    const reader = first.client(BOB_KEY);
    const registered = await reader.get('worker');
    await eventually(
      async () => (await reader.get('worker')).heartbeat_at !== registered.heartbeat_at,
      'a heartbeat renews the entry',
    );

    // The registry goes away (its in-memory entries with it) and a new one comes up on the same port.
    await first.stop();
    servers.splice(0);
    const second = await serveRegistry({ ttlMs: 60_000, url: `http://127.0.0.1:${port}` });
    servers.push(second);
    await eventually(isRegistered(second.client(BOB_KEY), 'worker'), 'the membership registers again');
    // Heartbeats that failed while the registry was down were reported as typed errors.
    expect(errors.every((error) => error instanceof AgentError)).toBe(true);

    await membership.stop();
    await expect(second.client(BOB_KEY).get('worker')).rejects.toBeInstanceOf(NotFoundError);
    await client.close();
  });

  it('restarting within the ttl replaces its own entry instead of failing with 409', async () => {
    const served = await serveRegistry({ ttlMs: 60_000 });
    servers.push(served);
    const client = served.client(ALICE_KEY);
    await client.register(card('worker', { description: 'the old run' }));
    const membership = new RegistryMembership({
      client,
      card: () => card('worker', { description: 'the new run' }),
    });
    await membership.start();
    expect((await served.client(BOB_KEY).get('worker')).card.description).toBe('the new run');
    await membership.stop();
  });

  it("start rejects with AlreadyExistsError when the name is another principal's", async () => {
    const served = await serveRegistry({ ttlMs: 60_000 });
    servers.push(served);
    await served.client(BOB_KEY).register(card('worker'));
    const membership = new RegistryMembership({
      client: served.client(ALICE_KEY),
      card: () => card('worker'),
    });
    await expect(membership.start()).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    await membership.stop();
    await expect(served.client(BOB_KEY).get('worker')).resolves.toMatchObject({ name: 'worker' });
  });
});

describe('discovery', () => {
  it('finds an agent by skill through the registry and sends it a task with clientFor', async () => {
    const served = await serveRegistry({ ttlMs: 60_000 });
    const agentKey = 'agent-key-00000042';
    const agentAuth = new APIKeyAuth({ validKeys: { [agentKey]: [] } });
    const agentServer = new HTTPTransport({ url: 'http://127.0.0.1:0', authenticator: agentAuth });
    agentServer.bind(createTestAgent({ reply: (text) => `translated: ${text}` }));
    await agentServer.start();
    const translator: AgentCard = card('translator', {
      url: agentServer.url,
      skills: [{ id: 'translate', name: 'Translate', tags: ['language'] }],
    });
    try {
      await served.client(ALICE_KEY).register(translator);
      await served.client(ALICE_KEY).register(card('unrelated'));
      const [found, ...others] = await served.client(BOB_KEY).find({ skill: 'language' });
      expect(others).toEqual([]);
      expect(found?.card.url).toBe(agentServer.url);
      const agent = clientFor(found!, { credentials: agentKey, authenticator: agentAuth });
      try {
        const reply = await agent.sendMessage('bonjour');
        expect(messageText(reply)).toBe('translated: bonjour');
      } finally {
        await agent.close();
      }
    } finally {
      await agentServer.stop();
      await served.stop();
    }
  });

  it('serves the registry below the transport URL path, beside an agent of its own', async () => {
    const registry = new Registry();
    const server = new HTTPTransport({ url: 'http://127.0.0.1:0/base', routes: [registry] });
    server.bind(createTestAgent());
    await server.start();
    const client = new RegistryClient({ url: server.url });
    try {
      await client.register(card('anonymous-agent'));
      await expect(client.get('anonymous-agent')).resolves.toMatchObject({ name: 'anonymous-agent' });
      await expect(client.find({})).resolves.toHaveLength(1);
    } finally {
      await client.close();
      await server.stop();
      await registry.close();
    }
  });
});
