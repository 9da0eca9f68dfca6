import http from 'node:http';
import https from 'node:https';
import { networkInterfaces } from 'node:os';
import { LazyCredentials, type Authenticator, type SecurityContext } from '@agent/auth';
import {
  describeComponent,
  handlerFromFunction,
  parseTransportUrl,
  UnauthenticatedError,
  UnsupportedOperationError,
  ValueError,
  isRecord,
  type ClientRequestSpec,
  type ComponentDescriptor,
  type Describable,
  type SendOptions,
  type Task,
  type TaskEvent,
  type TaskFunction,
  type TaskHandler,
  type TlsOptions,
  type Transport,
  type TransportAddress,
} from '@agent/core';
import { OPERATION_METHODS, STREAM_METHOD } from './json-rpc.js';
import { resolveOptions, type ResolvedOptions, type SSETransportOptions } from './options.js';
import { callRpc, streamEvents } from './sse-client.js';
import { SSEServer } from './sse-server.js';

/** Free keep-alive sockets close before the server's default 5 s keep-alive timeout would reset them. */
const CLIENT_IDLE_SOCKET_MS = 4_000;

/**
 * SSE JSON-RPC transport (DESIGN.md §3): JSON-RPC 2.0 unary calls on `POST /rpc` and task event
 * streams on `POST /tasks/stream` answered as `text/event-stream`. The server side serves a bound
 * TaskHandler; the client side (`send`, `subscribe`) talks to any SSE JSON-RPC server.
 */
export class SSETransport implements Transport, Describable {
  readonly kind = 'sse' as const;
  /** The server URL; after `start()` it carries the real port. */
  url: string;
  /** The bound port after `start()`; the configured one before. */
  port: number;

  private readonly settings: ResolvedOptions;
  private readonly address: TransportAddress;
  private readonly authenticator: Authenticator | undefined;
  private readonly credentials: string | undefined;
  private readonly tls: TlsOptions | undefined;
  private lazyAuth: LazyCredentials | undefined;
  private handler: TaskHandler | undefined;
  private server: SSEServer | undefined;
  private httpAgent: http.Agent | undefined;
  private httpsAgent: https.Agent | undefined;
  private nextRequestId = 1;

  constructor(options: SSETransportOptions) {
    this.settings = resolveOptions(options);
    this.address = parseTransportUrl(options.url);
    if (this.address.scheme !== 'http' && this.address.scheme !== 'https') {
      throw new ValueError(`SSETransport needs an http or https URL, got ${options.url}`);
    }
    this.url = options.url.replace(/\/+$/, '');
    this.port = this.address.port;
    this.authenticator = options.authenticator ?? undefined;
    this.credentials = options.credentials;
    this.tls = options.tls;
    if (this.authenticator && this.credentials !== undefined) {
      this.lazyAuth = new LazyCredentials(this.authenticator, this.credentials);
    }
  }

  bind(handler: TaskHandler): void {
    if (this.server) throw new ValueError('bind() must be called before start()');
    this.handler = handler;
  }

  /** Serves a plain `(task) => task` function (the spec's `on_task_received`). */
  onTaskReceived(fn: TaskFunction): void {
    this.bind(handlerFromFunction(fn));
  }

  async start(): Promise<void> {
    if (this.server) throw new ValueError('SSETransport is already started');
    if (!this.handler) throw new ValueError('Bind a TaskHandler (bind or onTaskReceived) before start()');
    const server = new SSEServer({
      address: this.address,
      handler: this.handler,
      authenticator: this.authenticator ?? null,
      heartbeatMs: this.settings.heartbeatMs,
      maxBodyBytes: this.settings.maxBodyBytes,
      cancelOnDisconnect: this.settings.cancelOnDisconnect,
      stopGraceMs: this.settings.stopGraceMs,
      ...(this.tls ? { tls: this.tls } : {}),
    });
    this.server = server;
    this.port = await server.listen();
    const host = this.address.host.includes(':') ? `[${this.address.host}]` : this.address.host;
    this.url = `${this.address.scheme}://${host}:${this.port}${this.address.basePath}`;
  }

