import {
  UnsupportedOperationError,
  type ConcurrencyLimit,
  ValueError,
  handlerFromFunction,
  type ClientRequestSpec,
  type Logger,
  type SendOptions,
  type SubscribeTaskOptions,
  type Task,
  type TaskEvent,
  type TaskFunction,
  type TaskHandler,
  type Transport,
} from '@agent/core';
import type { Authenticator, ClientCredentials, SecurityContext } from '@agent/auth';
import {
  PipelineMetrics,
  ServerPipeline,
  authenticateClient,
  concurrencyLimitOption,
  rateLimiterOption,
  type RateLimiter,
  checkOptionNames,
  clientCredentialsFrom,
  lifecycleSettings,
  tenantHeaders,
  tenantOption,
  type EventFeed,
  type ServerCall,
} from '@agent/server';
import { RUNTIME_SCHEME, runtimeUrl } from './agent-address.js';
import {
  AgentRegistry,
  type RegisterAgentOptions,
  type RegistrableAgent,
  type RegistryEntry,
} from './agent-registry.js';
import { CallerScope } from './client.js';
import { RUNTIME_OPTION_NAMES, type RuntimeTransportOptions } from './options.js';
import { serveFeed, serveUnary } from './server-adapter.js';

/** The name `bind()` registers its handler under when the handler has none of its own. */
export const DEFAULT_AGENT_NAME = 'default';

type Lifecycle = 'idle' | 'started' | 'stopping';

/**
 * In-process transport: several agents per transport, addressed by name or by `runtime://<name>`.
 * Calls pass objects without serialization but go through each agent's `ServerPipeline` from
 * `@agent/server` — the same authentication, validation, error policy, stream rule and two-phase stop
 * as the network transports. `client()` gives a view of the same agents with its own credentials.
 */
export class RuntimeTransport implements Transport {
  readonly kind = 'memory' as const;
  /** Server side: checks every call to the agents this transport registers. Client side: builds what is sent. */
  readonly authenticator: Authenticator | undefined;
  /** Deadline of each `send` in ms; 0 = none. */
  readonly timeoutMs: number;
  readonly stopGraceMs: number;
  readonly validateSchema: boolean;
  /** The tenant every call names; `""` (the default tenant) when none was configured. */
  readonly tenant: string;
  private readonly logger: Logger | undefined;
  private readonly logRequests: boolean;
  private readonly metrics: PipelineMetrics | undefined;
  // Built once, so every agent of this transport (and a restart) counts against the same limits.
  private readonly taskLimit: ConcurrencyLimit | undefined;
  private readonly rateLimiter: RateLimiter | undefined;
  private credentials: ClientCredentials | undefined;
  private registry = new AgentRegistry();
  private lifecycle: Lifecycle = 'idle';
  private stopping: Promise<void> | undefined;

  constructor(options: RuntimeTransportOptions = {}) {
    if (!options || typeof options !== 'object')
      throw new ValueError('RuntimeTransport needs an options object');
    checkOptionNames('RuntimeTransport', options, RUNTIME_OPTION_NAMES);
    this.credentials = clientCredentialsFrom(options);
    const settings = lifecycleSettings(options);
    this.tenant = tenantOption(options.tenant);
    this.authenticator = options.authenticator;
    this.timeoutMs = settings.timeoutMs;
    this.stopGraceMs = settings.stopGraceMs;
    this.validateSchema = options.validateSchema === true;
    this.logger = options.logger;
    if (options.logRequests !== undefined && typeof options.logRequests !== 'boolean') {
      throw new ValueError('RuntimeTransport option logRequests must be true or false', {
        data: { option: 'logRequests' },
      });
    }
    if (options.metrics !== undefined && !(options.metrics instanceof PipelineMetrics)) {
      throw new ValueError('RuntimeTransport option metrics must be a PipelineMetrics', {
        data: { option: 'metrics' },
      });
    }
    this.logRequests = options.logRequests === true;
    this.metrics = options.metrics;
    // One limit for every agent this transport serves (or one shared with other transports).
    this.taskLimit = concurrencyLimitOption(options.maxConcurrentTasks);
    this.rateLimiter = rateLimiterOption(options.rateLimit);
  }

  /** The default agent's address (`runtime://<name>`), or `runtime://` while there is none. */
  get url(): string {
    const entry = this.registry.default;
    return entry ? runtimeUrl(entry.name) : RUNTIME_SCHEME;
  }

