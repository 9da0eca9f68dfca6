/**
 * Two real reference-server processes: A serves the registry (API keys, a 1.5 s TTL), B registers
 * its demo agent with A (AGENT_REGISTRY_URL). B is listed under its real URL, heartbeats, is gone
 * at once after a graceful stop and after its TTL when killed; a client finds it by skill and sends
 * it a task.
 */
import { APIKeyAuth } from '@agent/auth';
import { AgentError, createTask, messageText } from '@agent/core';
import { clientFor, RegistryClient, type RegistryEntryView } from '@agent/registry';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

jest.setTimeout(60_000);

// Two principals: a key is named by its first 8 characters, so these differ there.
const READER_KEY = 'reader-key-1';
const AGENT_KEY = 'agent-b-key-2';
const TTL_MS = 1500;
const AGENT = 'reference-agent';
/** Bound of every poll: far above the TTL and the heartbeat, so only a real failure reaches it. */
const POLL_BOUND_MS = 20_000;

function keyed(key: string): { authenticator: APIKeyAuth; credentials: string } {
  return { authenticator: new APIKeyAuth({ validKeys: { [key]: [] } }), credentials: key };
}

async function notFound(work: Promise<unknown>): Promise<AgentError> {
  try {
    await work;
  } catch (error) {
    const agentError = AgentError.from(error);
    expect(agentError.code).toBe('NOT_FOUND');
    return agentError;
  }
  throw new Error('expected NOT_FOUND, got an entry');
}

/** Calls `probe` until it returns a value, at most POLL_BOUND_MS. */
async function pollFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + POLL_BOUND_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a reference server registering with another one', () => {
  let registry: ServerProcess;
  let reader: RegistryClient;
  const agentEnv = (): Record<string, string> => ({
    AGENT_REGISTRY_URL: registry.urls.http,
    AGENT_REGISTRY_API_KEY: AGENT_KEY,
    AGENT_REGISTRY_HEARTBEAT_MS: '200',
  });

  beforeAll(async () => {
    registry = await startServerProcess({
      AGENT_AUTH: 'apikey',
      AGENT_API_KEYS: `${READER_KEY},${AGENT_KEY}`,
      AGENT_REGISTRY: '1',
      AGENT_REGISTRY_TTL_MS: String(TTL_MS),
    });
    reader = new RegistryClient({ url: registry.urls.http, ...keyed(READER_KEY) });
  });
  afterAll(async () => {
    await reader?.close();
    expect(await registry?.stop()).toBe(0);
  });

  it('is listed under its real URL, heartbeats, and is gone at once after a graceful stop', async () => {
    const agent = await startServerProcess(agentEnv());
    try {
      // The listening line comes after the first registration: the entry is there already.
      const entry = await reader.get(AGENT);
      expect(entry.card.url).toBe(agent.urls.http);
      expect(Object.keys(entry).sort()).toEqual([
        'card',
        'expires_at',
        'heartbeat_at',
        'name',
        'registered_at',
      ]);
      expect(Date.parse(entry.expires_at) - Date.parse(entry.heartbeat_at)).toBe(TTL_MS);
      const listed = await reader.list();
      expect(listed.agents.map((e) => e.name)).toEqual([AGENT]);
      expect(listed.next_page_token).toBe('');

      // Heartbeats renew it: expires_at moves while registered_at stays.
      const renewed = await pollFor('a heartbeat', async () => {
        const now = await reader.get(AGENT);
        return Date.parse(now.expires_at) > Date.parse(entry.expires_at) ? now : undefined;
      });
      expect(renewed.registered_at).toBe(entry.registered_at);
      expect(Date.parse(renewed.heartbeat_at)).toBeGreaterThan(Date.parse(entry.heartbeat_at));

      // Another principal reads the entry but cannot renew or remove it: not found, as for a stranger.
      await notFound(reader.heartbeat(AGENT));
      await notFound(reader.deregister(AGENT));
      expect((await reader.get(AGENT)).card.url).toBe(agent.urls.http);

      expect(await agent.stop('SIGTERM')).toBe(0);
      // Deregistered before the process exited: no TTL to wait out.
      await notFound(reader.get(AGENT));
      expect((await reader.list()).agents).toEqual([]);
    } finally {
      await agent.stop('SIGKILL');
    }
  });

  it('is found by skill and runs a task; killed, it disappears once its TTL ran out', async () => {
    const agent = await startServerProcess(agentEnv());
    let lastSeen: RegistryEntryView;
    try {
      const found = await reader.find({ skill: 'echo' });
      expect(found.map((e) => e.card.url)).toEqual([agent.urls.http]);
      expect(await reader.find({ skill: 'no-such-skill' })).toEqual([]);
      lastSeen = found[0]!;

      const client = clientFor(found[0]!);
      try {
        const task = await client.sendTask(createTask('echo found through the registry'));
        expect(task.state).toBe('completed');
        const reply = [...task.messages].reverse().find((m) => m.role === 'agent');
        expect(messageText(reply)).toBe('found through the registry');
      } finally {
        await client.close();
      }
    } finally {
      await agent.stop('SIGKILL');
    }
    expect(await agent.exited).toBeNull();

    // Nobody deregistered it: it stays listed until the last heartbeat's TTL has run out.
    const goneAt = await pollFor('the entry to expire', async () => {
      try {
        lastSeen = await reader.get(AGENT);
        return undefined;
      } catch (error) {
        if (AgentError.from(error).code !== 'NOT_FOUND') throw error;
        return Date.now();
      }
    });
    expect(goneAt).toBeGreaterThanOrEqual(Date.parse(lastSeen.expires_at));
    expect((await reader.list()).agents).toEqual([]);
  });
});
