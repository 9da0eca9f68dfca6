/**
 * Reference server configuration: an optional JSON file named by AGENT_CONFIG (validated with ajv;
 * errors name the bad field), then environment variables on top, then defaults.
 */
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { ValueError, toValidationIssues } from '@agent/core';
import { MAX_TENANT_LENGTH, TENANT_NAME_PATTERN } from '@agent/server';

export type AuthMode = 'none' | 'apikey' | 'bearer' | 'basic';
export type JwtAlgorithm = 'HS256' | 'HS384' | 'HS512';

export interface ServerConfig {
  host: string;
  ports: { http: number; sse: number; ws: number; grpc: number };
  /** HTTP server backend: `node` (default, fastest) or `express`. */
  httpBackend: 'node' | 'express';
  auth: {
    mode: AuthMode;
    apiKeys: string[];
    jwt: {
      secret: string;
      algorithm: JwtAlgorithm;
      issuer: string | null;
      audience: string | null;
      leewaySeconds: number;
    };
    basicUsers: Record<string, string>;
    /**
     * API key (mode `apikey`) or Basic user (mode `basic`) → the tenants it may act for; one that is
     * not listed may act for any tenant. A bearer token carries its own `tenants` claim.
     */
    tenants: Record<string, string[]>;
  };
  /** Serve A2A 1.0 (the public card, JSON-RPC and HTTP+JSON) beside the native routes of the HTTP port. */
  a2a: boolean;
  /**
   * Let A2A push-notification webhooks point at loopback, private, link-local or unique-local
   * addresses, which are refused by default so a caller cannot make the server reach inside its
   * network. Only with `a2a`.
   */
  a2aPushAllowPrivate: boolean;
  /**
   * `memory`, `sqlite:<path>`, or a `postgres://` (`postgresql://`) connection string: replicas
   * started on one PostgreSQL share their tasks, approvals and registry.
   */
  runStore: string;
  /** PostgreSQL settings; only with a `postgres://` store. An absent one is the default. */
  postgres: PostgresConfig;
  /** Bounds of the run store; an absent one is the store's own default. */
  runStoreLimits: RunStoreLimits;
  /**
   * What the demo agent's approval handler answers: `none` (no handler: approval-gated tools fail),
   * or `store`: no handler, the run waits in an approval store beside the run store until a reviewer
   * decides over `/approvals` on the HTTP port.
   */
  approvals: 'none' | 'approve' | 'deny' | 'store';
  /** How long a stop lets in-flight tasks finish before canceling them (`server shutting down`), in ms. */
  stopGraceMs: number;
  /** The agent registry: the one this server serves, and the one its demo agent registers with. */
  registry: RegistryConfig;
  /** The server's log lines on stderr. */
  log: LogConfig;
  /** `GET /metrics` on the HTTP port (Prometheus text). */
  metrics: MetricsConfig;
  /** What the server refuses at once rather than queue. */
  limits: LimitsConfig;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface LogConfig {
  /** Lowest level written. Default `info`. */
  level: LogLevel;
  /** `json` (one JSON object per line, the default) or `pretty` (one readable line, for humans). */
  format: 'json' | 'pretty';
  /** One `info` line per request (operation, transport, status, duration, principal, tenant, ids). Default on. */
  requests: boolean;
}

export interface MetricsConfig {
  /** Serve `GET /metrics` on the HTTP port. */
  enabled: boolean;
  /**
   * The bearer token a scraper presents (`Authorization: Bearer <token>`); null: the route is open.
   * It is not one of the agent's credentials: a scraper is not a principal.
   */
  token: string | null;
}

export interface LimitsConfig {
  /** Most task runs at once over every transport together; past it UNAVAILABLE (503, Retry-After). */
  maxConcurrentTasks?: number;
  /**
   * Most task runs at once of one caller (principal, or address when anonymous) over every
   * transport together, so one caller cannot hold every slot; past it UNAVAILABLE (503,
   * `data.limit: "tasks_per_caller"`). Default: half of `maxConcurrentTasks`, rounded up (the
   * same number turns the share off).
   */
  maxConcurrentTasksPerCaller?: number;
  /** A token bucket per principal over every transport together; past it RESOURCE_EXHAUSTED (429, Retry-After). */
  rateLimit?: { perSecond: number; burst?: number };
}

/**
 * `enabled`, `ttlMs` and `maxEntries` are about the registry this server serves on its HTTP port;
 * `url`, `apiKey` and `heartbeatMs` about the registry the demo agent registers itself with (another
 * server's, or this one's).
 */
export interface RegistryConfig {
  /** Serve the registry routes (`/registry/agents…`) beside the task routes of the HTTP transport. */
  enabled: boolean;
  /** How long an entry lives after its last heartbeat, in ms; absent: the registry's 30,000. */
  ttlMs?: number;
  /** Most live entries, all tenants together; absent: the registry's 10,000. */
  maxEntries?: number;
  /** The registry the demo agent registers with while it runs (`http://` or `https://`), or null. */
  url: string | null;
  /** The API key the demo agent presents to that registry, or null to present none. */
  apiKey: string | null;
  /** Milliseconds between the demo agent's heartbeats; absent: a third of the entry's lifetime. */
  heartbeatMs?: number;
}

export interface PostgresConfig {
  /** Most connections of this replica's pool. Default 10. */
  poolMax?: number;
  /** Longest a statement may run, in ms. Default 30,000. */
  statementTimeoutMs?: number;
  /**
   * How long this replica counts as alive after its last lease renewal, in ms; once it is over,
   * another replica finishes its unfinished tasks `failed` (REPLICA_LOST). Default 15,000.
   */
  leaseMs?: number;
  /**
   * Run the store's statements as named prepared statements (parsed and planned once per
   * connection). Default true; false behind a pooler that cannot keep them.
   */
  preparedStatements?: boolean;
}

/**
 * How much the run store keeps. Every task the server answers is recorded there (get, list,
 * subscribe and resubmission read it back), so these bound the memory a busy server holds.
 */
export interface RunStoreLimits {
  /** Most task records (memory store only). Default 10,000. */
  maxTasks?: number;
  /** Most JSON bytes of records and their events (memory store only). Default 256 MiB. */
  maxBytes?: number;
  /** Finished tasks saved longer ago are deleted, in ms. Default 24 h in memory, none in SQLite. */
  taskRetentionMs?: number;
}

export const DEFAULT_CONFIG: ServerConfig = {
  host: '127.0.0.1',
  ports: { http: 8080, sse: 8081, ws: 8082, grpc: 50051 },
  httpBackend: 'node',
  auth: {
    mode: 'none',
    apiKeys: [],
    jwt: { secret: '', algorithm: 'HS256', issuer: null, audience: null, leewaySeconds: 0 },
    basicUsers: Object.create(null) as Record<string, string>,
    tenants: Object.create(null) as Record<string, string[]>,
  },
  a2a: false,
  a2aPushAllowPrivate: false,
  runStore: 'memory',
  postgres: {},
  runStoreLimits: {},
  approvals: 'none',
  stopGraceMs: 10_000,
  registry: { enabled: false, url: null, apiKey: null },
  log: { level: 'info', format: 'json', requests: true },
  metrics: { enabled: false, token: null },
  // A bound by default: each running task holds memory (its log, with the memory store), and one
  // client opening hundreds of streams must not be able to take the whole process.
  limits: { maxConcurrentTasks: 32 },
};

const port = { type: 'integer', minimum: 0, maximum: 65535 };
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
const positive = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
/** The longest delay a Node timer keeps; a longer one would fire at once, every millisecond. */
const MAX_TIMER_MS = 2_147_483_647;
const HTTP_URL_PATTERN = '^https?://';
const STORE_PATTERN = '^(memory|sqlite:.+|postgres(ql)?://.+)$';
/** The server pipeline's tenant rule, so a listed tenant is one a call can name. */
const TENANT_LISTS = {
  type: 'object',
  additionalProperties: {
    type: 'array',
    items: { type: 'string', maxLength: MAX_TENANT_LENGTH, pattern: TENANT_NAME_PATTERN },
  },
};
const FILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    host: { type: 'string', minLength: 1 },
    ports: {
      type: 'object',
      additionalProperties: false,
      properties: { http: port, sse: port, ws: port, grpc: port },
    },
    httpBackend: { enum: ['node', 'express'] },
    auth: {
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: { enum: ['none', 'apikey', 'bearer', 'basic'] },
        apiKeys: { type: 'array', items: { type: 'string', minLength: 1 } },
        jwt: {
          type: 'object',
          additionalProperties: false,
          properties: {
            secret: { type: 'string' },
            algorithm: { enum: ['HS256', 'HS384', 'HS512'] },
            issuer: { type: ['string', 'null'] },
            audience: { type: ['string', 'null'] },
            leewaySeconds: { type: 'integer', minimum: 0 },
          },
        },
        basicUsers: { type: 'object', additionalProperties: { type: 'string' } },
        tenants: TENANT_LISTS,
      },
    },
    a2a: { type: 'boolean' },
    a2aPushAllowPrivate: { type: 'boolean' },
    runStore: { type: 'string', pattern: STORE_PATTERN },
    postgres: {
      type: 'object',
      additionalProperties: false,
      properties: {
        poolMax: positive,
        statementTimeoutMs: positive,
        leaseMs: positive,
        preparedStatements: { type: 'boolean' },
      },
    },
    runStoreLimits: {
      type: 'object',
      additionalProperties: false,
      properties: { maxTasks: positive, maxBytes: positive, taskRetentionMs: positive },
    },
    approvals: { enum: ['none', 'approve', 'deny', 'store'] },
    stopGraceMs: { type: 'integer', minimum: 0 },
    registry: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean' },
        ttlMs: positive,
        maxEntries: positive,
        url: { type: ['string', 'null'], pattern: HTTP_URL_PATTERN },
        apiKey: { type: ['string', 'null'], minLength: 1 },
        heartbeatMs: { type: 'integer', minimum: 1, maximum: MAX_TIMER_MS },
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      properties: {
        level: { enum: LOG_LEVELS },
        format: { enum: ['json', 'pretty'] },
        requests: { type: 'boolean' },
      },
    },
    metrics: {
      type: 'object',
      additionalProperties: false,
      properties: { enabled: { type: 'boolean' }, token: { type: ['string', 'null'], minLength: 1 } },
    },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        maxConcurrentTasks: positive,
        maxConcurrentTasksPerCaller: positive,
        rateLimit: {
          type: 'object',
          additionalProperties: false,
          required: ['perSecond'],
          properties: { perSecond: { type: 'number', exclusiveMinimum: 0 }, burst: positive },
        },
      },
    },
  },
};

