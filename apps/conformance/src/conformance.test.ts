/**
 * The suite against the real reference server in a child process, over every transport, with each
 * auth mode and both HTTP backends (what CI runs).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mintJwt } from '@agent/auth/testing';
import {
  createAuthenticator,
  createDemoAgent,
  createDemoHandler,
  DEFAULT_CONFIG,
} from '@agent/reference-server';
import {
  ALL_CASES,
  runConformance,
  type CaseResult,
  type ConformanceOptions,
  type TransportName,
} from './index.js';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

jest.setTimeout(120_000);

function failures(results: CaseResult[]): string[] {
  return results.filter((r) => r.status !== 'passed').map((r) => `${r.transport} ${r.id}: ${r.error}`);
}

async function suite(
  server: ServerProcess,
  transport: TransportName,
  extra: Partial<ConformanceOptions> = {},
) {
  const url = server.urls[transport as 'http' | 'sse' | 'ws' | 'grpc'];
  const results = await runConformance({ transport, url, caseTimeoutMs: 20_000, ...extra });
  expect(failures(results)).toEqual([]);
  expect(results.length).toBeGreaterThan(extra.filter ? 0 : 5);
  return results;
}

describe('reference server without auth (node backend)', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess();
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it.each(['http', 'sse', 'ws', 'grpc'] as const)('passes over %s', async (transport) => {
    const results = await suite(server, transport);
    if (transport === 'http') expect(results.some((r) => r.id === 'http.body.too-large')).toBe(true);
    else expect(results.some((r) => r.id === 'stream.cancel')).toBe(true);
    // It serves no registry (GET /registry/agents is a 404): the registry cases are left out.
    expect(results.filter((r) => r.id.startsWith('registry.'))).toEqual([]);
    // Nor A2A (GET /.well-known/agent-card.json is a 404): the A2A cases are left out.
    expect(results.filter((r) => r.id.startsWith('a2a.'))).toEqual([]);
  });
});

describe('reference server with API keys (express backend)', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({
      AGENT_AUTH: 'apikey',
      AGENT_API_KEYS: 'conformance-key-1,other-key',
      AGENT_HTTP_BACKEND: 'express',
    });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it.each(['http', 'sse', 'ws', 'grpc'] as const)(
    'passes over %s, a second key included',
    async (transport) => {
      const results = await suite(server, transport, {
        credentials: { kind: 'apikey', value: 'conformance-key-1' },
        otherCredentials: { kind: 'apikey', value: 'other-key' },
      });
      expect(results.some((r) => r.id === 'task.auth.wrong')).toBe(true);
      expect(results.some((r) => r.id === 'task.owner.other-principal')).toBe(true);
    },
  );
});

describe('reference server serving the registry (AGENT_REGISTRY=1, HTTP only)', () => {
  const registryCases = ALL_CASES.filter((c) => c.registry).map((c) => c.id);
  let keyed: ServerProcess;
  let sqlite: ServerProcess;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'conformance-registry-'));
    [keyed, sqlite] = await Promise.all([
      startServerProcess({
        AGENT_AUTH: 'apikey',
        AGENT_API_KEYS: 'registry-key-1,stranger-key-2',
        AGENT_REGISTRY: '1',
      }),
      startServerProcess({ AGENT_REGISTRY: '1', AGENT_RUN_STORE: `sqlite:${path.join(dir, 'server.db')}` }),
    ]);
  });
  afterAll(async () => {
    expect(await keyed.stop()).toBe(0);
    expect(await sqlite.stop()).toBe(0);
  });

  it('passes every case with API keys, a second key included (--registry)', async () => {
    const results = await suite(keyed, 'http', {
      registry: true,
      credentials: { kind: 'apikey', value: 'registry-key-1' },
      otherCredentials: { kind: 'apikey', value: 'stranger-key-2' },
    });
    expect(results.filter((r) => r.id.startsWith('registry.')).map((r) => r.id)).toEqual(registryCases);
  });

  it('finds the registry by itself and passes its cases with the SQLite store', async () => {
    const results = await suite(sqlite, 'http', { filter: /^registry\./ });
    // Without auth and a second principal, those two cases have nothing to run against.
    expect(results.map((r) => r.id)).toEqual(
      registryCases.filter((id) => id !== 'registry.auth.missing' && id !== 'registry.owner.other-principal'),
    );
  });
});

describe('reference server serving A2A (AGENT_A2A=1, HTTP only)', () => {
  const a2aCases = ALL_CASES.filter((c) => c.a2a).map((c) => c.id);
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({
      AGENT_AUTH: 'apikey',
      AGENT_API_KEYS: 'a2a-key-1,a2a-stranger-key-2',
      AGENT_A2A: '1',
    });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('passes every case with API keys, a second key included (--a2a)', async () => {
    const results = await suite(server, 'http', {
      a2a: true,
      credentials: { kind: 'apikey', value: 'a2a-key-1' },
      otherCredentials: { kind: 'apikey', value: 'a2a-stranger-key-2' },
    });
    expect(results.filter((r) => r.id.startsWith('a2a.')).map((r) => r.id)).toEqual(a2aCases);
  });

  it('finds A2A by its public card and passes its cases', async () => {
    const results = await suite(server, 'http', {
      filter: /^a2a\./,
      credentials: { kind: 'apikey', value: 'a2a-key-1' },
    });
    // Without a second principal, that case has nothing to run against.
    expect(results.map((r) => r.id)).toEqual(a2aCases.filter((id) => id !== 'a2a.owner.other-principal'));
  });
});

describe('reference server with JWT bearer and Basic auth', () => {
  const secret = 'conformance-secret-with-enough-entropy';
  let bearer: ServerProcess;
  let basic: ServerProcess;
  beforeAll(async () => {
    [bearer, basic] = await Promise.all([
      startServerProcess({ AGENT_AUTH: 'bearer', AGENT_JWT_SECRET: secret, AGENT_JWT_ISSUER: 'conformance' }),
      startServerProcess({ AGENT_AUTH: 'basic', AGENT_BASIC_USERS: 'alice:pa:ss,bob:pw' }),
    ]);
  });
  afterAll(async () => {
    expect(await bearer.stop()).toBe(0);
    expect(await basic.stop()).toBe(0);
  });

  it.each(['http', 'grpc'] as const)(
    'bearer passes over %s, a second subject included',
    async (transport) => {
      const token = (sub: string): string =>
        mintJwt({
          secret,
          algorithm: 'HS256',
          claims: { sub, iss: 'conformance', exp: Math.floor(Date.now() / 1000) + 600 },
        });
      const results = await suite(bearer, transport, {
        credentials: { kind: 'bearer', value: token('conformance') },
        otherCredentials: { kind: 'bearer', value: token('conformance-other') },
      });
      expect(results.some((r) => r.id === 'task.owner.other-principal')).toBe(true);
    },
  );

  it.each(['http', 'ws', 'sse'] as const)(
    'basic passes over %s (password with a colon), a second user included',
    async (transport) => {
      const results = await suite(basic, transport, {
        credentials: { kind: 'basic', value: 'alice:pa:ss' },
        otherCredentials: { kind: 'basic', value: 'bob:pw' },
      });
      expect(results.some((r) => r.id === 'task.owner.other-principal')).toBe(true);
    },
  );
});

describe('reference server stopping with work in flight', () => {
  // One server per transport: the case stops it. The grace is short so that a 60 s sleep is canceled.
  it.each(['http', 'sse', 'ws', 'grpc'] as const)('stops in two phases over %s', async (transport) => {
    const server = await startServerProcess({ AGENT_STOP_GRACE_MS: '1500' });
    try {
      const results = await suite(server, transport, {
        filter: /^server\.stop$/,
        control: {
          async stop() {
            const code = await server.stop();
            if (code !== 0) throw new Error(`the server exited with ${String(code)}: ${server.stderr()}`);
          },
        },
      });
      expect(results.map((r) => r.id)).toEqual(['server.stop']);
    } finally {
      await server.stop();
    }
  });
});

describe('in-process transport', () => {
  it('passes without auth', async () => {
    const results = await runConformance({
      transport: 'memory',
      inProcess: { agent: createDemoHandler(createDemoAgent()) },
    });
    expect(failures(results)).toEqual([]);
    expect(results.some((r) => r.id === 'stream.cancel')).toBe(true);
  });

  it('passes with API keys, a second key included', async () => {
    const authenticator = createAuthenticator({
      ...DEFAULT_CONFIG,
      auth: { ...DEFAULT_CONFIG.auth, mode: 'apikey', apiKeys: ['mem-key', 'other-mem-key'] },
    });
    const results = await runConformance({
      transport: 'memory',
      credentials: { kind: 'apikey', value: 'mem-key' },
      otherCredentials: { kind: 'apikey', value: 'other-mem-key' },
      inProcess: { agent: createDemoHandler(createDemoAgent({ authenticator })), authenticator },
    });
    expect(failures(results)).toEqual([]);
    expect(results.some((r) => r.id === 'task.auth.wrong')).toBe(true);
    expect(results.some((r) => r.id === 'task.owner.other-principal')).toBe(true);
  });
});
