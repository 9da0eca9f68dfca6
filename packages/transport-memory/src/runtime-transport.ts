import {
  AgentError,
  combineSignals,
  NotFoundError,
  UnauthenticatedError,
  UnavailableError,
  UnsupportedOperationError,
  ValueError,
  dispatchOperation,
  handlerFromFunction,
  type AgentCard,
  type CallContext,
  type ClientRequestSpec,
  type SendOptions,
  type Task,
  type TaskEvent,
  type TaskFunction,
  type TaskHandler,
  type Transport,
} from '@agent/core';
import { LazyCredentials, authenticateRequest, type Authenticator, type SecurityContext } from '@agent/auth';
import { addressKey, checkAgentName, runtimeUrl } from './agent-address.js';
import { abortError, raceSignal } from './signals.js';

export interface RuntimeTransportOptions {
  /**
   * Checked on every call exactly as a network server checks a request: the caller's headers
   * (built from `credentials`) go through `authenticateRequest`. Default none: calls are not checked.
   */
  authenticator?: Authenticator | null;
  /** Raw client credential; the first call authenticates it lazily and sends the resulting headers. */
  credentials?: string;
  /** Default deadline of one `send`, in milliseconds. Default none (in-process calls wait). */
  timeoutMs?: number;
}

/** A TaskHandler that may carry its own name, as `Agent` does (`agent.card.name`, `agent.name`). */
export type RegistrableAgent = TaskHandler & { readonly card?: AgentCard; readonly name?: string };

export interface RegisterAgentOptions {
  /** Default: `agent.card?.name ?? agent.name`. */
  name?: string;
  /** A second address for the agent, e.g. the HTTP URL it is known by. Default `runtime://<name>`. */
  url?: string;
}

/** One registered agent and the two addresses it answers to. */
export interface RegisteredAgent {
  name: string;
  url: string;
  agent: RegistrableAgent;
}

/** The name `bind()` registers its handler under when the handler has none of its own. */
export const DEFAULT_AGENT_NAME = 'default';

/**
 * In-process transport (SPEC.md "RuntimeTransport"): several agents per transport, addressed by
 * name or by URL (`runtime://<name>`). Calls pass objects without serialization but take the same
 * path as the network transports: the authenticator, then `dispatchOperation` on the TaskHandler.
 */
export class RuntimeTransport implements Transport {
  readonly kind = 'memory' as const;
  private readonly authenticator: Authenticator | undefined;
  private lazy: LazyCredentials | undefined;
  /** Kept only so an error message that quotes the credential can be replaced. */
  private credentials: string | undefined;
  private readonly timeoutMs: number | undefined;
  private readonly byAddress = new Map<string, RegisteredAgent>();
  private readonly entries = new Set<RegisteredAgent>();
  private defaultEntry: RegisteredAgent | undefined;
  /** Aborted by `stop()`, so handlers see the server going away as on a network transport. */
  private lifecycle = new AbortController();

