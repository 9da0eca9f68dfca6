/**
 * `new Agent({ registry })` against a real registry over HTTP: registered with its real address after
 * a port-0 start, heartbeats, deregistered on stop, refused when the registry cannot register it, and
 * registered again after the registry lost its entries.
 */
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { transformSync } from '@swc/core';
import { APIKeyAuth } from '@agent/auth';
import * as core from '@agent/core';
import { AgentError, handlerFromFunction, NotFoundError, ValueError } from '@agent/core';
import * as registryPackage from '@agent/registry';
import { Registry, RegistryClient, type RegistryEntryView } from '@agent/registry';
import * as transportHttp from '@agent/transport-http';
import { HTTPTransport } from '@agent/transport-http';
import { Agent, type AgentOptions } from './agent.js';
import * as runtime from './index.js';
import { loadRegistry } from './join-registry.js';

/** Polls `check` until it returns a value other than undefined; fails after `ms`. No timing asserted. */
async function waitFor<T>(what: string, check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

/** A registry served over HTTP at `url` (port 0 picks one), as the registry package documents it. */
async function serveRegistry(
  url = 'http://127.0.0.1:0',
  options: { ttlMs?: number; authenticator?: APIKeyAuth } = {},
): Promise<{ url: string; stop: () => Promise<void> }> {
  const registry = new Registry({ ttlMs: options.ttlMs ?? 2_000 });
  const transport = new HTTPTransport({
    url,
    routes: [registry],
    ...(options.authenticator ? { authenticator: options.authenticator } : {}),
  });
  transport.bind(handlerFromFunction(async (task) => task));
  await transport.start();
  return {
    url: transport.url,
    stop: async () => {
      await transport.stop();
      await registry.close();
    },
  };
}

/** The entry of `name`, or undefined while it is not registered. */
async function entryOf(client: RegistryClient, name: string): Promise<RegistryEntryView | undefined> {
  try {
    return await client.get(name);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** Whether something answers HTTP at `url` (the agent's own transport). */
function answers(url: string): Promise<boolean> {
  return new Promise((done) => {
    const req = request(`${url}/healthz`, (res) => {
      res.resume();
      done(true);
    });
    req.on('error', () => done(false));
    req.end();
  });
}

function worker(registry: AgentOptions['registry'], extra: Partial<AgentOptions> = {}): Agent {
  return new Agent({
    card: { name: 'worker', description: 'Does work', url: 'http://127.0.0.1:0' },
    transport: new HTTPTransport({ url: 'http://127.0.0.1:0' }),
    registry,
    execute: () => undefined,
    ...extra,
  });
}

describe('Agent registry option', () => {
  let registry: { url: string; stop: () => Promise<void> };
  let client: RegistryClient;

  beforeEach(async () => {
    registry = await serveRegistry();
    client = new RegistryClient({ url: registry.url });
  });
  afterEach(async () => {
    await client.close();
    await registry.stop();
  });

  it('registers the card with its real address on start, heartbeats, and deregisters on stop', async () => {
    const agent = worker({ url: registry.url, heartbeatMs: 50 });
    await agent.start();
    try {
      expect(agent.card.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
      const first = await client.get('worker');
      expect(first.card).toEqual(agent.card);
      expect(first.card.url).toBe(agent.card.url);
      const listed = await client.list();
      expect(listed.agents.map((entry) => entry.name)).toEqual(['worker']);
      // Heartbeats move expires_at forward.
      await waitFor('a heartbeat', async () => {
        const now = await client.get('worker');
        return now.expires_at > first.expires_at ? now : undefined;
      });
    } finally {
      await agent.stop();
    }
    await expect(client.get('worker')).rejects.toBeInstanceOf(NotFoundError);
    expect((await client.list()).agents).toEqual([]);
    expect(await answers(agent.card.url)).toBe(false);
    // A second stop has nothing left to do.
    await expect(agent.stop()).resolves.toBeUndefined();
  });

  it('leaveRegistry() deregisters at once and leaves the agent serving', async () => {
    const agent = worker({ url: registry.url, heartbeatMs: 50 });
    await agent.start();
    try {
      await agent.leaveRegistry();
      await expect(client.get('worker')).rejects.toBeInstanceOf(NotFoundError);
      expect(await answers(agent.card.url)).toBe(true);
      // No heartbeat brings it back.
      await new Promise((resolve) => setTimeout(resolve, 150));
      await expect(client.get('worker')).rejects.toBeInstanceOf(NotFoundError);
      await expect(agent.leaveRegistry()).resolves.toBeUndefined();
    } finally {
      await agent.stop();
    }
  });

  it('a registry that is down at start rejects start() and stops the transport again', async () => {
    const down = await serveRegistry();
    await down.stop();
    const agent = worker({ url: down.url });
    const error = await agent.start().then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('UNAVAILABLE');
    expect(await answers(agent.card.url)).toBe(false);
    await agent.stop();
  });

  it('registers again after the registry restarted on a fresh store; failures go to onObserverError', async () => {
    const restartable = await serveRegistry('http://127.0.0.1:0', { ttlMs: 60_000 });
    const errors: { error: unknown; where: string }[] = [];
    const agent = worker(
      { url: restartable.url, heartbeatMs: 50 },
      { onObserverError: (error, where) => errors.push({ error, where }) },
    );
    const watcher = new RegistryClient({ url: restartable.url });
    let again: { url: string; stop: () => Promise<void> } | null = null;
    await agent.start();
    try {
      await restartable.stop();
      // While it is down the heartbeats fail, reported and never thrown.
      await waitFor('a failed heartbeat', async () => (errors.length > 0 ? true : undefined));
      expect(errors[0]!.where).toBe('registry');
      expect(errors[0]!.error).toBeInstanceOf(AgentError);
      again = await serveRegistry(restartable.url, { ttlMs: 60_000 });
      const entry = await waitFor('the new registration', () => entryOf(watcher, 'worker'));
      expect(entry.card.url).toBe(agent.card.url);
    } finally {
      await agent.stop();
      await watcher.close();
      await again?.stop();
    }
    expect(errors.every((entry) => entry.where === 'registry')).toBe(true);
  });

  it('a name another principal holds rejects start() with the typed error and stops the transport', async () => {
    const authenticator = new APIKeyAuth({
      validKeys: { 'key-alice': [], 'key-bob': [] },
      principals: { 'key-alice': 'alice', 'key-bob': 'bob' },
    });
    const guarded = await serveRegistry('http://127.0.0.1:0', { authenticator });
    const alice = worker({ url: guarded.url, credentials: 'key-alice', authenticator });
    const bob = worker({ url: guarded.url, credentials: 'key-bob', authenticator });
    await alice.start();
    try {
      const error = await bob.start().then(
        () => null,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe('ALREADY_EXISTS');
      expect((error as AgentError).message).toBe('Agent worker is already registered');
      expect(await answers(bob.card.url)).toBe(false);
      // Alice's entry is untouched.
      const watcher = new RegistryClient({ url: guarded.url, credentials: 'key-alice', authenticator });
      try {
        expect((await watcher.get('worker')).card.url).toBe(alice.card.url);
      } finally {
        await watcher.close();
      }
    } finally {
      await bob.stop();
      await alice.stop();
      await guarded.stop();
    }
  });

  it('a stop() while the first registration hangs abandons it: start rejects, nothing is left open', async () => {
    // A registry that accepts connections and never answers.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const { port } = silent.address() as AddressInfo;
    const agent = worker({ url: `http://127.0.0.1:${port}` });
    try {
      const starting = agent.start().then(
        () => null,
        (reason: unknown) => reason,
      );
      await waitFor('the registration under way', async () => (sockets.size > 0 ? true : undefined));
      await agent.stop();
      expect(await starting).toBeInstanceOf(Error);
      expect(await answers(agent.card.url)).toBe(false);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => silent.close(done));
    }
  });

  it('an agent without a transport registers its card.url', async () => {
    const agent = new Agent({
      card: { name: 'elsewhere', url: 'http://127.0.0.1:9' },
      registry: { url: registry.url },
    });
    await agent.start();
    try {
      expect((await client.get('elsewhere')).card.url).toBe('http://127.0.0.1:9');
    } finally {
      await agent.stop();
    }
    await expect(client.get('elsewhere')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('an agent with neither a transport nor a card.url has nothing to advertise', async () => {
    const agent = new Agent({ card: { name: 'nowhere' }, registry: { url: registry.url } });
    await expect(agent.start()).rejects.toThrow(
      'registry needs an address to advertise: give the agent a transport or a card.url',
    );
    expect((await client.list()).agents).toEqual([]);
  });
});

describe('Agent registry option checks', () => {
  const build = (registry: unknown) => () =>
    new Agent({ card: { name: 'a' }, registry: registry as AgentOptions['registry'] });

  it('refuses unknown names, a missing or non-HTTP url and bad values', () => {
    expect(build({ url: 'http://127.0.0.1:1', heartbeat: 5 })).toThrow(
      'registry does not accept the option "heartbeat"; accepted: authenticator, credentials, heartbeatMs, tenant, timeoutMs, tls, url',
    );
    expect(build({})).toThrow("registry needs a url, the registry's address (e.g. http://127.0.0.1:8080)");
    expect(build({ url: '' })).toThrow(ValueError);
    expect(build({ url: 'grpc://127.0.0.1:1' })).toThrow(
      "registry.url must be an http:// or https:// URL, got 'grpc://127.0.0.1:1'",
    );
    expect(build({ url: 'not a url' })).toThrow(ValueError);
    expect(build('http://127.0.0.1:1')).toThrow('registry must be an object');
    expect(build({ url: 'http://127.0.0.1:1', heartbeatMs: 0 })).toThrow(
      'registry.heartbeatMs must be a positive finite number, got 0',
    );
    expect(build({ url: 'http://127.0.0.1:1', credentials: 'k' })).toThrow(
      'registry.credentials need registry.authenticator, which builds what the agent sends to the registry',
    );
    expect(build({ url: 'http://127.0.0.1:1', tenant: 7 })).toThrow('registry.tenant must be a string');
    expect(build({ url: 'http://127.0.0.1:1', credentials: 7 })).toThrow(
      'registry.credentials must be a string',
    );
    expect(build({ url: 'http://127.0.0.1:1', timeoutMs: -1 })).toThrow(
      'registry.timeoutMs must be a non-negative integer, got -1',
    );
    expect(build({ url: 'https://127.0.0.1:1', tls: 'yes' })).toThrow(
      'registry.tls must be an object of TLS settings',
    );
    expect(build({ url: 'http://127.0.0.1:1', heartbeatMs: 100, tenant: 't', timeoutMs: 0 })).not.toThrow();
    expect(build(undefined)).not.toThrow();
  });
});

describe('loading @agent/registry', () => {
  // pnpm's jest launcher sets NODE_PATH to the store's shared node_modules; a user's program has no such path.
  const { NODE_PATH: _storePath, ...userEnv } = process.env;
  const runtimeDist = resolve(__dirname, '..', 'dist');

  it('a program without the package gets a ValueError naming the package to add', async () => {
    // In a child process: jest's own resolver would find the workspace's packages from anywhere.
    const empty = mkdtempSync(join(tmpdir(), 'agent-empty-'));
    const program = `
      const { loadRegistry } = require(${JSON.stringify(join(runtimeDist, 'join-registry.js'))});
      const { ValueError } = require('@agent/core');
      try {
        loadRegistry([${JSON.stringify(join(empty, 'main.js'))}]);
      } catch (error) {
        console.log(JSON.stringify({ valueError: error instanceof ValueError, message: error.message, data: error.data }));
      }`;
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['-e', program], {
        cwd: resolve(runtimeDist, '..'),
        env: userEnv,
      });
      const error = JSON.parse(stdout) as { valueError: boolean; message: string; data: unknown };
      expect(error.valueError).toBe(true);
      expect(error.message).toBe(
        `registry needs the @agent/registry package, which is not installed where this program runs (looked from ${empty}): add it to your project, e.g. pnpm add @agent/registry`,
      );
      expect(error.data).toEqual({ package: '@agent/registry' });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('a package that fails to load or lacks the classes says so', () => {
    const project = (source: string): { main: string; cleanup: () => void } => {
      const root = mkdtempSync(join(tmpdir(), 'agent-registry-'));
      const dir = join(root, 'node_modules', '@agent', 'registry');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: '@agent/registry', main: 'index.js' }));
      writeFileSync(join(dir, 'index.js'), source);
      return { main: join(root, 'main.js'), cleanup: () => rmSync(root, { recursive: true, force: true }) };
    };
    const broken = project("throw new Error('a dependency is missing');");
    try {
      expect(() => loadRegistry([broken.main])).toThrow(
        'registry found @agent/registry but could not load it: a dependency is missing',
      );
    } finally {
      broken.cleanup();
    }
    const bare = project('exports.RegistryClient = class {};');
    try {
      expect(() => loadRegistry([bare.main])).toThrow('@agent/registry does not export RegistryMembership');
    } finally {
      bare.cleanup();
    }
  });
});

describe('README registry example', () => {
  it('registers, is found by skill, and is gone after stop', async () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const block = /<!-- readme-registry:start -->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    // Imports stay on top; the rest runs in an async function, for the block's top-level awaits.
    const imports: string[] = [];
    const body = (block as string).replace(/^import\s[\s\S]*?from\s+'[^']+';[ \t]*$/gm, (statement) => {
      imports.push(statement);
      return '';
    });
    const { code } = transformSync(`${imports.join('\n')}\nexport async function main() {\n${body}\n}`, {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    });
    const lines: string[] = [];
    const modules: Record<string, unknown> = {
      '@agent/core': core,
      '@agent/registry': registryPackage,
      '@agent/runtime': runtime,
      '@agent/transport-http': transportHttp,
    };
    const fakeRequire = (name: string): unknown => {
      if (!(name in modules)) throw new Error(`example imports ${name}`);
      return modules[name];
    };
    const exports: { main?: () => Promise<void> } = {};
    new Function('require', 'exports', 'module', 'console', code)(
      fakeRequire,
      exports,
      { exports },
      { log: (...args: unknown[]) => lines.push(args.map(String).join(' ')) },
    );
    await (exports.main as () => Promise<void>)();
    expect(lines).toEqual(['true', '0']);
  });
});
