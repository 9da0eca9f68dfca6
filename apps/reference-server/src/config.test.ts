import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ValueError } from '@agent/core';
import { DEFAULT_CONFIG, loadConfig, parseBasicUsers, parseConfigFile, parseTenantLists } from './config.js';

function configFile(content: unknown): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-config-'));
  const file = path.join(dir, 'config.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('loadConfig', () => {
  it('uses the embedded defaults', () => {
    expect(loadConfig({})).toEqual(DEFAULT_CONFIG);
  });

  it('reads a config file and lets the environment override it', () => {
    const file = configFile({
      host: '0.0.0.0',
      ports: { http: 9000, grpc: 9001 },
      auth: { mode: 'apikey', apiKeys: ['from-file'] },
    });
    const config = loadConfig({ AGENT_CONFIG: file, HTTP_PORT: '0', AGENT_API_KEYS: 'a, b' });
    expect(config.host).toBe('0.0.0.0');
    expect(config.ports).toEqual({ http: 0, sse: 8081, ws: 8082, grpc: 9001 });
    expect(config.auth.mode).toBe('apikey');
    expect(config.auth.apiKeys).toEqual(['a', 'b']);
  });

  it('names the bad field of an invalid file', () => {
    const file = configFile({ ports: { http: 'eighty' }, auth: { mode: 'magic' }, extra: 1 });
    try {
      loadConfig({ AGENT_CONFIG: file });
      throw new Error('expected a ValueError');
    } catch (error) {
      expect(error).toBeInstanceOf(ValueError);
      const message = (error as Error).message;
      expect(message).toContain('/ports/http');
      expect(message).toContain('/auth/mode');
      expect(message).toContain('/extra');
    }
    expect(() => loadConfig({ AGENT_CONFIG: configFile('{nope') })).toThrow(/not valid JSON/);
    expect(() => loadConfig({ AGENT_CONFIG: '/no/such/file.json' })).toThrow(/Cannot read AGENT_CONFIG/);
  });

  it('rejects bad environment values with the variable named', () => {
    expect(() => loadConfig({ HTTP_PORT: 'x' })).toThrow(/HTTP_PORT/);
    expect(() => loadConfig({ GRPC_PORT: '70000' })).toThrow(/GRPC_PORT/);
    expect(() => loadConfig({ AGENT_AUTH: 'magic' })).toThrow(/AGENT_AUTH/);
    expect(() => loadConfig({ AGENT_AUTH: 'apikey' })).toThrow(/AGENT_API_KEYS/);
    expect(() => loadConfig({ AGENT_AUTH: 'bearer' })).toThrow(/AGENT_JWT_SECRET/);
    expect(() => loadConfig({ AGENT_AUTH: 'basic' })).toThrow(/AGENT_BASIC_USERS/);
    expect(() => loadConfig({ AGENT_RUN_STORE: 'redis://x' })).toThrow(/AGENT_RUN_STORE/);
    expect(() => loadConfig({ AGENT_JWT_LEEWAY_SECONDS: '-1' })).toThrow(/LEEWAY/);
  });

  it('takes a PostgreSQL store from AGENT_STORE, with AGENT_RUN_STORE as its alias', () => {
    const url = 'postgres://agent:s3cret@db.internal:5432/agents';
    expect(loadConfig({ AGENT_STORE: url }).runStore).toBe(url);
    expect(loadConfig({ AGENT_RUN_STORE: url }).runStore).toBe(url);
    expect(loadConfig({ AGENT_STORE: 'memory', AGENT_RUN_STORE: url }).runStore).toBe('memory');
    expect(loadConfig({ AGENT_STORE: 'postgresql://h/db' }).runStore).toBe('postgresql://h/db');
    expect(
      loadConfig({
        AGENT_STORE: url,
        AGENT_PG_POOL_MAX: '4',
        AGENT_PG_STATEMENT_TIMEOUT_MS: '5000',
        AGENT_REPLICA_LEASE_MS: '3000',
        AGENT_PG_PREPARED_STATEMENTS: '0',
      }).postgres,
    ).toEqual({ poolMax: 4, statementTimeoutMs: 5000, leaseMs: 3000, preparedStatements: false });
    expect(
      loadConfig({
        AGENT_STORE: url,
        AGENT_CONFIG: configFile('{"postgres": {"leaseMs": 900, "preparedStatements": true}}'),
      }).postgres,
    ).toEqual({
      leaseMs: 900,
      preparedStatements: true,
    });
  });

  it('refuses PostgreSQL settings without a PostgreSQL store, and never echoes a connection string', () => {
    expect(() => loadConfig({ AGENT_PG_POOL_MAX: '4' })).toThrow(/AGENT_PG_POOL_MAX .*AGENT_STORE=postgres/);
    expect(() => loadConfig({ AGENT_STORE: 'sqlite:/tmp/x.db', AGENT_REPLICA_LEASE_MS: '900' })).toThrow(
      /AGENT_REPLICA_LEASE_MS/,
    );
    expect(() => loadConfig({ AGENT_STORE: 'postgres://a:b@h/d', AGENT_PG_POOL_MAX: '0' })).toThrow(
      /AGENT_PG_POOL_MAX/,
    );
    expect(() => loadConfig({ AGENT_PG_PREPARED_STATEMENTS: 'false' })).toThrow(
      /AGENT_PG_PREPARED_STATEMENTS .*AGENT_STORE=postgres/,
    );
    expect(() =>
      loadConfig({ AGENT_STORE: 'postgres://a:b@h/d', AGENT_PG_PREPARED_STATEMENTS: 'sometimes' }),
    ).toThrow(/AGENT_PG_PREPARED_STATEMENTS/);
    for (const env of [
      { AGENT_STORE: 'mysql://agent:s3cret@h/db' },
      { AGENT_STORE: 'postgres://agent:s3cret@h/db', AGENT_RUN_STORE_MAX_TASKS: '5' },
    ]) {
      let message = '';
      try {
        loadConfig(env);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/AGENT_(RUN_)?STORE/);
      expect(message).not.toContain('s3cret');
    }
  });

  it('reads every JWT setting', () => {
    const config = loadConfig({
      AGENT_AUTH: 'bearer',
      AGENT_JWT_SECRET: 's',
      AGENT_JWT_ALGORITHM: 'HS512',
      AGENT_JWT_ISSUER: 'iss',
      AGENT_JWT_AUDIENCE: 'aud',
      AGENT_JWT_LEEWAY_SECONDS: '5',
    });
    expect(config.auth.jwt).toEqual({
      secret: 's',
      algorithm: 'HS512',
      issuer: 'iss',
      audience: 'aud',
      leewaySeconds: 5,
    });
  });
});

