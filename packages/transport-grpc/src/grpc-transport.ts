import { LazyCredentials, type Authenticator } from '@agent/auth';
import {
  describeComponent,
  handlerFromFunction,
  MethodNotFoundError,
  parseTransportUrl,
  readTaskPayload,
  UnauthenticatedError,
  UnsupportedOperationError,
  ValueError,
  type ClientRequestSpec,
  type ComponentDescriptor,
  type SecurityContextLike,
  type SendOptions,
  type Task,
  type TaskEvent,
  type TaskFunction,
  type TaskHandler,
  type Transport,
} from '@agent/core';
import { Metadata } from '@grpc/grpc-js';
import { GrpcClientPool } from './client.js';
import { decodeInvokeResponse, encodeInvokeRequest, type InvokeOperation } from './codec.js';
import { headersToMetadata } from './metadata.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  type GRPCTransportOptions,
} from './options.js';
import { GrpcServer } from './server.js';

const UNARY_OPERATIONS: readonly string[] = [
  'send_task',
  'cancel_task',
  'get_card',
] satisfies InvokeOperation[];
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '0.0.0.0', '::']);

/**
 * gRPC transport (SPEC.md "Endpoints", DESIGN.md §3): `agent.v1.AgentService` with `Invoke` for
 * send_task / cancel_task / get_card and `Stream` for a task's events, credentials in lowercase
 * metadata, optional health and reflection services, `grpcs://` with TLS and mutual TLS.
 */