type FileConfig = {
  host?: string;
  ports?: Partial<ServerConfig['ports']>;
  httpBackend?: ServerConfig['httpBackend'];
  auth?: Partial<Omit<ServerConfig['auth'], 'jwt'>> & { jwt?: Partial<ServerConfig['auth']['jwt']> };
  a2a?: boolean;
  a2aPushAllowPrivate?: boolean;
  runStore?: string;
  postgres?: PostgresConfig;
  runStoreLimits?: RunStoreLimits;
  approvals?: ServerConfig['approvals'];
  stopGraceMs?: number;
  registry?: Partial<RegistryConfig>;
  log?: Partial<LogConfig>;
  metrics?: Partial<MetricsConfig>;
  limits?: LimitsConfig;
};

let validateFile: ReturnType<Ajv['compile']> | undefined;
let validateTenants: ReturnType<Ajv['compile']> | undefined;

/**
 * Throws the ValueError naming every bad field by JSON pointer. A tenants entry is named by its
 * position (`<entry 2>`), never by its name: that name may be an API key.
 */
function refuse(
  source: string,
  validate: ReturnType<Ajv['compile']>,
  value: unknown,
  tenantsAt: string,
): never {
  const issues = toValidationIssues(validate.errors).map((issue) => ({
    ...issue,
    pointer: redactTenantEntry(issue.pointer, tenantsAt, value),
  }));
  throw new ValueError(`Invalid ${source}: ${issues.map((i) => `${i.pointer} ${i.message}`).join('; ')}`, {
    data: { errors: issues },
  });
}

