import {
  CLIENT_OPERATIONS,
  UnauthenticatedError,
  UnsupportedOperationError,
  ValueError,
  describeComponent,
  finalStatusEvent,
  handlerFromFunction,
  parseTransportUrl,
  validateTask,
  type ClientRequestSpec,
  type ComponentDescriptor,
  type SendOptions,
  type Task,
  type TaskEvent,
  type TaskFunction,
  type TaskHandler,
  type TlsOptions,
  type Transport,
  type TransportAddress,
  numberOption,
} from '@agent/core';
import { LazyCredentials, type Authenticator, type SecurityContext } from '@agent/auth';
import type { BackendFactory, BackendOptions, HttpBackend } from './backend.js';
import { buildEndpoints, type ServerState } from './endpoints.js';
import { ExpressBackend } from './express-backend.js';
import { HttpClient } from './http-client.js';
import { NodeBackend } from './node-backend.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_STOP_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  type BackendName,
  type HTTPTransportOptions,
} from './options.js';
import { isLocalHost, isValidPort } from './validate-url.js';

const BACKENDS: Record<BackendName, BackendFactory> = {
  node: (options) => new NodeBackend(options),
  express: (options) => new ExpressBackend(options),
};

/**
 * HTTP/HTTPS transport. Server side: serves a bound TaskHandler on `POST /tasks/`,
 * `POST /tasks/cancel`, `GET /.well-known/agent.json`, `/healthz` and `/readyz` through a pluggable
 * backend. Client side: `send()` over axios with lazy authentication.
 */
export class HTTPTransport implements Transport {
  readonly kind = 'http' as const;
  readonly authenticator: Authenticator | undefined;
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
  readonly maxResponseBytes: number;
  readonly stopTimeoutMs: number;
  readonly validateSchema: boolean;
  /** The configured URL; after `start()` the real one (with the real port when 0 was configured). */
  url: string;
  /** The configured port; after `start()` the one listened on. */
  port: number;

  private readonly address: TransportAddress;
  private readonly tls: TlsOptions | undefined;
  private readonly backendFactory: BackendFactory;
  private readonly backendName: BackendName | undefined;
  private readonly configuredUrl: string;
  private readonly credentials: string | undefined;
  private readonly client: HttpClient;
  private lazy: LazyCredentials | undefined;
  private handler: TaskHandler | undefined;
  private backend: HttpBackend | undefined;
  private serverState: ServerState = 'starting';
  private lifecycle: 'idle' | 'starting' | 'started' | 'stopping' = 'idle';
  private stopping: Promise<void> | undefined;
  private starting: Promise<void> | undefined;

