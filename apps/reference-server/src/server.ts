/**
 * Assembles the reference server: one demo agent bound to every transport, so a task started on one
 * transport can be canceled from another.
 */
import {
  ConcurrencyLimit,
  type ApprovalDecisionData,
  type ApprovalRequestData,
  type Logger,
  type Transport,
} from '@agent/core';
import { A2AServer } from '@agent/a2a';
import { APIKeyAuth, BasicAuth, BearerTokenAuth, type Authenticator } from '@agent/auth';
import { Registry } from '@agent/registry';
import {
  CallerTaskLimit,
  PipelineMetrics,
  RateLimiter,
  TASKS_LIMIT_NAME,
  type TransportOptions,
} from '@agent/server';
import type { Agent, AgentRegistryOptions } from '@agent/runtime';
import { approvalRoutes, HTTPTransport } from '@agent/transport-http';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import { GRPCTransport } from '@agent/transport-grpc';
import type { RegistryConfig, ServerConfig } from './config.js';
import { createDemoAgent } from './demo-agent.js';
import { createDemoHandler } from './demo-handler.js';
import type { LostReplica } from '@agent/store-postgres';
import { openStores } from './stores.js';
import { createServerLogger } from './logging.js';
import { metricsRoutes } from './metrics-route.js';
import { tckScenarioOf } from './tck-scenarios.js';

export { createApprovalStore, createRegistryStore, createRunStore } from './stores.js';

export interface ReferenceServerUrls {
  http: string;
  sse: string;
  ws: string;
  grpc: string;
}

export interface ReferenceServer {
  readonly agent: Agent;
  readonly authenticator: Authenticator | undefined;
  readonly urls: ReferenceServerUrls;
  /** The registry the HTTP transport serves (`registry.enabled`), or undefined. */
  readonly registry: Registry | undefined;
  /** The A2A bindings the HTTP transport serves (`a2a`), or undefined. */
  readonly a2a: A2AServer | undefined;
  /** Every transport's metrics (`GET /metrics` serves them with `metrics.enabled`), or undefined. */
  readonly metrics: PipelineMetrics | undefined;
  /**
   * Stops every transport (in-flight tasks get `stopGraceMs` to finish, then are canceled with reason
   * `server shutting down`), then deregisters the demo agent from the registry it joined
   * (`registry.url`), then ends A2A push deliveries still retrying and closes the registry and the
   * stores. Idempotent.
   */
  stop(): Promise<void>;
  /**
   * Resolves if this replica finds its own lease gone (a PostgreSQL store): the other replicas
   * have finished its tasks `failed` (REPLICA_LOST), so it must stop. Never resolves otherwise.
   */
  readonly lost: Promise<void>;
}

export function createAuthenticator(config: ServerConfig): Authenticator | undefined {
  const { auth } = config;
  switch (auth.mode) {
    case 'none':
      return undefined;
    case 'apikey':
      return new APIKeyAuth({
        validKeys: Object.fromEntries(auth.apiKeys.map((key) => [key, []])),
        ...tenantsOption(auth.tenants),
      });
    case 'bearer':
      return new BearerTokenAuth({
        secret: auth.jwt.secret,
        algorithm: auth.jwt.algorithm,
        issuer: auth.jwt.issuer,
        audience: auth.jwt.audience,
        leewaySeconds: auth.jwt.leewaySeconds,
      });
    case 'basic':
      return new BasicAuth({ validCredentials: auth.basicUsers, ...tenantsOption(auth.tenants) });
  }
}

/** The authenticators' `tenants` option, left out when nothing is restricted. */
function tenantsOption(tenants: Record<string, string[]>): { tenants?: Record<string, string[]> } {
  return Object.keys(tenants).length === 0 ? {} : { tenants };
}

/**
 * The Agent's `registry` option for `registry.url`. The key is presented as it is: the client-side
 * APIKeyAuth knows that one key, so it sends it and the registry decides.
 */
function registryMembership(config: RegistryConfig): AgentRegistryOptions | undefined {
  if (config.url === null) return undefined;
  const options: AgentRegistryOptions = { url: config.url };
  if (config.apiKey !== null) {
    options.authenticator = new APIKeyAuth({ validKeys: { [config.apiKey]: [] } });
    options.credentials = config.apiKey;
  }
  if (config.heartbeatMs !== undefined) options.heartbeatMs = config.heartbeatMs;
  return options;
}

