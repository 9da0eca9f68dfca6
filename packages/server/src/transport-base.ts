import {
  ValueError,
  type ConcurrencyLimit,
  handlerFromFunction,
  type ClientRequestSpec,
  type ComponentDescriptor,
  type SendOptions,
  type Task,
  type TaskEvent,
  type TaskFunction,
  type TaskHandler,
  type TlsOptions,
  type Transport,
  type TransportKind,
  type Logger,
} from '@agent/core';
import { describeComponent, parseTransportUrl, type TransportAddress } from '@agent/core/internal';
import type { Authenticator, ClientCredentials, SecurityContext } from '@agent/auth';
import { authenticateClient, clientCredentialsFrom, describeClientAuth } from './client-auth.js';
import { isLocalHost, isValidPort, withPort } from './local-url.js';
import { ServerPipeline, streamStallMsOption } from './pipeline.js';
import { concurrencyLimitOption, rateLimiterOption } from './limits.js';
import { type CallerTaskLimit, callerLimitOption } from './caller-limit.js';
import { PipelineMetrics } from './metrics/pipeline-metrics.js';
import type { RateLimiter } from './rate-limit.js';
import {
  checkOptionNames,
  lifecycleSettings,
  tenantHeaders,
  tenantOption,
  TRANSPORT_OPTION_NAMES,
  type TransportOptions,
} from './transport-options.js';

/** What a transport class tells the base about itself. */
export interface TransportDefinition {
  kind: TransportKind;
  /** Class name, for messages and `describe()`. */
  className: string;
  /** Package that exports the class, for `describe()`. */
  module: string;
  /** URL schemes it serves; the secure ones need `tls`. */
  schemes: readonly string[];
  /** Option names it accepts beyond the shared {@link TransportOptions}. */
  options: readonly string[];
}

type Lifecycle = 'idle' | 'starting' | 'started' | 'stopping';

/** What a transport's `listen` hands back: where it listens and how to let go of it. */
export interface Listening {
  /** The port listened on (the real one when 0 was configured). */
  readonly port: number;
  /** A stop began: called before in-flight calls drain (a health service turns NOT_SERVING here). */
  stopping?(): void;
  /** Releases the listener and every socket; the pipeline has drained already. */
  close(): Promise<void>;
}

/**
 * What every network transport facade shares, written once: option checks, the bind/start/stop
 * lifecycle with its two-phase stop, the server pipeline, client-side credentials, `validateUrl`
 * and `describe`. A transport adds its wire: `listen` (serve the pipeline; what it returns lets go
 * of the listener and its sockets once the pipeline has drained) and its client (`send`, `subscribe`).
 */
export abstract class TransportBase<
  TOptions extends TransportOptions = TransportOptions,