  constructor(options: HTTPTransportOptions) {
    if (!options || typeof options.url !== 'string') throw new ValueError('HTTPTransport needs a url');
    this.address = parseTransportUrl(options.url);
    if (this.address.scheme !== 'http' && this.address.scheme !== 'https') {
      throw new ValueError(`HTTPTransport needs an http or https URL, got ${options.url}`);
    }
    if (options.tls && !this.address.secure) throw new ValueError('tls is set but the URL is not https');
    this.timeoutMs = numberOption('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS, DEFAULT_TIMEOUT_MS);
    this.maxBodyBytes = numberOption(
      'maxBodyBytes',
      options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      DEFAULT_MAX_BODY_BYTES,
    );
    this.maxResponseBytes = numberOption(
      'maxResponseBytes',
      options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      DEFAULT_MAX_RESPONSE_BYTES,
    );
    this.stopTimeoutMs = numberOption(
      'stopTimeoutMs',
      options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS,
      DEFAULT_STOP_TIMEOUT_MS,
    );
    this.validateSchema = options.validateSchema === true;
    const backend = options.backend ?? 'node';
    if (typeof backend === 'function') {
      this.backendFactory = backend;
    } else if (Object.prototype.hasOwnProperty.call(BACKENDS, backend)) {
      this.backendFactory = BACKENDS[backend];
      this.backendName = backend;
    } else {
      throw new ValueError(`Unknown HTTP backend "${String(backend)}" (expected node, express or a factory)`);
    }
    if (options.credentials !== undefined && !options.authenticator) {
      throw new ValueError('credentials need an authenticator, which builds the outgoing headers');
    }
    this.authenticator = options.authenticator;
    this.credentials = options.credentials;
    this.tls = options.tls;
    this.configuredUrl = options.url;
    this.url = options.url;
    this.port = this.address.port;
    if (options.authenticator && options.credentials !== undefined) {
      this.lazy = new LazyCredentials(options.authenticator, options.credentials);
    }
    this.client = new HttpClient({
      timeoutMs: this.timeoutMs,
      maxResponseBytes: this.maxResponseBytes,
      tls: options.tls,
      headers: () => this.buildHeaders(),
      onUnauthenticated: () => this.lazy?.reset(),
    });
  }

  bind(handler: TaskHandler): void {
    this.handler = handler;
  }

  /** Serves a plain `(task) => task` function; its card is a minimal one naming this URL. */
  onTaskReceived(fn: TaskFunction): void {
    this.handler = {
      ...handlerFromFunction(fn),
      getAgentCard: () => ({ name: 'agent', description: '', url: this.url }),
    };
  }

  start(): Promise<void> {
    if (this.lifecycle !== 'idle') {
      return Promise.reject(new ValueError(`HTTPTransport cannot start while ${this.lifecycle}`));
    }
    const handler = this.handler;
    if (!handler)
      return Promise.reject(new ValueError('Call bind(handler) or onTaskReceived(fn) before start()'));
    let tls: TlsOptions | undefined;
    try {
      tls = this.serverTls();
    } catch (error) {
      return Promise.reject(error);
    }
    this.lifecycle = 'starting';
    this.serverState = 'starting';
    const backendOptions: BackendOptions = {
      maxBodyBytes: this.maxBodyBytes,
      stopTimeoutMs: this.stopTimeoutMs,
    };
    if (tls) backendOptions.tls = tls;
    const backend = this.backendFactory(backendOptions);
    backend.setupRoutes(
      buildEndpoints({
        handler,
        ...(this.authenticator ? { authenticator: this.authenticator } : {}),
        validateSchema: this.validateSchema,
        basePath: this.address.basePath,
        state: () => this.serverState,
      }),
    );
    this.starting = backend.start(this.address.host, this.address.port).then(
      (port) => {
        this.starting = undefined;
        this.backend = backend;
        this.port = port;
        this.url = withPort(this.configuredUrl, port);
        this.lifecycle = 'started';
        this.serverState = 'ready';
      },
      (error: unknown) => {
        this.starting = undefined;
        this.lifecycle = 'idle';
        throw error;
      },
    );
    return this.starting;
  }

  /** Readiness turns 503 `stopping`, in-flight requests drain, every socket closes; safe to repeat. */
  stop(): Promise<void> {
    this.client.close();
    if (this.stopping) return this.stopping;
    if (this.starting) {
      // A stop during start waits for the listener, then stops it: never leaves a server behind.
      const afterStart = this.starting.then(
        () => undefined,
        () => undefined,
      );
      return afterStart.then(() => this.stop());
    }
    const backend = this.backend;
    if (!backend) return Promise.resolve();
    this.lifecycle = 'stopping';
    this.serverState = 'stopping';
    this.stopping = backend.stop().finally(() => {
      this.backend = undefined;
      this.stopping = undefined;
      this.lifecycle = 'idle';
      this.serverState = 'starting';
    });
    return this.stopping;
  }

  send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options?: SendOptions,
  ): Promise<TResult> {
    if (spec.streaming) {
      return Promise.reject(
        new UnsupportedOperationError(
          `HTTPTransport has no streaming route for ${spec.name}; use subscribe() or SSETransport`,
        ),
      );
    }
    return this.client.request<TResult>(spec, baseUrl, data, params, options);
  }

  /**
   * HTTP has no streaming route: the task is sent with `POST /tasks/` and the stream is its single
   * final `task.status` event, which carries the finished Task.
   */
  async *subscribe(agentUrl: string, task: Task, options?: SendOptions): AsyncIterable<TaskEvent> {
    const result = await this.send<unknown>(CLIENT_OPERATIONS.send_task, agentUrl, task, undefined, options);
    yield finalStatusEvent(validateTask(result));
  }