function approvalHandler(mode: ServerConfig['approvals']) {
  if (mode === 'none' || mode === 'store') return undefined;
  return async (request: ApprovalRequestData): Promise<ApprovalDecisionData> => ({
    request_id: request.request_id,
    approved: mode === 'approve',
    decided_by: 'reference-server',
  });
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export interface StartOptions {
  /** Told about each lost replica whose tasks this replica finished (PostgreSQL), for the log. */
  onLostReplica?: (lost: LostReplica) => void;
  /** Told how many tasks the previous process left running were finished at start (a SQLite file). */
  onInterrupted?: (count: number) => void;
  /** Where the transports log. Default: stderr, in `config.log`'s level and format. */
  logger?: Logger;
}

/**
 * What every transport shares: one logger, one metrics registry, and one task limit, per-caller
 * share and rate limiter, so the limits hold for the server as a whole, whichever wire a call
 * arrives on.
 */
function operationsOptions(
  config: ServerConfig,
  logger: Logger,
  metrics: PipelineMetrics | undefined,
): Pick<
  TransportOptions,
  'logger' | 'logRequests' | 'metrics' | 'maxConcurrentTasks' | 'maxConcurrentTasksPerCaller' | 'rateLimit'
> {
  const { maxConcurrentTasks, rateLimit } = config.limits;
  const maxConcurrentTasksPerCaller =
    config.limits.maxConcurrentTasksPerCaller ??
    (maxConcurrentTasks === undefined ? undefined : Math.ceil(maxConcurrentTasks / 2));
  return {
    logger,
    logRequests: config.log.requests,
    ...(metrics ? { metrics } : {}),
    ...(maxConcurrentTasks === undefined
      ? {}
      : { maxConcurrentTasks: new ConcurrencyLimit(maxConcurrentTasks, { name: TASKS_LIMIT_NAME }) }),
    ...(maxConcurrentTasksPerCaller === undefined
      ? {}
      : { maxConcurrentTasksPerCaller: new CallerTaskLimit(maxConcurrentTasksPerCaller) }),
    ...(rateLimit === undefined ? {} : { rateLimit: new RateLimiter(rateLimit) }),
  };
}

export async function startReferenceServer(
  config: ServerConfig,
  options: StartOptions = {},
): Promise<ReferenceServer> {
  const authenticator = createAuthenticator(config);
  const stores = await openStores({
    spec: config.runStore,
    limits: config.runStoreLimits,
    postgres: config.postgres,
    registry: config.registry.enabled,
    approvals: config.approvals === 'store',
    onLostReplica: (lost) => options.onLostReplica?.(lost),
    onInterrupted: (count) => options.onInterrupted?.(count),
  });
  const { runStore, registryStore, approvalStore } = stores;
  let registry: Registry | undefined;
  try {
    if (registryStore) {
      registry = new Registry({
        store: registryStore,
        ...(config.registry.ttlMs === undefined ? {} : { ttlMs: config.registry.ttlMs }),
        ...(config.registry.maxEntries === undefined ? {} : { maxEntries: config.registry.maxEntries }),
      });
    }
  } catch (error) {
    await stores.close();
    throw error;
  }
  // Beside the native routes, over the same pipeline: an A2A call and a native one see the same
  // tasks, owners and tenants.
  const a2a = config.a2a
    ? new A2AServer({
        push: { allowPrivateNetworks: config.a2aPushAllowPrivate },
        // The TCK's message-only scenario expects a Message, not a Task, as the answer.
        replyAsMessage: (task) => tckScenarioOf(task) === 'tck-message-response',
      })
    : undefined;
  const metrics = config.metrics.enabled ? new PipelineMetrics() : undefined;
  const routes = [
    ...(metrics ? [metricsRoutes(metrics, config.metrics.token)] : []),
    ...(registry ? [registry] : []),
    ...(a2a ? [a2a] : []),
    ...(approvalStore ? [approvalRoutes(approvalStore)] : []),
  ];
  const closeStores = async (): Promise<void> => {
    // Push deliveries still retrying end here, after the transports: no task feeds them any more.
    await a2a?.close();
    await registry?.close();
    // After the transports: a run still parked was canceled by their stop and withdrew its request.
    await stores.close();
  };
  const host = hostForUrl(config.host);
  const { stopGraceMs } = config;
  const logger = options.logger ?? createServerLogger(config.log);
  const shared = { authenticator, stopGraceMs, ...operationsOptions(config, logger, metrics) };
  const http = new HTTPTransport({
    url: `http://${host}:${config.ports.http}`,
    backend: config.httpBackend,
    ...shared,
    ...(routes.length > 0 ? { routes } : {}),
  });
  const sse = new SSETransport({ url: `http://${host}:${config.ports.sse}`, ...shared });
  const ws = new WebSocketTransport({ url: `ws://${host}:${config.ports.ws}`, ...shared });
  const grpc = new GRPCTransport({
    url: `grpc://${host}:${config.ports.grpc}`,
    health: true,
    reflection: true,
    ...shared,
  });
  const membership = registryMembership(config.registry);
  const agent = createDemoAgent({
    runStore,
    authenticator,
    logger,
    approvalHandler: approvalHandler(config.approvals),
    // GenAI metrics of model calls (token usage, duration) go to the same GET /metrics; the demo
    // commands make none, an agent built like this one with an llm does.
    ...(metrics ? { genAiMetrics: metrics } : {}),
    ...(approvalStore ? { approvalStore } : {}),
    ...(membership ? { registry: membership } : {}),
  });
  const transports: Transport[] = [http, sse, ws, grpc];
  const handler = createDemoHandler(agent);
  for (const transport of transports) transport.bind(handler);

  const started: Transport[] = [];
  try {
    for (const transport of transports) {
      await transport.start();
      started.push(transport);
    }
    agent.updateCard({ url: http.url });
    // The agent has no transport of its own (the server binds four): its start() only registers
    // the card, now that it names the real HTTP address. A registry that refuses or cannot be
    // reached fails the start rather than leaving an agent nobody can discover.
    if (membership) await agent.start();
  } catch (error) {
    await Promise.allSettled(started.map((t) => t.stop()));
    await closeStores();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    agent,
    authenticator,
    urls: { http: http.url, sse: sse.url, ws: ws.url, grpc: grpc.url },
    registry,
    a2a,
    metrics,
    lost: stores.lost,
    stop() {
      // Leave the registry first, so nobody discovers a server that is draining; then each transport
      // stops in two phases: readiness turns `stopping` and new calls are refused, in-flight tasks
      // get `stopGraceMs` to finish, then are canceled with `server shutting down`. The agent's own
      // stop() comes last: it would cancel in-flight tasks at once (`agent stopping`), which the
      // grace is there to prevent; by then nothing is left for it to do but release what it holds
      // and wait for the run reports still being written, before the stores close under them.
      stopping ??= (async () => {
        if (membership) await agent.leaveRegistry();
        await Promise.allSettled(transports.map((t) => t.stop()));
        await agent.stop();
        await closeStores();
      })();
      return stopping;
    },
  };
}