  constructor(options: RuntimeTransportOptions = {}) {
    this.authenticator = options.authenticator ?? undefined;
    if (options.timeoutMs !== undefined && !(Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) {
      throw new ValueError(
        `timeoutMs must be a positive number of milliseconds, got ${String(options.timeoutMs)}`,
      );
    }
    this.timeoutMs = options.timeoutMs;
    if (options.credentials !== undefined) {
      if (!this.authenticator)
        throw new ValueError('credentials need an authenticator to turn them into headers');
      this.lazy = new LazyCredentials(this.authenticator, options.credentials);
      this.credentials = options.credentials;
    }
  }

  /** No I/O to start. */
  async start(): Promise<void> {}

  /** Clears every registered agent and aborts the signal of calls still running. Idempotent. */
  async stop(): Promise<void> {
    this.byAddress.clear();
    this.entries.clear();
    this.defaultEntry = undefined;
    this.lifecycle.abort(new UnavailableError('RuntimeTransport stopped'));
    this.lifecycle = new AbortController();
  }

  /**
   * Registers the agent under its name and its URL; returns the URL. Registering the same agent
   * again is a no-op; another agent under a taken name or URL is a ValueError.
   */
  registerAgent(agent: RegistrableAgent, options: RegisterAgentOptions = {}): string {
    if (!isTaskHandler(agent))
      throw new ValueError(
        'registerAgent needs a TaskHandler (handleTask, handleTaskStreaming, cancelTask, getAgentCard)',
      );
    const name = checkAgentName(options.name ?? agent.card?.name ?? agent.name);
    const url = addressKey(options.url ?? runtimeUrl(name));
    if (url === '') throw new ValueError('Agent url must not be empty');
    for (const address of new Set([name, url, runtimeUrl(name)])) {
      const taken = this.byAddress.get(address);
      if (taken && taken.agent !== agent)
        throw new ValueError(`Address "${address}" is already registered to agent "${taken.name}"`);
    }
    const existing = this.byAddress.get(name);
    if (existing) this.remove(existing);
    const entry: RegisteredAgent = { name, url, agent };
    this.entries.add(entry);
    for (const address of [name, url, runtimeUrl(name)]) this.byAddress.set(address, entry);
    return url;
  }

  /** Removes the agent known by this name or URL; false when none was. */
  unregisterAgent(agentId: string): boolean {
    const entry = this.byAddress.get(addressKey(agentId));
    if (!entry) return false;
    this.remove(entry);
    return true;
  }

  /** The agent registered under this name or URL, or undefined. */
  getAgent(agentId: string): RegistrableAgent | undefined {
    return this.lookup(agentId)?.agent;
  }

  /** Every identifier an agent is registered under: its name, then its URL, in registration order. */
  listAgents(): string[] {
    return [...this.entries].flatMap((entry) =>
      entry.url === entry.name ? [entry.name] : [entry.name, entry.url],
    );
  }

  /**
   * Registers the server-side handler as the default agent: it answers an empty address and
   * `runtime://`, besides its own name (`card.name`, else `default`).
   */
  bind(handler: TaskHandler): void {
    const agent = handler as RegistrableAgent;
    const name = agent.card?.name ?? agent.name ?? DEFAULT_AGENT_NAME;
    this.registerAgent(agent, { name });
    this.defaultEntry = this.byAddress.get(checkAgentName(name));
  }

  onTaskReceived(handler: TaskFunction): void {
    this.bind(
      handlerFromFunction(handler, {
        card: { name: DEFAULT_AGENT_NAME, description: '', url: runtimeUrl(DEFAULT_AGENT_NAME) },
      }),
    );
  }

  /** Routes a client operation (`send_task`, `cancel_task`, `get_card`) to the agent at `baseUrl`. */
  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options: SendOptions = {},
  ): Promise<TResult> {
    if (spec.streaming) throw new UnsupportedOperationError(`${spec.name} streams: use subscribe()`);
    const entry = this.resolve(baseUrl);
    // The lifecycle signal is always there, so the combination is never undefined.
    const signal = combineSignals(
      [options.signal, this.lifecycle.signal],
      options.timeoutMs ?? this.timeoutMs,
    )!;
    const work = (async () => {
      const ctx = await this.callContext(signal, params, spec.path);
      const result = await dispatchOperation(entry.agent, spec.name, data, ctx);
      return (spec.name === 'get_card' ? this.withSecuritySchemes(result as AgentCard) : result) as TResult;
    })();
    return raceSignal(work, signal);
  }