  /** Authenticates `credentials` now; later calls send the headers built from the resulting context. */
  async authenticate(credentials: string): Promise<SecurityContext> {
    if (!this.authenticator) throw new ValueError('authenticate() needs an authenticator');
    const lazy = new LazyCredentials(this.authenticator, credentials);
    const context = await clientAuth(lazy, credentials);
    this.lazy = lazy;
    return context;
  }

  /** The outgoing headers: the authorization headers once credentials were authenticated. */
  async buildHeaders(): Promise<Record<string, string>> {
    const lazy = this.lazy;
    if (!lazy) return {};
    const context = await clientAuth(lazy, this.credentials ?? '');
    if (isExpired(context)) {
      // An expired context is not reused: authenticate again (SPEC leaves refresh to the caller).
      lazy.reset();
      await clientAuth(lazy, this.credentials ?? '');
    }
    return lazy.headers();
  }

  /**
   * True when the configured URL is one this machine can serve: http(s), a local host (loopback,
   * wildcard, an interface address or the hostname) and a valid port. With `url`, also true only
   * when that URL points at this transport's own port.
   */
  validateUrl(url?: string): boolean {
    try {
      const own = parseTransportUrl(this.url);
      if (own.scheme !== 'http' && own.scheme !== 'https') return false;
      if (!isLocalHost(own.host) || !isValidPort(own.port)) return false;
      if (url === undefined) return true;
      const other = parseTransportUrl(url);
      return other.scheme === own.scheme && isLocalHost(other.host) && other.port === this.port;
    } catch {
      return false;
    }
  }

  /** A recipe that rebuilds this transport's client side in a worker thread (`client.sync`). */
  describe(): ComponentDescriptor {
    const options: Record<string, unknown> = {
      url: this.url,
      timeoutMs: this.timeoutMs,
      maxBodyBytes: this.maxBodyBytes,
      maxResponseBytes: this.maxResponseBytes,
      validateSchema: this.validateSchema,
    };
    if (this.backendName) options.backend = this.backendName;
    if (this.tls) options.tls = pemStrings(this.tls);
    if (this.credentials !== undefined) options.credentials = this.credentials;
    if (this.authenticator) {
      const describable = this.authenticator as Authenticator & { describe?: () => ComponentDescriptor };
      if (typeof describable.describe !== 'function') {
        throw new UnsupportedOperationError(
          `${this.authenticator.constructor.name} has no describe(), so this transport cannot be rebuilt in a worker`,
        );
      }
      options.authenticator = describable.describe();
    }
    return describeComponent('@agent/transport-http', 'HTTPTransport', options);
  }

  private serverTls(): TlsOptions | undefined {
    if (!this.address.secure) return undefined;
    const tls = this.tls;
    if (!tls?.cert || !tls.key) throw new ValueError('Serving https needs tls.cert and tls.key');
    if (tls.requestClientCert && !tls.ca)
      throw new ValueError('tls.requestClientCert needs tls.ca to verify client certificates');
    return tls;
  }
}

function withPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.port = String(port);
  const text = parsed.toString();
  // Keep the configured form: `new URL` adds a trailing slash to a bare origin.
  return url.endsWith('/') || parsed.pathname !== '/' ? text : text.replace(/\/$/, '');
}

async function clientAuth(lazy: LazyCredentials, credentials: string): Promise<SecurityContext> {
  try {
    return await lazy.getContext();
  } catch (error) {
    const message =
      error instanceof Error && error.message && (credentials === '' || !error.message.includes(credentials))
        ? error.message
        : 'rejected';
    throw new UnauthenticatedError(`Client authentication failed: ${message}`, { cause: error });
  }
}

function isExpired(context: SecurityContext): boolean {
  try {
    return context.isExpired();
  } catch {
    return false;
  }
}

/** Buffers do not survive `structuredClone` as Buffers; PEM text does. */
function pemStrings(tls: TlsOptions): TlsOptions {
  const text = (value: string | Buffer): string =>
    typeof value === 'string' ? value : value.toString('utf8');
  const result: TlsOptions = { ...tls };
  if (tls.cert !== undefined) result.cert = text(tls.cert);
  if (tls.key !== undefined) result.key = text(tls.key);
  if (tls.ca !== undefined) result.ca = Array.isArray(tls.ca) ? tls.ca.map(text) : text(tls.ca);
  return result;
}