function redactTenantEntry(pointer: string, tenantsAt: string, value: unknown): string {
  if (!pointer.startsWith(`${tenantsAt}/`)) return pointer;
  const rest = pointer.slice(tenantsAt.length + 1);
  const slash = rest.indexOf('/');
  const segment = slash === -1 ? rest : rest.slice(0, slash);
  const name = segment.replace(/~1/g, '/').replace(/~0/g, '~');
  let lists: unknown = value;
  for (const part of tenantsAt.split('/').filter(Boolean)) lists = (lists as Record<string, unknown>)?.[part];
  const position = lists && typeof lists === 'object' ? Object.keys(lists).indexOf(name) + 1 : 0;
  return `${tenantsAt}/<entry ${position}>${slash === -1 ? '' : rest.slice(slash)}`;
}

/** Validates a parsed config file; the error names every bad field by JSON pointer. */
export function parseConfigFile(value: unknown, source = 'config'): FileConfig {
  validateFile ??= new Ajv({ allErrors: true }).compile(FILE_SCHEMA);
  if (!validateFile(value)) refuse(source, validateFile, value, '/auth/tenants');
  return value as FileConfig;
}

/**
 * `AGENT_TENANTS`: a JSON object mapping an API key or Basic user to its tenant list, as the
 * config file's `auth.tenants`.
 */