  /** Idempotent: ends open streams (an UNAVAILABLE error frame), closes the listener and the client's sockets. */
  async stop(): Promise<void> {
    this.httpAgent?.destroy();
    this.httpsAgent?.destroy();
    this.httpAgent = undefined;
    this.httpsAgent = undefined;
    await this.server?.close();
  }

  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options: SendOptions = {},
  ): Promise<TResult> {
    if (spec.streaming || spec.name === 'stream_task') {
      throw new UnsupportedOperationError(`${spec.name} is a streaming operation: use subscribe()`);
    }
    const method = Object.prototype.hasOwnProperty.call(OPERATION_METHODS, spec.name)
      ? OPERATION_METHODS[spec.name]
      : undefined;
    if (method === undefined) {
      throw new UnsupportedOperationError(`The SSE JSON-RPC transport has no operation named ${spec.name}`);
    }
    const result = await callRpc({
      baseUrl,
      route: '/rpc',
      id: this.nextRequestId++,
      method,
      params: rpcParams(spec.name, data),
      headers: () => this.authHeaders(),
      agent: this.agentFor(baseUrl),
      timeoutMs: options.timeoutMs ?? this.settings.timeoutMs,
      maxResponseBytes: this.settings.maxResponseBytes,
      ...(params ? { query: params } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return result as TResult;
  }

  /** Streams a task's events from `POST /tasks/stream`; the last one is the final `task.status`. */
  subscribe(agentUrl: string, task: Task, options: SendOptions = {}): AsyncGenerator<TaskEvent> {
    return streamEvents({
      baseUrl: agentUrl,
      route: '/tasks/stream',
      id: this.nextRequestId++,
      method: STREAM_METHOD,
      params: { task },
      headers: () => this.authHeaders(),
      agent: this.agentFor(agentUrl),
      timeoutMs: options.timeoutMs ?? this.settings.timeoutMs,
      maxResponseBytes: this.settings.maxResponseBytes,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** Authenticates now and uses the context for every later call's headers. */
  async authenticate(credentials: string): Promise<SecurityContext> {
    if (!this.authenticator) throw new ValueError('authenticate() needs an authenticator');
    const lazy = new LazyCredentials(this.authenticator, credentials);
    const context = await lazy.getContext();
    this.lazyAuth = lazy;
    return context;
  }

  /** True when the URL's host is this machine (loopback or a local interface) and its port is valid. */
  validateUrl(): boolean {
    const { host, port } = this.address;
    if (!Number.isInteger(port) || port < 0 || port > 65535) return false;
    const local = new Set(['localhost', '127.0.0.1', '::1', '0.0.0.0', '::']);
    for (const entries of Object.values(networkInterfaces())) {
      for (const entry of entries ?? []) local.add(entry.address);
    }
    return local.has(host.toLowerCase());
  }

  /** The recipe `client.sync` uses to rebuild this transport's client side in a worker thread. */
  describe(): ComponentDescriptor {
    const options: Record<string, unknown> = {
      url: this.url,
      timeoutMs: this.settings.timeoutMs,
      maxResponseBytes: this.settings.maxResponseBytes,
    };
    if (this.tls) options.tls = this.tls;
    if (this.authenticator) {
      const describeAuth = (this.authenticator as Partial<Describable>).describe;
      if (typeof describeAuth !== 'function') {
        throw new ValueError(
          `${this.authenticator.constructor.name} has no describe(): this transport cannot be rebuilt`,
        );
      }
      options.authenticator = describeAuth.call(this.authenticator);
      if (this.credentials !== undefined) options.credentials = this.credentials;
    }
    return describeComponent('@agent/transport-sse', 'SSETransport', options);
  }

  private async authHeaders(): Promise<Record<string, string>> {
    if (!this.lazyAuth) return {};
    try {
      return await this.lazyAuth.headers();
    } catch (error) {
      if (error instanceof UnauthenticatedError) throw error;
      const reason = error instanceof Error && error.message ? error.message : 'authentication failed';
      throw new UnauthenticatedError(`Client-side authentication failed: ${reason}`, { cause: error });
    }
  }

  private agentFor(baseUrl: string): http.Agent {
    if (baseUrl.startsWith('https:')) {
      const tls = this.tls ?? {};
      this.httpsAgent ??= new https.Agent({
        keepAlive: true,
        timeout: CLIENT_IDLE_SOCKET_MS,
        ...(tls.ca === undefined ? {} : { ca: tls.ca }),
        ...(tls.cert === undefined ? {} : { cert: tls.cert }),
        ...(tls.key === undefined ? {} : { key: tls.key }),
        ...(tls.servername === undefined ? {} : { servername: tls.servername }),
        rejectUnauthorized: tls.rejectUnauthorized ?? true,
      });
      return this.httpsAgent;
    }
    this.httpAgent ??= new http.Agent({ keepAlive: true, timeout: CLIENT_IDLE_SOCKET_MS });
    return this.httpAgent;
  }
}

/** JSON-RPC params of each unary operation (DESIGN.md §3). */
function rpcParams(operation: string, data: unknown): unknown {
  if (operation === 'send_task')
    return isRecord(data) && isRecord(data.task) && !('id' in data) ? data : { task: data };
  if (operation === 'get_card') return {};
  if (operation === 'cancel_task' && typeof data === 'string') return { task_id: data };
  return data ?? {};
}