export class GRPCTransport implements Transport {
  readonly kind = 'grpc' as const;
  /** The configured URL; after `start()` the real one (with the bound port when 0 was configured). */
  url: string;
  /** The configured port; after `start()` the bound one. */
  port: number;
  readonly timeoutMs: number;
  private readonly options: GRPCTransportOptions;
  private readonly pool: GrpcClientPool;
  private lazy: LazyCredentials | undefined;
  private handler: TaskHandler | undefined;
  private server: GrpcServer | undefined;
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: GRPCTransportOptions) {
    const address = parseTransportUrl(options.url);
    if (address.scheme !== 'grpc' && address.scheme !== 'grpcs') {
      throw new ValueError(`GRPCTransport needs a grpc:// or grpcs:// URL, got ${options.url}`);
    }
    if (options.credentials !== undefined && !options.authenticator) {
      throw new ValueError('GRPCTransport credentials need an authenticator to turn them into metadata');
    }
    this.options = options;
    this.url = options.url;
    this.port = address.port;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs >= 0))
      throw new ValueError(`timeoutMs must be >= 0, got ${String(options.timeoutMs)}`);
    this.pool = new GrpcClientPool({
      tls: options.tls,
      maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    });
    if (options.authenticator && options.credentials !== undefined) {
      this.lazy = new LazyCredentials(options.authenticator, options.credentials);
    }
  }

  get authenticator(): Authenticator | undefined {
    return this.options.authenticator;
  }

  bind(handler: TaskHandler): void {
    this.handler = handler;
  }

  onTaskReceived(handler: TaskFunction): void {
    this.bind(handlerFromFunction(handler));
  }

  /** Serves the bound handler; resolves once the port is bound. Calling it again while serving is a no-op. */
  start(): Promise<void> {
    this.starting ??= this.listen().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  private async listen(): Promise<void> {
    if (!this.handler)
      throw new ValueError('GRPCTransport.start() needs a handler: call bind() or onTaskReceived() first');
    const address = parseTransportUrl(this.options.url);
    const server = new GrpcServer({
      address,
      handler: this.handler,
      authenticator: this.options.authenticator,
      tls: this.options.tls,
      health: this.options.health === true,
      reflection: this.options.reflection === true,
      maxMessageBytes: this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      shutdownTimeoutMs: this.options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
      strict: this.options.validateSchema === true,
    });
    this.port = await server.listen();
    this.server = server;
    const host = address.host.includes(':') ? `[${address.host}]` : address.host;
    this.url = `${address.scheme}://${host}:${this.port}`;
  }

  /**
   * Ends open streams with UNAVAILABLE, shuts the server down and closes client channels.
   * Idempotent: concurrent calls share one shutdown, later calls find nothing left to close.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const starting = this.starting;
      if (starting) await starting.catch(() => undefined);
      this.pool.close();
      const server = this.server;
      this.server = undefined;
      this.starting = undefined;
      if (server) await server.stop();
    })().finally(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    _params?: Record<string, string>,
    options: SendOptions = {},
  ): Promise<TResult> {
    if (spec.streaming) throw new UnsupportedOperationError(`${spec.name} is a stream: call subscribe()`);
    if (!UNARY_OPERATIONS.includes(spec.name))
      throw new MethodNotFoundError(`Unknown operation: ${spec.name}`);
    const operation = spec.name as InvokeOperation;
    // Checked here so a bad Task is a local ValidationError, not a half-encoded message.
    const payload = operation === 'send_task' ? readTaskPayload(data) : data;
    const request = encodeInvokeRequest(operation, payload);
    const response = await this.pool.invoke(baseUrl, request, {
      metadata: await this.outgoingMetadata(),
      timeoutMs: options.timeoutMs ?? this.timeoutMs,
      signal: options.signal,
    });
    return decodeInvokeResponse(response) as TResult;
  }

  /** Streams a task's events; `options.timeoutMs` sets a deadline for the whole stream (none by default). */
  async *subscribe(agentUrl: string, task: Task, options: SendOptions = {}): AsyncIterable<TaskEvent> {
    const request = encodeInvokeRequest('send_task', readTaskPayload(task));
    const metadata = await this.outgoingMetadata();
    yield* this.pool.stream(agentUrl, request, {
      metadata,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  }

  /** Authenticates now (instead of lazily on the first call) and uses the context for later calls. */
  async authenticate(credentials: string): Promise<SecurityContextLike> {
    const authenticator = this.options.authenticator;
    if (!authenticator) throw new ValueError('GRPCTransport.authenticate() needs an authenticator');
    const lazy = new LazyCredentials(authenticator, credentials);
    const context = await lazy.getContext().catch((error: unknown) => {
      throw clientAuthError(error, credentials);
    });
    this.lazy = lazy;
    return context;
  }

  /** True when the configured URL is a grpc(s) URL on this machine (a loopback or wildcard host). */
  validateUrl(): boolean {
    try {
      const address = parseTransportUrl(this.options.url);
      return (
        (address.scheme === 'grpc' || address.scheme === 'grpcs') &&
        LOCAL_HOSTS.has(address.host.toLowerCase())
      );
    } catch {
      return false;
    }
  }

  /** A recipe for the client side; the authenticator must itself be describable. */
  describe(): ComponentDescriptor {
    const { authenticator, credentials, tls, maxMessageBytes } = this.options;
    const options: Record<string, unknown> = { url: this.url, timeoutMs: this.timeoutMs };
    if (maxMessageBytes !== undefined) options.maxMessageBytes = maxMessageBytes;
    if (tls !== undefined) options.tls = tls;
    if (authenticator) {
      const describable = authenticator as Authenticator & { describe?: () => ComponentDescriptor };
      if (typeof describable.describe !== 'function') {
        throw new ValueError(
          `${authenticator.constructor.name} has no describe(), so this transport cannot be rebuilt`,
        );
      }
      options.authenticator = describable.describe();
      if (credentials !== undefined) options.credentials = credentials;
    }
    return describeComponent('@agent/transport-grpc', 'GRPCTransport', options);
  }

  private async outgoingMetadata(): Promise<Metadata> {
    const lazy = this.lazy;
    if (!lazy) return new Metadata();
    try {
      return headersToMetadata(await lazy.metadata());
    } catch (error) {
      throw clientAuthError(error, this.options.credentials);
    }
  }
}

/** The client could not authenticate its own credential; the message never repeats the credential. */
function clientAuthError(error: unknown, credentials: string | undefined): UnauthenticatedError {
  const text = error instanceof Error ? error.message : '';
  const safe =
    text !== '' && (credentials === undefined || credentials === '' || !text.includes(credentials));
  return new UnauthenticatedError(
    safe ? `Client authentication failed: ${text}` : 'Client authentication failed',
    { cause: error },
  );
}