export function parseTenantLists(raw: string, source = 'AGENT_TENANTS'): Record<string, string[]> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ValueError(`Invalid ${source}: not valid JSON (expected {"<key or user>": ["<tenant>", …]})`);
  }
  validateTenants ??= new Ajv({ allErrors: true }).compile(TENANT_LISTS);
  if (!validateTenants(json)) refuse(source, validateTenants, json, '');
  return ownLists(json as Record<string, string[]>);
}

/** A null-prototype copy, so a `__proto__` entry stays an entry. */
function ownLists(lists: Record<string, string[]>): Record<string, string[]> {
  const copy = Object.create(null) as Record<string, string[]>;
  for (const key of Object.keys(lists)) {
    Object.defineProperty(copy, key, {
      value: [...lists[key]!],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

function envPort(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535)
    throw new ValueError(`Invalid ${name}: ${raw} (expected a port number 0-65535)`);
  return Number(raw);
}

/** A whole number from 1 up, or undefined when the variable is unset or empty. */
function envCount(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[1-9]\d{0,14}$/.test(raw))
    throw new ValueError(`Invalid ${name}: ${raw} (expected a whole number from 1)`);
  return Number(raw);
}

function envEnum<T extends string>(
  env: NodeJS.ProcessEnv,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!allowed.includes(raw as T))
    throw new ValueError(`Invalid ${name}: ${raw} (expected one of ${allowed.join(', ')})`);
  return raw as T;
}

/** `alice:pa:ss,bob:x` → {alice: 'pa:ss', bob: 'x'}; entries split at their first colon. */
export function parseBasicUsers(raw: string): Record<string, string> {
  const users = Object.create(null) as Record<string, string>;
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(':');
    if (colon <= 0) throw new ValueError('Invalid AGENT_BASIC_USERS: each entry must be user:password');
    users[entry.slice(0, colon)] = entry.slice(colon + 1);
  }
  return users;
}