  /**
   * A client of the same agents with options of its own — typically other `credentials` or another
   * `tenant` (the authenticator defaults to this transport's; the tenant does not carry over). The agents stay served by the transport that
   * registered them: its authenticator checks the view's calls, its `stop()` drains them.
   */
  client(options: RuntimeTransportOptions = {}): RuntimeTransport {
    const view = new RuntimeTransport({ authenticator: this.authenticator, ...options });
    view.registry = this.registry;
    return view;
  }

  /**
   * Registers the agent under its name and its URL; returns the URL. It answers at once (before
   * `start()` too). Registering the same agent again keeps it; another agent under a taken name or
   * URL is a ValueError.
   */
  registerAgent(agent: RegistrableAgent, options: RegisterAgentOptions = {}): string {
    if (this.lifecycle === 'stopping')
      throw new ValueError('RuntimeTransport cannot register while stopping');
    return this.register(agent, options).url;
  }

  /** Removes the agent known by this name or URL; false when none was. */
  unregisterAgent(agentId: string): boolean {
    return this.registry.remove(agentId);
  }

  /** The agent registered under this name or URL, or undefined. */
  getAgent(agentId: string): RegistrableAgent | undefined {
    return this.registry.lookup(agentId)?.agent;
  }

  /** Every identifier an agent is registered under: its name, then its URL, in registration order. */
  listAgents(): string[] {
    return this.registry.list();
  }

  /**
   * Registers the server-side handler as the default agent: it answers an empty address and
   * `runtime://`, besides its own name (`card.name`, else `default`). Replaces an earlier `bind()`.
   */
  bind(handler: TaskHandler): void {
    if (this.lifecycle !== 'idle') throw new ValueError('RuntimeTransport.bind() must come before start()');
    const previous = this.registry.default;
    if (previous?.owner === this && previous.agent !== handler) this.registry.remove(previous.name);
    const agent = handler as RegistrableAgent;
    const name = agent.card?.name ?? agent.name ?? DEFAULT_AGENT_NAME;
    this.registry.setDefault(this.register(agent, { name }));
  }

  /** `bind()` of a plain function, under the name `default`. */
  onTaskReceived(fn: TaskFunction): void {
    this.bind(
      handlerFromFunction(fn, {
        card: { name: DEFAULT_AGENT_NAME, description: '', url: runtimeUrl(DEFAULT_AGENT_NAME) },
      }),
    );
  }

  /** Marks the agents this transport registered as serving; rejects when it registered none. */
  start(): Promise<void> {
    if (this.lifecycle !== 'idle') {
      return Promise.reject(new ValueError(`RuntimeTransport cannot start while ${this.lifecycle}`));
    }
    const served = this.registry.ownedBy(this);
    if (served.length === 0) {
      return Promise.reject(
        new ValueError('Call bind(handler), onTaskReceived(fn) or registerAgent() before start()'),
      );
    }
    for (const entry of served) {
      // A pipeline that went through a stop stays closed: a restart serves through a new one.
      if (entry.pipeline.state === 'stopping') entry.pipeline = this.pipelineFor(entry.agent);
      entry.pipeline.markReady();
    }
    this.lifecycle = 'started';
    return Promise.resolve();
  }