  /** Runs the task on the agent at `agentUrl`, yielding its `handleTaskStreaming` events. */
  async *subscribe(agentUrl: string, task: Task, options: SendOptions = {}): AsyncIterable<TaskEvent> {
    const entry = this.resolve(agentUrl);
    const signal = combineSignals([options.signal, this.lifecycle.signal], options.timeoutMs)!;
    const ctx = await raceSignal(this.callContext(signal, undefined, '/tasks/stream'), signal);
    const iterator = entry.agent.handleTaskStreaming(task, ctx)[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await raceSignal(iterator.next(), signal);
        if (next.done) return;
        yield next.value;
      }
    } catch (error) {
      throw signal.aborted ? abortError(signal) : AgentError.from(error);
    } finally {
      // Detached, as on the wire: a consumer that leaves does not wait for the producer to wind down.
      void iterator.return?.()?.catch?.(() => undefined);
    }
  }

  /** Authenticates the credential now and uses the context for every later call. */
  async authenticate(credentials: string): Promise<SecurityContext> {
    if (!this.authenticator)
      throw new ValueError('RuntimeTransport has no authenticator to authenticate with');
    const lazy = new LazyCredentials(this.authenticator, credentials);
    const context = await clientAuth(lazy, credentials);
    this.lazy = lazy;
    this.credentials = credentials;
    return context;
  }

  /** Always true: in-process addresses have no host or port to check. */
  validateUrl(): boolean {
    return true;
  }

  // No describe(): the agents live in this thread's memory, so a worker thread cannot rebuild them.

  private async callContext(
    signal: AbortSignal,
    params: Record<string, string> | undefined,
    path: string,
  ): Promise<CallContext> {
    const headers: Record<string, string> = {};
    if (this.lazy) {
      const built = await clientAuthHeaders(this.lazy, this.credentials);
      for (const [name, value] of Object.entries(built)) headers[name.toLowerCase()] = value;
    }
    const security = await authenticateRequest({
      authenticator: this.authenticator,
      headers,
      query: params,
      path,
    });
    const ctx: CallContext = { signal, headers, transport: 'memory' };
    if (security) ctx.security = security;
    return ctx;
  }

  /** Mirrors the network card route: with an authenticator the card advertises its scheme. */
  private withSecuritySchemes(card: AgentCard): AgentCard {
    if (!this.authenticator || card.securitySchemes) return card;
    const scheme = this.authenticator.securityScheme;
    return { ...card, securitySchemes: { [scheme.authType]: scheme.toDict() } };
  }

  private lookup(address: string): RegisteredAgent | undefined {
    const key = addressKey(address);
    if (key === '' || key === 'runtime:/' || key === 'runtime:') return this.defaultEntry;
    return this.byAddress.get(key);
  }

  private resolve(address: string): RegisteredAgent {
    if (typeof address !== 'string') throw new ValueError('Agent address must be a string');
    const entry = this.lookup(address);
    if (!entry)
      throw new NotFoundError(`No agent registered at "${address}"`, {
        data: { address, known: this.listAgents() },
      });
    return entry;
  }

  private remove(entry: RegisteredAgent): void {
    this.entries.delete(entry);
    for (const [address, value] of this.byAddress) if (value === entry) this.byAddress.delete(address);
    if (this.defaultEntry === entry) this.defaultEntry = undefined;
  }
}

function isTaskHandler(value: unknown): value is TaskHandler {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return ['handleTask', 'handleTaskStreaming', 'cancelTask', 'getAgentCard'].every(
    (key) => typeof candidate[key] === 'function',
  );
}

/** Client-side lazy auth failing is a 401 on the wire too: the caller gets the same typed error. */
async function clientAuth(lazy: LazyCredentials, credentials: string | undefined): Promise<SecurityContext> {
  try {
    return await lazy.getContext();
  } catch (error) {
    throw asUnauthenticated(error, credentials);
  }
}

async function clientAuthHeaders(
  lazy: LazyCredentials,
  credentials: string | undefined,
): Promise<Record<string, string>> {
  try {
    return await lazy.headers();
  } catch (error) {
    throw asUnauthenticated(error, credentials);
  }
}

function asUnauthenticated(error: unknown, credentials: string | undefined): AgentError {
  if (error instanceof AgentError) return error;
  const message = error instanceof Error ? error.message : '';
  const safe = message && !(credentials && message.includes(credentials)) ? message : 'Invalid credentials';
  return new UnauthenticatedError(safe, { cause: error });
}