/** Builds the effective configuration from AGENT_CONFIG and the environment. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  let file: FileConfig = {};
  if (env.AGENT_CONFIG) {
    let text: string;
    try {
      text = readFileSync(env.AGENT_CONFIG, 'utf8');
    } catch (error) {
      throw new ValueError(`Cannot read AGENT_CONFIG ${env.AGENT_CONFIG}: ${(error as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ValueError(`AGENT_CONFIG ${env.AGENT_CONFIG} is not valid JSON: ${(error as Error).message}`);
    }
    file = parseConfigFile(json, `AGENT_CONFIG ${env.AGENT_CONFIG}`);
  }
  const d = DEFAULT_CONFIG;
  const jwtFile = file.auth?.jwt ?? {};
  const leeway = env.AGENT_JWT_LEEWAY_SECONDS;
  const grace = env.AGENT_STOP_GRACE_MS;
  if (grace !== undefined && grace !== '' && !/^\d+$/.test(grace)) {
    throw new ValueError(`Invalid AGENT_STOP_GRACE_MS: ${grace} (expected a non-negative integer)`);
  }
  if (leeway !== undefined && leeway !== '' && !/^\d+$/.test(leeway)) {
    throw new ValueError(`Invalid AGENT_JWT_LEEWAY_SECONDS: ${leeway} (expected a non-negative integer)`);
  }
  const config: ServerConfig = {
    host: env.HOST || file.host || d.host,
    ports: {
      http: envPort(env, 'HTTP_PORT') ?? file.ports?.http ?? d.ports.http,
      sse: envPort(env, 'SSE_PORT') ?? file.ports?.sse ?? d.ports.sse,
      ws: envPort(env, 'WS_PORT') ?? file.ports?.ws ?? d.ports.ws,
      grpc: envPort(env, 'GRPC_PORT') ?? file.ports?.grpc ?? d.ports.grpc,
    },
    httpBackend:
      envEnum(env, 'AGENT_HTTP_BACKEND', ['node', 'express'] as const) ?? file.httpBackend ?? d.httpBackend,
    auth: {
      mode:
        envEnum(env, 'AGENT_AUTH', ['none', 'apikey', 'bearer', 'basic'] as const) ??
        file.auth?.mode ??
        d.auth.mode,
      apiKeys:
        env.AGENT_API_KEYS !== undefined
          ? env.AGENT_API_KEYS.split(',')
              .map((k) => k.trim())
              .filter(Boolean)
          : (file.auth?.apiKeys ?? []),
      jwt: {
        secret: env.AGENT_JWT_SECRET ?? jwtFile.secret ?? d.auth.jwt.secret,
        algorithm:
          envEnum(env, 'AGENT_JWT_ALGORITHM', ['HS256', 'HS384', 'HS512'] as const) ??
          jwtFile.algorithm ??
          d.auth.jwt.algorithm,
        issuer: env.AGENT_JWT_ISSUER || (jwtFile.issuer ?? null),
        audience: env.AGENT_JWT_AUDIENCE || (jwtFile.audience ?? null),
        leewaySeconds: leeway ? Number(leeway) : (jwtFile.leewaySeconds ?? 0),
      },
      basicUsers:
        env.AGENT_BASIC_USERS !== undefined
          ? parseBasicUsers(env.AGENT_BASIC_USERS)
          : Object.assign(Object.create(null) as Record<string, string>, file.auth?.basicUsers ?? {}),
      tenants:
        env.AGENT_TENANTS !== undefined && env.AGENT_TENANTS !== ''
          ? parseTenantLists(env.AGENT_TENANTS)
          : ownLists(file.auth?.tenants ?? {}),
    },
    a2a:
      env.AGENT_A2A !== undefined && env.AGENT_A2A !== ''
        ? env.AGENT_A2A === '1' || env.AGENT_A2A === 'true'
        : (file.a2a ?? d.a2a),
    a2aPushAllowPrivate:
      envFlag(env, 'AGENT_A2A_PUSH_ALLOW_PRIVATE') ?? file.a2aPushAllowPrivate ?? d.a2aPushAllowPrivate,
    runStore: env.AGENT_STORE || env.AGENT_RUN_STORE || file.runStore || d.runStore,
    postgres: postgresConfig(env, file.postgres ?? {}),
    runStoreLimits: runStoreLimits(env, file.runStoreLimits ?? {}),
    approvals:
      envEnum(env, 'AGENT_APPROVALS', ['none', 'approve', 'deny', 'store'] as const) ??
      file.approvals ??
      d.approvals,
    stopGraceMs: grace ? Number(grace) : (file.stopGraceMs ?? d.stopGraceMs),
    registry: registryConfig(env, file.registry ?? {}),
    log: {
      level: envEnum(env, 'AGENT_LOG_LEVEL', LOG_LEVELS) ?? file.log?.level ?? d.log.level,
      format:
        envEnum(env, 'AGENT_LOG_FORMAT', ['json', 'pretty'] as const) ?? file.log?.format ?? d.log.format,
      requests: envFlag(env, 'AGENT_LOG_REQUESTS') ?? file.log?.requests ?? d.log.requests,
    },
    metrics: metricsConfig(env, file.metrics ?? {}),
    limits: limitsConfig(env, file.limits ?? {}),
  };
  if (!new RegExp(STORE_PATTERN).test(config.runStore)) {
    // Not echoed: a mistyped connection string may still carry a password.
    throw new ValueError(
      'Invalid AGENT_STORE (AGENT_RUN_STORE, runStore): expected memory, sqlite:<path> or postgres://…',
    );
  }
  if (!isPostgresStore(config.runStore)) {
    for (const [field, variable] of POSTGRES_VARIABLES) {
      if (config.postgres[field] !== undefined)
        throw new ValueError(
          `${variable} (postgres.${field}) configures a PostgreSQL store; set AGENT_STORE=postgres://… to use one`,
        );
    }
  }
  if (config.runStore !== 'memory') {
    for (const [field, variable] of MEMORY_ONLY_LIMITS) {
      if (config.runStoreLimits[field] !== undefined)
        throw new ValueError(
          `${variable} (runStoreLimits.${field}) bounds the memory run store only; with ${storeKind(config.runStore)} set AGENT_RUN_STORE_RETENTION_MS instead`,
        );
    }
  }
  if (config.a2aPushAllowPrivate && !config.a2a)
    throw new ValueError(
      'AGENT_A2A_PUSH_ALLOW_PRIVATE (a2aPushAllowPrivate) configures A2A push notifications; set AGENT_A2A=1 (a2a) to serve A2A',
    );
  const { mode } = config.auth;
  if (mode === 'apikey' && config.auth.apiKeys.length === 0)
    throw new ValueError('AGENT_AUTH=apikey needs AGENT_API_KEYS');
  if (mode === 'bearer' && !config.auth.jwt.secret)
    throw new ValueError('AGENT_AUTH=bearer needs AGENT_JWT_SECRET');
  if (mode === 'basic' && Object.keys(config.auth.basicUsers).length === 0)
    throw new ValueError('AGENT_AUTH=basic needs AGENT_BASIC_USERS');
  if (mode === 'apikey') checkKeyPrincipals(config.auth.apiKeys);
  checkTenantOwners(config.auth);
  return config;
}

/** `1`/`true` or `0`/`false`, or undefined when the variable is unset or empty. */
function envFlag(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const raw = envEnum(env, name, ['1', 'true', '0', 'false'] as const);
  return raw === undefined ? undefined : raw === '1' || raw === 'true';
}