  /**
   * Two phases, as on every transport: new calls to this transport's agents get UNAVAILABLE; calls
   * in flight get `stopGraceMs`, then their tasks are canceled with reason `server shutting down`.
   * The agents stay registered (calls keep getting UNAVAILABLE until `start()`). Idempotent.
   */
  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (this.lifecycle !== 'started') return Promise.resolve();
    this.lifecycle = 'stopping';
    const pipelines = this.registry.ownedBy(this).map((entry) => entry.pipeline);
    for (const pipeline of pipelines) pipeline.beginStop();
    this.stopping = Promise.all(pipelines.map((pipeline) => pipeline.drain(this.stopGraceMs)))
      .then(() => undefined)
      .finally(() => {
        this.stopping = undefined;
        this.lifecycle = 'idle';
      });
    return this.stopping;
  }

  /** Runs a client operation (`send_task`, `cancel_task`, `get_card`) on the agent at `baseUrl`. */
  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options: SendOptions = {},
  ): Promise<TResult> {
    if (spec.streaming) throw new UnsupportedOperationError(`${spec.name} streams: use subscribe()`);
    const entry = this.registry.resolve(baseUrl);
    const scope = new CallerScope(options.signal, options.timeoutMs ?? this.timeoutMs);
    try {
      const request = scope.request(await scope.race(this.outgoingHeaders()), params, options);
      return (await scope.race(serveUnary(entry.pipeline, request, spec.name, data))) as TResult;
    } finally {
      scope.end();
    }
  }

  /**
   * Runs the task on the agent at `agentUrl`, yielding its events up to exactly one final status.
   * `options.timeoutMs` sets a deadline for the whole stream (none by default).
   */
  subscribe(agentUrl: string, task: Task, options: SendOptions = {}): AsyncIterable<TaskEvent> {
    return this.follow(agentUrl, options, (pipeline, call) => pipeline.stream(call, task));
  }

  /**
   * One of the caller's tasks' events after `options.after`, then live ones, up to its final status.
   * `options.timeoutMs` sets a deadline for the whole subscription (none by default).
   */
  subscribeTask(
    agentUrl: string,
    taskId: string,
    options: SubscribeTaskOptions = {},
  ): AsyncIterable<TaskEvent> {
    const payload = { task_id: taskId, after: options.after ?? 0 };
    return this.follow(agentUrl, options, (pipeline, call) => pipeline.subscribe(call, payload));
  }

  private async *follow(
    agentUrl: string,
    options: SendOptions,
    open: (pipeline: ServerPipeline, call: ServerCall) => EventFeed,
  ): AsyncIterable<TaskEvent> {
    const entry = this.registry.resolve(agentUrl);
    const scope = new CallerScope(options.signal, options.timeoutMs);
    let events: EventFeed;
    try {
      events = await this.openFeed(entry.pipeline, scope, options, (call) => open(entry.pipeline, call));
    } catch (error) {
      scope.end();
      throw error;
    }
    let ended = false;
    const read = (): Promise<IteratorResult<TaskEvent>> => {
      const step = scope.race(events.next());
      step.catch(() => undefined); // a read the caller never collects (it left) must not be unhandled
      return step;
    };
    try {
      // One event read ahead, as a socket buffer would: the handler runs on between the caller's reads.
      let ahead = read();
      for (;;) {
        const next = await ahead;
        if (next.done) {
          ended = true;
          return;
        }
        ahead = read();
        yield next.value;
      }
    } finally {
      if (!ended) {
        scope.leave();
        void events.return();
      }
      scope.end();
    }
  }

  /** Authenticates `credentials` now; later calls send what the resulting context builds. */
  async authenticate(credentials: string): Promise<SecurityContext> {
    const { store, context } = await authenticateClient(this.authenticator, this.credentials, credentials);
    this.credentials = store;
    return context;
  }

  /** Always true: in-process addresses have no host or port to check. */
  validateUrl(): boolean {
    return true;
  }

  // No describe(): the agents live in this thread's memory, so a worker thread cannot rebuild them.

  /** Opens a feed on the agent's pipeline within the call's scope (its signal and deadline). */
  private async openFeed(
    pipeline: ServerPipeline,
    scope: CallerScope,
    options: SendOptions,
    open: (call: ServerCall) => EventFeed,
  ): Promise<EventFeed> {
    const request = scope.request(await scope.race(this.outgoingHeaders()), undefined, options);
    const opening = serveFeed(pipeline, request, open);
    try {
      return await scope.race(opening);
    } catch (error) {
      // The call was aborted while it opened: a stream that opens later is closed unread.
      void opening.then(
        (late) => late.return(),
        () => undefined,
      );
      throw error;
    }
  }

  private register(agent: RegistrableAgent, options: RegisterAgentOptions): RegistryEntry {
    const entry = this.registry.add(agent, options, this, () => this.pipelineFor(agent));
    if (this.lifecycle === 'started' && entry.owner === this) entry.pipeline.markReady();
    return entry;
  }

  private pipelineFor(handler: TaskHandler): ServerPipeline {
    return new ServerPipeline({
      transport: 'memory',
      handler,
      authenticator: this.authenticator,
      validateSchema: this.validateSchema,
      logger: this.logger,
      logRequests: this.logRequests,
      metrics: this.metrics,
      maxConcurrentTasks: this.taskLimit,
      rateLimit: this.rateLimiter,
    });
  }

  /**
   * What a network client would send as headers, names lowercase: what the caller's credentials build
   * (a refusal is a scrubbed UnauthenticatedError) and `x-tenant` for a tenant other than the default.
   */
  private async outgoingHeaders(): Promise<Record<string, string>> {
    const headers: Record<string, string> = {};
    if (this.credentials) {
      for (const [name, value] of Object.entries(await this.credentials.headers())) {
        headers[name.toLowerCase()] = value;
      }
    }
    return { ...headers, ...tenantHeaders(this.tenant) };
  }
}