> implements Transport {
  readonly kind: TransportKind;
  readonly authenticator: Authenticator | undefined;
  readonly timeoutMs: number;
  readonly stopGraceMs: number;
  readonly maxBodyBytes: number;
  readonly validateSchema: boolean;
  /** Client side: the tenant every call names; `""` (the default tenant) when none was configured. */
  readonly tenant: string;
  /** The configured URL; after `start()` the real one (with the real port when 0 was configured). */
  url: string;
  /** The configured port; after `start()` the one listened on. */
  port: number;

  protected readonly options: TOptions;
  protected readonly address: TransportAddress;
  protected readonly tls: TlsOptions | undefined;
  protected readonly logger: Logger | undefined;
  protected credentials: ClientCredentials | undefined;
  private readonly logRequests: boolean;
  private readonly metrics: PipelineMetrics | undefined;
  // Built once here, so a transport stopped and started again keeps counting against the same limits.
  private readonly taskLimit: ConcurrencyLimit | undefined;
  private readonly rateLimiter: RateLimiter | undefined;
  private readonly callerLimit: CallerTaskLimit | undefined;
  private readonly streamStallMs: number;
  private readonly definition: TransportDefinition;
  private readonly configuredUrl: string;
  private handler: TaskHandler | undefined;
  private current: ServerPipeline | undefined;
  private listening: Listening | undefined;
  private lifecycle: Lifecycle = 'idle';
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  protected constructor(definition: TransportDefinition, options: TOptions) {
    const name = definition.className;
    if (!options || typeof options !== 'object') throw new ValueError(`${name} needs an options object`);
    checkOptionNames(name, options, [...TRANSPORT_OPTION_NAMES, ...definition.options]);
    if (typeof options.url !== 'string') throw new ValueError(`${name} needs a url`);
    this.address = parseTransportUrl(options.url);
    if (!definition.schemes.includes(this.address.scheme)) {
      throw new ValueError(`${name} needs a ${definition.schemes.join(' or ')} URL, got ${options.url}`);
    }
    if (options.tls && !this.address.secure && (options.tls.cert || options.tls.key)) {
      throw new ValueError(`tls.cert/tls.key are set but the URL scheme is ${this.address.scheme}`);
    }
    const credentials = clientCredentialsFrom(options);
    const settings = lifecycleSettings(options);
    const tenant = tenantOption(options.tenant);
    if (options.logRequests !== undefined && typeof options.logRequests !== 'boolean') {
      throw new ValueError(`${name} option logRequests must be true or false`, {
        data: { option: 'logRequests' },
      });
    }
    if (options.metrics !== undefined && !(options.metrics instanceof PipelineMetrics)) {
      throw new ValueError(`${name} option metrics must be a PipelineMetrics`, {
        data: { option: 'metrics' },
      });
    }
    this.logRequests = options.logRequests === true;
    this.metrics = options.metrics;
    this.taskLimit = concurrencyLimitOption(options.maxConcurrentTasks);
    this.rateLimiter = rateLimiterOption(options.rateLimit);
    this.callerLimit = callerLimitOption(options.maxConcurrentTasksPerCaller);
    this.streamStallMs = streamStallMsOption(options.streamStallMs);
    this.definition = definition;
    this.kind = definition.kind;
    this.options = options;
    this.timeoutMs = settings.timeoutMs;
    this.stopGraceMs = settings.stopGraceMs;
    this.maxBodyBytes = settings.maxBodyBytes;
    this.validateSchema = options.validateSchema === true;
    this.tenant = tenant;
    this.authenticator = options.authenticator;
    this.tls = options.tls;
    this.logger = options.logger;
    this.configuredUrl = options.url;
    this.url = options.url;
    this.port = this.address.port;
    this.credentials = credentials;
  }

  /** The pipeline while serving. */
  protected get pipeline(): ServerPipeline | undefined {
    return this.current;
  }

  bind(handler: TaskHandler): void {
    if (this.lifecycle !== 'idle') {
      throw new ValueError(`${this.definition.className}.bind() must come before start()`);
    }
    if (!handler || typeof handler.handleTask !== 'function') {
      throw new ValueError('bind() needs a TaskHandler');
    }
    this.handler = handler;
  }

  /** Serves a plain `(task) => task` function; its card is a minimal one naming this URL. */
  onTaskReceived(fn: TaskFunction): void {
    this.bind({
      ...handlerFromFunction(fn),
      getAgentCard: () => ({ name: 'agent', description: '', url: this.url }),
    });
  }

  start(): Promise<void> {
    if (this.lifecycle !== 'idle') {
      return Promise.reject(
        new ValueError(`${this.definition.className} cannot start while ${this.lifecycle}`),
      );
    }
    const handler = this.handler;
    if (!handler) {
      return Promise.reject(new ValueError('Call bind(handler) or onTaskReceived(fn) before start()'));
    }
    let tls: TlsOptions | undefined;
    try {
      tls = this.serverTls();
    } catch (error) {
      return Promise.reject(error);
    }
    const pipeline = new ServerPipeline({
      transport: this.kind,
      handler,
      authenticator: this.authenticator,
      validateSchema: this.validateSchema,
      logger: this.logger,
      logRequests: this.logRequests,
      metrics: this.metrics,
      maxConcurrentTasks: this.taskLimit,
      maxConcurrentTasksPerCaller: this.callerLimit,
      rateLimit: this.rateLimiter,
      streamStallMs: this.streamStallMs,
    });
    this.lifecycle = 'starting';
    this.current = pipeline;
    this.starting = this.listen(pipeline, tls).then(
      (listening) => {
        this.starting = undefined;
        this.listening = listening;
        this.port = listening.port;
        this.url = withPort(this.configuredUrl, listening.port);
        this.lifecycle = 'started';
        pipeline.markReady();
      },
      (error: unknown) => {
        this.starting = undefined;
        this.current = undefined;
        this.lifecycle = 'idle';
        throw error;
      },
    );
    return this.starting;
  }

  /**
   * Two phases, the same on every transport: readiness turns `stopping` and new calls are refused;
   * in-flight calls get `stopGraceMs` to finish, then their tasks are canceled with reason
   * `server shutting down`; then the listener and every socket close. Idempotent.
   */
  stop(): Promise<void> {
    this.closeClient();
    if (this.stopping) return this.stopping;
    if (this.starting) {
      // A stop during start waits for the listener, then stops it: never leaves a server behind.
      return this.starting.then(
        () => this.stop(),
        () => undefined,
      );
    }
    const pipeline = this.current;
    if (this.lifecycle !== 'started' || !pipeline) return Promise.resolve();
    this.lifecycle = 'stopping';
    const listening = this.listening;
    pipeline.beginStop();
    listening?.stopping?.();
    this.stopping = pipeline
      .drain(this.stopGraceMs)
      .then(() => listening?.close())
      .finally(() => {
        this.stopping = undefined;
        this.current = undefined;
        this.listening = undefined;
        this.lifecycle = 'idle';
      });
    return this.stopping;
  }

  /** Serves `pipeline` on this transport's address; resolves once it listens. */
  protected abstract listen(pipeline: ServerPipeline, tls: TlsOptions | undefined): Promise<Listening>;

  /** Client side: releases pooled connections. Called by every `stop()`. */
  protected closeClient(): void {}

  abstract send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options?: SendOptions,
  ): Promise<TResult>;

  abstract subscribe(agentUrl: string, task: Task, options?: SendOptions): AsyncIterable<TaskEvent>;

  /** Authenticates `credentials` now; later calls send what the resulting context builds. */
  async authenticate(credentials: string): Promise<SecurityContext> {
    const { store, context } = await authenticateClient(this.authenticator, this.credentials, credentials);
    this.credentials = store;
    return context;
  }

  /** Client side: the authorization headers to send, `{}` without credentials. */
  protected authHeaders(): Promise<Record<string, string>> {
    return this.credentials ? this.credentials.headers() : Promise.resolve({});
  }

  /**
   * Client side: what every call carries as headers (or gRPC metadata, as `metadata`): the
   * authorization ones and `x-tenant` for a tenant other than the default one.
   */
  protected async callHeaders(
    credentials: 'headers' | 'metadata' = 'headers',
  ): Promise<Record<string, string>> {
    const auth = this.credentials ? await this.credentials[credentials]() : {};
    return { ...auth, ...tenantHeaders(this.tenant) };
  }

  /**
   * True when the configured URL is one this machine can serve: one of the transport's schemes, a
   * local host (loopback, `*.localhost`, a wildcard, an interface address or the hostname) and a
   * valid port. With `url`, also true only when that URL points at this transport's own port.
   */
  validateUrl(url?: string): boolean {
    try {
      const own = parseTransportUrl(this.url);
      if (!this.definition.schemes.includes(own.scheme)) return false;
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
      validateSchema: this.validateSchema,
      ...this.describeOptions(),
    };
    if (this.tenant !== '') options.tenant = this.tenant;
    Object.assign(
      options,
      describeClientAuth({ tls: this.tls, credentials: this.credentials, authenticator: this.authenticator }),
    );
    return describeComponent(this.definition.module, this.definition.className, options);
  }

  /** Transport-specific options `describe()` carries (structured-clonable values only). */
  protected describeOptions(): Record<string, unknown> {
    return {};
  }

  private serverTls(): TlsOptions | undefined {
    if (!this.address.secure) return undefined;
    const tls = this.tls;
    if (!tls?.cert || !tls.key) {
      throw new ValueError(`Serving ${this.address.scheme} needs tls.cert and tls.key`);
    }
    if (tls.requestClientCert && !tls.ca) {
      throw new ValueError('tls.requestClientCert needs tls.ca to verify client certificates');
    }
    return tls;
  }
}