describe('run store limits', () => {
  it('reads runStoreLimits from the file and each AGENT_RUN_STORE_* variable over its field', () => {
    const file = configFile({ runStoreLimits: { maxTasks: 500, maxBytes: 1048576, taskRetentionMs: 60000 } });
    expect(loadConfig({ AGENT_CONFIG: file }).runStoreLimits).toEqual({
      maxTasks: 500,
      maxBytes: 1048576,
      taskRetentionMs: 60000,
    });
    expect(
      loadConfig({
        AGENT_CONFIG: file,
        AGENT_RUN_STORE_MAX_TASKS: '20',
        AGENT_RUN_STORE_RETENTION_MS: '1000',
      }).runStoreLimits,
    ).toEqual({ maxTasks: 20, maxBytes: 1048576, taskRetentionMs: 1000 });
    expect(loadConfig({ AGENT_RUN_STORE_MAX_BYTES: '4096' }).runStoreLimits).toEqual({ maxBytes: 4096 });
  });

  it('refuses limits that are not whole numbers from 1, naming the variable or field', () => {
    for (const name of [
      'AGENT_RUN_STORE_MAX_TASKS',
      'AGENT_RUN_STORE_MAX_BYTES',
      'AGENT_RUN_STORE_RETENTION_MS',
    ])
      for (const value of ['0', '-1', '1.5', '10k'])
        expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid ${name}: `));
    expect(() => loadConfig({ AGENT_CONFIG: configFile({ runStoreLimits: { maxTasks: 0 } }) })).toThrow(
      /\/runStoreLimits\/maxTasks/,
    );
    expect(() => loadConfig({ AGENT_CONFIG: configFile({ runStoreLimits: { keep: 1 } }) })).toThrow(
      /\/runStoreLimits\/keep/,
    );
  });

  it('takes only a retention for a SQLite store: it keeps what its file holds', () => {
    const sqlite = { AGENT_RUN_STORE: 'sqlite:/tmp/tasks.db' };
    expect(loadConfig({ ...sqlite, AGENT_RUN_STORE_RETENTION_MS: '5000' }).runStoreLimits).toEqual({
      taskRetentionMs: 5000,
    });
    expect(() => loadConfig({ ...sqlite, AGENT_RUN_STORE_MAX_TASKS: '5' })).toThrow(
      /^AGENT_RUN_STORE_MAX_TASKS \(runStoreLimits\.maxTasks\) bounds the memory run store only/,
    );
    expect(() => loadConfig({ ...sqlite, AGENT_RUN_STORE_MAX_BYTES: '5' })).toThrow(
      /AGENT_RUN_STORE_MAX_BYTES/,
    );
  });
});

describe('API keys', () => {
  it('takes two keys as two principals', () => {
    const config = loadConfig({ AGENT_AUTH: 'apikey', AGENT_API_KEYS: 'sk-alice-1,sk-bobby-2' });
    expect(config.auth.apiKeys).toEqual(['sk-alice-1', 'sk-bobby-2']);
  });

  it('refuses keys that share their first 8 characters (one principal), naming them by position', () => {
    let message = '';
    try {
      loadConfig({ AGENT_AUTH: 'apikey', AGENT_API_KEYS: 'sk-live-aaaa,other,sk-live-bbbb' });
    } catch (error) {
      expect(error).toBeInstanceOf(ValueError);
      message = (error as Error).message;
    }
    expect(message).toMatch(/^Invalid AGENT_API_KEYS \(auth\.apiKeys\): entries 1 and 3 share their first 8/);
    expect(message).not.toContain('sk-live');
  });
});

describe('parseBasicUsers', () => {
  it('splits entries at their first colon', () => {
    const users = parseBasicUsers('alice:pa:ss, bob:x');
    expect({ ...users }).toEqual({ alice: 'pa:ss', bob: 'x' });
    expect(users.toString).toBeUndefined();
  });
  it('rejects entries without a user or colon', () => {
    expect(() => parseBasicUsers('alice')).toThrow(ValueError);
    expect(() => parseBasicUsers(':pw')).toThrow(ValueError);
  });
});

describe('parseConfigFile', () => {
  it('accepts a complete file', () => {
    expect(
      parseConfigFile({
        host: '127.0.0.1',
        ports: { http: 1, sse: 2, ws: 3, grpc: 4 },
        httpBackend: 'express',
        auth: {
          mode: 'basic',
          basicUsers: { a: 'b' },
          jwt: { secret: 'x', algorithm: 'HS384', issuer: null, audience: 'y', leewaySeconds: 1 },
        },
        a2a: true,
        a2aPushAllowPrivate: true,
        runStore: 'sqlite:/tmp/x.db',
        approvals: 'approve',
        registry: { enabled: true, ttlMs: 1, maxEntries: 1, url: null, apiKey: null, heartbeatMs: 1 },
      }),
    ).toBeDefined();
  });
});

describe('tenant lists', () => {
  const KEY = 'sk-live-secret-key-1';

  function message(work: () => unknown): string {
    try {
      work();
    } catch (error) {
      expect(error).toBeInstanceOf(ValueError);
      return (error as Error).message;
    }
    throw new Error('expected a ValueError');
  }

  it('reads auth.tenants from the file and AGENT_TENANTS over it', () => {
    const file = configFile({ auth: { mode: 'apikey', apiKeys: [KEY, 'k2'], tenants: { [KEY]: ['acme'] } } });
    expect({ ...loadConfig({ AGENT_CONFIG: file }).auth.tenants }).toEqual({ [KEY]: ['acme'] });
    const fromEnv = loadConfig({ AGENT_CONFIG: file, AGENT_TENANTS: '{"k2": ["", "globex.eu:1"]}' });
    expect({ ...fromEnv.auth.tenants }).toEqual({ k2: ['', 'globex.eu:1'] });
  });

  it('gives Basic users tenant lists, a __proto__ user included', () => {
    const config = loadConfig({
      AGENT_AUTH: 'basic',
      AGENT_BASIC_USERS: 'alice:pw,__proto__:pw',
      AGENT_TENANTS: '{"alice": ["acme"], "__proto__": ["globex"]}',
    });
    expect(Object.keys(config.auth.tenants)).toEqual(['alice', '__proto__']);
    expect(config.auth.tenants.__proto__).toEqual(['globex']);
  });

  it('refuses AGENT_TENANTS that is not JSON, or not a map of tenant lists, naming the field', () => {
    expect(message(() => parseTenantLists('acme'))).toMatch(/^Invalid AGENT_TENANTS: not valid JSON/);
    expect(message(() => parseTenantLists('["acme"]'))).toMatch(/^Invalid AGENT_TENANTS: .*object/);
    const bad = message(() =>
      parseTenantLists(JSON.stringify({ ok: ['a'], [KEY]: ['acme corp', 'a'.repeat(129)] })),
    );
    expect(bad).toMatch(/^Invalid AGENT_TENANTS: /);
    expect(bad).toContain('/<entry 2>/0');
    expect(bad).toContain('/<entry 2>/1');
    expect(bad).not.toContain(KEY);
  });

  it('names a bad auth.tenants field of the file by position, never quoting a key', () => {
    const file = configFile({ auth: { mode: 'apikey', apiKeys: [KEY], tenants: { [KEY]: 'acme' } } });
    const text = message(() => loadConfig({ AGENT_CONFIG: file }));
    expect(text).toContain('/auth/tenants/<entry 1>');
    expect(text).not.toContain(KEY);
  });

  it('refuses an entry for a key or user that is not configured, and tenants without apikey or basic', () => {
    const stray = message(() =>
      loadConfig({ AGENT_AUTH: 'apikey', AGENT_API_KEYS: KEY, AGENT_TENANTS: '{"sk-typo": ["acme"]}' }),
    );
    expect(stray).toMatch(/AGENT_TENANTS.*entry 1 is not one of AGENT_API_KEYS/);
    expect(stray).not.toContain('sk-typo');
    expect(
      message(() =>
        loadConfig({ AGENT_AUTH: 'basic', AGENT_BASIC_USERS: 'alice:pw', AGENT_TENANTS: '{"bob": []}' }),
      ),
    ).toMatch(/user "bob" is not one of AGENT_BASIC_USERS/);
    expect(
      message(() =>
        loadConfig({ AGENT_AUTH: 'bearer', AGENT_JWT_SECRET: 's', AGENT_TENANTS: '{"alice": ["acme"]}' }),
      ),
    ).toMatch(/AGENT_TENANTS \(auth.tenants\) needs AGENT_AUTH=apikey or basic/);
  });
});

describe('A2A settings', () => {
  it('serves no A2A by default; AGENT_A2A and AGENT_A2A_PUSH_ALLOW_PRIVATE turn on each over its field', () => {
    expect(loadConfig({})).toMatchObject({ a2a: false, a2aPushAllowPrivate: false });
    expect(loadConfig({ AGENT_A2A: '1' })).toMatchObject({ a2a: true, a2aPushAllowPrivate: false });
    expect(loadConfig({ AGENT_A2A: '1', AGENT_A2A_PUSH_ALLOW_PRIVATE: '1' })).toMatchObject({
      a2a: true,
      a2aPushAllowPrivate: true,
    });
    const file = configFile({ a2a: true, a2aPushAllowPrivate: true });
    expect(loadConfig({ AGENT_CONFIG: file })).toMatchObject({ a2a: true, a2aPushAllowPrivate: true });
    expect(loadConfig({ AGENT_CONFIG: file, AGENT_A2A_PUSH_ALLOW_PRIVATE: 'false' })).toMatchObject({
      a2a: true,
      a2aPushAllowPrivate: false,
    });
  });

  it('refuses a bad flag, and private push targets without A2A', () => {
    expect(() => loadConfig({ AGENT_A2A: '1', AGENT_A2A_PUSH_ALLOW_PRIVATE: 'yes' })).toThrow(
      /Invalid AGENT_A2A_PUSH_ALLOW_PRIVATE: yes/,
    );
    expect(() => loadConfig({ AGENT_A2A_PUSH_ALLOW_PRIVATE: '1' })).toThrow(
      /AGENT_A2A_PUSH_ALLOW_PRIVATE \(a2aPushAllowPrivate\) configures A2A push notifications; set AGENT_A2A=1/,
    );
    expect(loadConfig({ AGENT_A2A_PUSH_ALLOW_PRIVATE: '0' }).a2aPushAllowPrivate).toBe(false);
  });
});

describe('registry settings', () => {
  function message(work: () => unknown): string {
    try {
      work();
    } catch (error) {
      expect(error).toBeInstanceOf(ValueError);
      return (error as Error).message;
    }
    throw new Error('expected a ValueError');
  }

  it('serves no registry and joins none by default', () => {
    expect(loadConfig({}).registry).toEqual({ enabled: false, url: null, apiKey: null });
  });

  it('reads the registry served and the one joined from the file, each variable over its field', () => {
    const file = configFile({
      registry: {
        enabled: true,
        ttlMs: 60000,
        maxEntries: 50,
        url: 'http://registry.example:8080',
        apiKey: 'from-file-key',
        heartbeatMs: 20000,
      },
    });
    expect(loadConfig({ AGENT_CONFIG: file }).registry).toEqual({
      enabled: true,
      ttlMs: 60000,
      maxEntries: 50,
      url: 'http://registry.example:8080',
      apiKey: 'from-file-key',
      heartbeatMs: 20000,
    });
    expect(
      loadConfig({
        AGENT_CONFIG: file,
        AGENT_REGISTRY_TTL_MS: '7',
        AGENT_REGISTRY_URL: 'https://other.example',
        AGENT_REGISTRY_API_KEY: 'env-key',
        AGENT_REGISTRY_HEARTBEAT_MS: '500',
      }).registry,
    ).toEqual({
      enabled: true,
      ttlMs: 7,
      maxEntries: 50,
      url: 'https://other.example',
      apiKey: 'env-key',
      heartbeatMs: 500,
    });
    // The file's TTL belongs to the registry the variable turns off: refused, not ignored.
    expect(() => loadConfig({ AGENT_CONFIG: file, AGENT_REGISTRY: '0' })).toThrow(/^AGENT_REGISTRY_TTL_MS/);
    expect(
      loadConfig({ AGENT_REGISTRY: 'true', AGENT_REGISTRY_TTL_MS: '1500', AGENT_REGISTRY_MAX_ENTRIES: '3' })
        .registry,
    ).toEqual({ enabled: true, ttlMs: 1500, maxEntries: 3, url: null, apiKey: null });
    expect(loadConfig({ AGENT_REGISTRY: '1' }).registry.enabled).toBe(true);
    expect(loadConfig({ AGENT_REGISTRY: 'false' }).registry.enabled).toBe(false);
  });

  it('refuses bad values, naming the variable or field', () => {
    expect(() => loadConfig({ AGENT_REGISTRY: 'yes' })).toThrow(/^Invalid AGENT_REGISTRY: yes/);
    for (const name of ['AGENT_REGISTRY_TTL_MS', 'AGENT_REGISTRY_MAX_ENTRIES'])
      for (const value of ['0', '-1', '1.5', 'soon'])
        expect(() => loadConfig({ AGENT_REGISTRY: '1', [name]: value })).toThrow(
          new RegExp(`^Invalid ${name}: `),
        );
    const joined = { AGENT_REGISTRY_URL: 'http://127.0.0.1:9' };
    expect(() => loadConfig({ ...joined, AGENT_REGISTRY_HEARTBEAT_MS: '0' })).toThrow(
      /^Invalid AGENT_REGISTRY_HEARTBEAT_MS: /,
    );
    expect(() => loadConfig({ ...joined, AGENT_REGISTRY_HEARTBEAT_MS: '2147483648' })).toThrow(
      /AGENT_REGISTRY_HEARTBEAT_MS.*at most 2147483647/,
    );
    for (const url of ['ws://127.0.0.1:9', 'grpc://x:1', 'localhost:8080', 'http://'])
      expect(() => loadConfig({ AGENT_REGISTRY_URL: url })).toThrow(
        /^Invalid AGENT_REGISTRY_URL \(registry\.url\)/,
      );
    const file = configFile({ registry: { enabled: 'yes', url: 'ftp://x', apiKey: '', extra: 1 } });
    const text = message(() => loadConfig({ AGENT_CONFIG: file }));
    for (const field of ['/registry/enabled', '/registry/url', '/registry/apiKey', '/registry/extra'])
      expect(text).toContain(field);
  });

  it('refuses a setting that means nothing without the one it belongs to', () => {
    expect(() => loadConfig({ AGENT_REGISTRY_TTL_MS: '1000' })).toThrow(
      /^AGENT_REGISTRY_TTL_MS \(registry\.ttlMs\) configures the registry this server serves; set AGENT_REGISTRY=1/,
    );
    expect(() => loadConfig({ AGENT_REGISTRY_MAX_ENTRIES: '10' })).toThrow(/^AGENT_REGISTRY_MAX_ENTRIES/);
    const text = message(() => loadConfig({ AGENT_REGISTRY_API_KEY: 'sk-registry-secret' }));
    expect(text).toMatch(
      /^AGENT_REGISTRY_API_KEY \(registry\.apiKey\) is presented to the registry named by AGENT_REGISTRY_URL/,
    );
    expect(text).not.toContain('sk-registry-secret');
    expect(() => loadConfig({ AGENT_REGISTRY_HEARTBEAT_MS: '100' })).toThrow(/^AGENT_REGISTRY_HEARTBEAT_MS/);
  });
});