function isHttpUrl(raw: string): boolean {
  try {
    const { protocol } = new URL(raw);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The registry settings, each variable over its file field. A setting that only means something
 * with another one (a TTL without a registry served, a key without a registry to present it to) is
 * refused rather than silently ignored.
 */
function registryConfig(env: NodeJS.ProcessEnv, file: Partial<RegistryConfig>): RegistryConfig {
  const registry: RegistryConfig = {
    enabled: envFlag(env, 'AGENT_REGISTRY') ?? file.enabled ?? false,
    url: env.AGENT_REGISTRY_URL || file.url || null,
    apiKey: env.AGENT_REGISTRY_API_KEY || file.apiKey || null,
  };
  const ttlMs = envCount(env, 'AGENT_REGISTRY_TTL_MS') ?? file.ttlMs;
  if (ttlMs !== undefined) registry.ttlMs = ttlMs;
  const maxEntries = envCount(env, 'AGENT_REGISTRY_MAX_ENTRIES') ?? file.maxEntries;
  if (maxEntries !== undefined) registry.maxEntries = maxEntries;
  const heartbeatMs = envCount(env, 'AGENT_REGISTRY_HEARTBEAT_MS') ?? file.heartbeatMs;
  if (heartbeatMs !== undefined) {
    if (heartbeatMs > MAX_TIMER_MS)
      throw new ValueError(
        `Invalid AGENT_REGISTRY_HEARTBEAT_MS (registry.heartbeatMs): ${heartbeatMs} (expected at most ${MAX_TIMER_MS})`,
      );
    registry.heartbeatMs = heartbeatMs;
  }
  if (registry.url !== null && !isHttpUrl(registry.url))
    throw new ValueError(
      `Invalid AGENT_REGISTRY_URL (registry.url): ${registry.url} (expected the registry's http:// or https:// address)`,
    );
  if (!registry.enabled) {
    for (const [field, variable] of [
      ['ttlMs', 'AGENT_REGISTRY_TTL_MS'],
      ['maxEntries', 'AGENT_REGISTRY_MAX_ENTRIES'],
    ] as const) {
      if (registry[field] !== undefined)
        throw new ValueError(
          `${variable} (registry.${field}) configures the registry this server serves; set AGENT_REGISTRY=1 (registry.enabled) to serve one`,
        );
    }
  }
  if (registry.url === null) {
    // Named by variable only: the key is a secret.
    if (registry.apiKey !== null)
      throw new ValueError(
        'AGENT_REGISTRY_API_KEY (registry.apiKey) is presented to the registry named by AGENT_REGISTRY_URL (registry.url), which is not set',
      );
    if (registry.heartbeatMs !== undefined)
      throw new ValueError(
        'AGENT_REGISTRY_HEARTBEAT_MS (registry.heartbeatMs) paces the registrations with AGENT_REGISTRY_URL (registry.url), which is not set',
      );
  }
  return registry;
}

/** `AGENT_METRICS` and `AGENT_METRICS_TOKEN` over the file's `metrics`. */
function metricsConfig(env: NodeJS.ProcessEnv, file: Partial<MetricsConfig>): MetricsConfig {
  const metrics: MetricsConfig = {
    enabled: envFlag(env, 'AGENT_METRICS') ?? file.enabled ?? false,
    token: env.AGENT_METRICS_TOKEN || file.token || null,
  };
  // Named by variable only: the token is a secret.
  if (metrics.token !== null && !metrics.enabled)
    throw new ValueError(
      'AGENT_METRICS_TOKEN (metrics.token) guards GET /metrics, which is not served; set AGENT_METRICS=1 (metrics.enabled)',
    );
  return metrics;
}

/** A number above 0 (a rate may be fractional: 0.5 is one call every two seconds), or undefined when unset. */
function envRate(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(value > 0) || !Number.isFinite(value))
    throw new ValueError(`Invalid ${name}: ${raw} (expected a number above 0)`);
  return value;
}

/** The limits, each variable over its file field; a burst needs a rate. */
function limitsConfig(env: NodeJS.ProcessEnv, file: LimitsConfig): LimitsConfig {
  const limits: LimitsConfig = {};
  const maxConcurrentTasks =
    envCount(env, 'AGENT_MAX_CONCURRENT_TASKS') ??
    file.maxConcurrentTasks ??
    DEFAULT_CONFIG.limits.maxConcurrentTasks;
  if (maxConcurrentTasks !== undefined) limits.maxConcurrentTasks = maxConcurrentTasks;
  const perCaller =
    envCount(env, 'AGENT_MAX_CONCURRENT_TASKS_PER_CALLER') ?? file.maxConcurrentTasksPerCaller;
  if (perCaller !== undefined) limits.maxConcurrentTasksPerCaller = perCaller;
  const perSecond = envRate(env, 'AGENT_RATE_LIMIT_PER_SECOND') ?? file.rateLimit?.perSecond;
  const burst = envCount(env, 'AGENT_RATE_LIMIT_BURST') ?? file.rateLimit?.burst;
  if (perSecond === undefined) {
    if (burst !== undefined)
      throw new ValueError(
        'AGENT_RATE_LIMIT_BURST (limits.rateLimit.burst) needs AGENT_RATE_LIMIT_PER_SECOND (limits.rateLimit.perSecond)',
      );
  } else {
    limits.rateLimit = burst === undefined ? { perSecond } : { perSecond, burst };
  }
  return limits;
}

/** How a message names the store without its connection string (which may carry a password). */
function storeKind(spec: string): string {
  if (isPostgresStore(spec)) return 'a PostgreSQL store';
  return `AGENT_RUN_STORE=${spec}`;
}

/** True for a `postgres://` or `postgresql://` store. */
export function isPostgresStore(spec: string): boolean {
  return /^postgres(ql)?:\/\//.test(spec);
}

/** The PostgreSQL settings that are counts (the one flag is read on its own). */
const POSTGRES_COUNTS: [Exclude<keyof PostgresConfig, 'preparedStatements'>, string][] = [
  ['poolMax', 'AGENT_PG_POOL_MAX'],
  ['statementTimeoutMs', 'AGENT_PG_STATEMENT_TIMEOUT_MS'],
  ['leaseMs', 'AGENT_REPLICA_LEASE_MS'],
];
const PREPARED_STATEMENTS_VARIABLE = 'AGENT_PG_PREPARED_STATEMENTS';
const POSTGRES_VARIABLES: [keyof PostgresConfig, string][] = [
  ...POSTGRES_COUNTS,
  ['preparedStatements', PREPARED_STATEMENTS_VARIABLE],
];

function postgresConfig(env: NodeJS.ProcessEnv, file: PostgresConfig): PostgresConfig {
  const postgres: PostgresConfig = {};
  for (const [field, variable] of POSTGRES_COUNTS) {
    const value = envCount(env, variable) ?? file[field];
    if (value !== undefined) postgres[field] = value;
  }
  const prepared = envFlag(env, PREPARED_STATEMENTS_VARIABLE) ?? file.preparedStatements;
  if (prepared !== undefined) postgres.preparedStatements = prepared;
  return postgres;
}

const LIMIT_VARIABLES: [keyof RunStoreLimits, string][] = [
  ['maxTasks', 'AGENT_RUN_STORE_MAX_TASKS'],
  ['maxBytes', 'AGENT_RUN_STORE_MAX_BYTES'],
  ['taskRetentionMs', 'AGENT_RUN_STORE_RETENTION_MS'],
];
/** SQLite keeps what its file holds: it takes a retention, not a count or a size. */
const MEMORY_ONLY_LIMITS = LIMIT_VARIABLES.filter(([field]) => field !== 'taskRetentionMs');

/** The file's limits with each variable that is set over its field. */
function runStoreLimits(env: NodeJS.ProcessEnv, file: RunStoreLimits): RunStoreLimits {
  const limits: RunStoreLimits = {};
  for (const [field, variable] of LIMIT_VARIABLES) {
    const value = envCount(env, variable) ?? file[field];
    if (value !== undefined) limits[field] = value;
  }
  return limits;
}

/** How many leading characters of an API key name its principal (APIKeyAuth's `api-key-<first 8>`). */
const KEY_PRINCIPAL_LENGTH = 8;

/**
 * Tasks belong to their principal, and an API key's principal is named by its first characters: two
 * keys that share them would read, cancel and resubmit each other's tasks. Named by position: a key
 * is a secret.
 */
function checkKeyPrincipals(keys: readonly string[]): void {
  const seen = new Map<string, number>();
  keys.forEach((key, index) => {
    const principal = key.slice(0, KEY_PRINCIPAL_LENGTH);
    const earlier = seen.get(principal);
    if (earlier !== undefined)
      throw new ValueError(
        `Invalid AGENT_API_KEYS (auth.apiKeys): entries ${earlier + 1} and ${index + 1} share their first ` +
          `${KEY_PRINCIPAL_LENGTH} characters, which name a key's principal, so they would be one principal ` +
          `sharing its tasks; give each key its own first ${KEY_PRINCIPAL_LENGTH} characters`,
      );
    seen.set(principal, index);
  });
}

/** Every tenants entry must name a configured key or user: a typo would otherwise leave one unrestricted. */
function checkTenantOwners(auth: ServerConfig['auth']): void {
  const names = Object.keys(auth.tenants);
  if (names.length === 0) return;
  if (auth.mode === 'apikey') {
    const keys = new Set(auth.apiKeys);
    const stray = names.findIndex((key) => !keys.has(key));
    if (stray !== -1)
      throw new ValueError(
        `Invalid AGENT_TENANTS (auth.tenants): entry ${stray + 1} is not one of AGENT_API_KEYS`,
      );
  } else if (auth.mode === 'basic') {
    const stray = names.find((user) => !Object.prototype.hasOwnProperty.call(auth.basicUsers, user));
    if (stray !== undefined)
      throw new ValueError(
        `Invalid AGENT_TENANTS (auth.tenants): user ${JSON.stringify(stray)} is not one of AGENT_BASIC_USERS`,
      );
  } else {
    throw new ValueError(
      `AGENT_TENANTS (auth.tenants) needs AGENT_AUTH=apikey or basic (a bearer token carries a tenants claim)`,
    );
  }
}
