import { LazyCredentials, type Authenticator, type SecurityContext } from '@agent/auth';
import {
  AgentError,
  CLIENT_OPERATIONS,
  describeComponent,
  handlerFromFunction,
  InternalError,
  MethodNotFoundError,
  parseCancelRequest,
  parseTransportUrl,
  readTaskPayload,
  UnauthenticatedError,
  UnsupportedOperationError,
  ValueError,
  type AgentCard,
  type ClientRequestSpec,
  type ComponentDescriptor,
  type Describable,
  type Message,
  type SendOptions,
  type Task,
  type TaskEvent,
  type TaskFunction,
  type TaskHandler,
  type TlsOptions,
  type Transport,
  type TransportAddress,
} from '@agent/core';
import { ClientConnection } from './client-connection.js';
import type { ConnectionKind, ResultFrame } from './frames.js';
import { resolveOptions, type ResolvedOptions, type WebSocketTransportOptions } from './options.js';
import { createPartialResultMapper } from './partial-results.js';
import { socketUrlFor } from './socket-url.js';
import { WsServer } from './ws-server.js';

export interface SendTaskStreamOptions {
  /** Agent to call; defaults to this transport's `url`. */
  baseUrl?: string;
  signal?: AbortSignal;
}

/**
 * WebSocket transport (DESIGN.md §3). Server side: an HTTP(S) listener that authenticates the upgrade
 * handshake and serves `/ws` (tasks, streams) and `/ws/control` (cancellation). Client side: one lazily
 * opened data socket and one control socket per agent base URL, many calls in flight on each.
 */
export class WebSocketTransport implements Transport, Describable {
  readonly kind = 'ws' as const;
  /** The configured URL; after `start()` the real one (real port when the configured port was 0). */
  url: string;
  port: number;

  private readonly options: ResolvedOptions;
  private readonly address: TransportAddress;
  private readonly authenticator: Authenticator | null;
  private readonly credentials: string | undefined;
  private readonly tls: TlsOptions | undefined;
  private lazy: LazyCredentials | undefined;
  private handler: TaskHandler | undefined;
  private server: WsServer | undefined;
  private stopping: Promise<void> | undefined;
  private readonly connections = new Map<string, Promise<ClientConnection>>();

  constructor(options: WebSocketTransportOptions) {
    this.options = resolveOptions(options);
    this.address = parseTransportUrl(options.url);
    if (!['ws', 'wss'].includes(this.address.scheme)) {
      throw new ValueError(`WebSocketTransport needs a ws:// or wss:// url, got ${options.url}`);
    }
    this.url = options.url;
    this.port = this.address.port;
    this.authenticator = options.authenticator ?? null;
    this.credentials = options.credentials;
    this.tls = options.tls;
    if (this.authenticator && this.credentials !== undefined)
      this.lazy = new LazyCredentials(this.authenticator, this.credentials);
  }

  bind(handler: TaskHandler): void {
    if (this.server) throw new ValueError('bind() must be called before start()');
    this.handler = handler;
  }

  onTaskReceived(handler: TaskFunction): void {
    this.bind(handlerFromFunction(handler));
  }

  /** Starts serving the bound handler. Without a bound handler the transport is client-only and this does nothing. */
  async start(): Promise<void> {
    if (this.server || !this.handler) return;
    this.stopping = undefined;
    const server = new WsServer({
      ...this.options,
      host: this.address.host,
      port: this.address.port,
      basePath: this.address.basePath,
      secure: this.address.secure,
      handler: this.handler,
      authenticator: this.authenticator,
      ...(this.tls ? { tls: this.tls } : {}),
    });
    const address = await server.listen();
    this.server = server;
    this.port = address.port;
    const host = this.address.host.includes(':') ? `[${this.address.host}]` : this.address.host;
    this.url = `${this.address.scheme}://${host}:${address.port}${this.address.basePath}`;
  }

  /** Stops the server (see README "Shutdown") and closes every client socket. Safe to call repeatedly. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    const server = this.server;
    const clients = [...this.connections.values()];
    this.connections.clear();
    await Promise.all([
      server?.close(),
      ...clients.map((pending) => pending.then((connection) => connection.close()).catch(() => undefined)),
    ]);
    this.server = undefined;
  }

  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    _params?: Record<string, string>,
    options: SendOptions = {},
  ): Promise<TResult> {
    const callOptions = {
      timeoutMs: options.timeoutMs ?? this.options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    };
    switch (operationOf(spec)) {
      case 'send_task': {
        const task = readTaskPayload(data);
        const result = await this.call(
          baseUrl,
          'data',
          { op: 'task.send', task, stream: false },
          callOptions,
        );
        return requireTask(result) as TResult;
      }
      case 'cancel_task': {
        const { taskId, reason } = parseCancelRequest(data);
        const frame = {
          op: 'task.cancel' as const,
          task_id: taskId,
          ...(reason === undefined ? {} : { reason }),
        };
        return requireTask(await this.call(baseUrl, 'control', frame, callOptions)) as TResult;
      }
      case 'get_card': {
        const result = await this.call(baseUrl, 'data', { op: 'agent.card' }, callOptions);
        if (!result.card) throw new InternalError('The agent.card result carries no card');
        return result.card as AgentCard as TResult;
      }
      case 'stream_task':
        throw new UnsupportedOperationError('Streaming operations go through subscribe()');
      default:
        throw new MethodNotFoundError(`Unknown operation: ${spec.name}`);
    }
  }

  /**
   * Streams a task's events; the last one is the final `task.status`. There is no deadline unless
   * `options.timeoutMs` is given. Leaving the loop early stops the call on the server (no task cancel).
   */
  async *subscribe(agentUrl: string, task: Task, options: SendOptions = {}): AsyncGenerator<TaskEvent> {
    const checked = readTaskPayload(task);
    const connection = await this.connection(agentUrl, 'data');
    const highWater = this.options.maxQueuedEvents;
    const queue: TaskEvent[] = [];
    let finished = false;
    let failure: unknown;
    let wake: (() => void) | undefined;
    const call = connection.call(
      { op: 'task.send', task: checked, stream: true },
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        onEvent: (event) => {
          queue.push(event);
          if (queue.length >= highWater) connection.pause(call.id);
          wake?.();
        },
      },
    );
    call.result.then(
      () => {
        finished = true;
        wake?.();
      },
      (error: unknown) => {
        failure = error;
        finished = true;
        wake?.();
      },
    );
    try {
      for (;;) {
        const event = queue.shift();
        if (event) {
          if (queue.length <= highWater / 2) connection.resume(call.id);
          yield event;
          continue;
        }
        if (failure !== undefined) throw failure;
        if (finished) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      if (!finished)
        connection.abortCall(
          call.id,
          new UnsupportedOperationError('The consumer stopped reading the stream'),
        );
      connection.resume(call.id);
    }
  }

  /**
   * Sends a task on the data connection and yields partial results as they arrive: the Message of a
   * status update that has one, a Task snapshot after each artifact chunk, then the finished Task.
   */
  async *sendTaskStream(task: Task, options: SendTaskStreamOptions = {}): AsyncGenerator<Task | Message> {
    const toResult = createPartialResultMapper(task);
    const events = this.subscribe(
      options.baseUrl ?? this.url,
      task,
      options.signal ? { signal: options.signal } : {},
    );
    for await (const event of events) {
      const result = toResult(event);
      if (result !== undefined) yield result;
    }
  }

  /** Authenticates now (instead of lazily) and uses the context for every later handshake. */
  async authenticate(credentials: string): Promise<SecurityContext> {
    if (!this.authenticator) throw new ValueError('authenticate() needs an authenticator');
    const lazy = new LazyCredentials(this.authenticator, credentials);
    const context = await clientAuth(lazy);
    this.lazy = lazy;
    return context;
  }

  /** True when the URL names a loopback or unspecified host, i.e. one this process can serve. */
  validateUrl(): boolean {
    try {
      const { host } = parseTransportUrl(this.url);
      return ['localhost', '0.0.0.0', '::', '::1'].includes(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
    } catch {
      return false;
    }
  }

  /** The client-side recipe (`client.sync` rebuilds the transport in a worker thread). */
  describe(): ComponentDescriptor {
    const options: Record<string, unknown> = {
      url: this.url,
      timeoutMs: this.options.timeoutMs,
      pingIntervalMs: this.options.pingIntervalMs,
      maxBufferedBytes: this.options.maxBufferedBytes,
      maxBodyBytes: this.options.maxBodyBytes,
      maxQueuedEvents: this.options.maxQueuedEvents,
    };
    if (this.tls) options.tls = { ...this.tls };
    if (this.credentials !== undefined) options.credentials = this.credentials;
    if (this.authenticator) {
      const describable = this.authenticator as Partial<Describable>;
      if (typeof describable.describe !== 'function') {
        throw new UnsupportedOperationError(
          `${this.authenticator.constructor.name} has no describe(); this transport cannot be rebuilt elsewhere`,
        );
      }
      options.authenticator = describable.describe();
    }
    return describeComponent('@agent/transport-ws', 'WebSocketTransport', options);
  }

  private async call(
    baseUrl: string,
    kind: ConnectionKind,
    frame: Parameters<ClientConnection['call']>[0],
    options: Parameters<ClientConnection['call']>[1],
  ): Promise<ResultFrame> {
    const connection = await this.connection(baseUrl, kind);
    return connection.call(frame, options).result;
  }

  /** The open socket for a base URL and kind; a dropped one is reopened on next use. */
  private async connection(baseUrl: string, kind: ConnectionKind): Promise<ClientConnection> {
    const socketUrl = socketUrlFor(baseUrl, kind);
    const existing = this.connections.get(socketUrl);
    if (existing) {
      const connection = await existing.catch(() => undefined);
      if (connection?.isOpen) return connection;
      if (this.connections.get(socketUrl) === existing) this.connections.delete(socketUrl);
      // Another caller may have started the reconnect meanwhile.
      const again = this.connections.get(socketUrl);
      if (again) return again;
    }
    const pending = this.open(socketUrl);
    this.connections.set(socketUrl, pending);
    const forget = (): void => {
      if (this.connections.get(socketUrl) === pending) this.connections.delete(socketUrl);
    };
    pending.then((connection) => connection.onceClosed(forget), forget);
    return pending;
  }

  private async open(socketUrl: string): Promise<ClientConnection> {
    const headers = this.lazy ? await clientHeaders(this.lazy) : {};
    try {
      return await ClientConnection.open({
        url: socketUrl,
        headers,
        pingIntervalMs: this.options.pingIntervalMs,
        maxBodyBytes: this.options.maxBodyBytes,
        handshakeTimeoutMs: this.options.timeoutMs,
        ...(this.tls ? { tls: this.tls } : {}),
      });
    } catch (error) {
      // A rejected credential may have expired: authenticate afresh on the next attempt.
      if (error instanceof AgentError && error.code === 'UNAUTHENTICATED') this.lazy?.reset();
      throw error;
    }
  }
}

function operationOf(spec: ClientRequestSpec): string {
  if (spec.name in CLIENT_OPERATIONS) return spec.name;
  const byPath = Object.values(CLIENT_OPERATIONS).find(
    (operation) => operation.path === spec.path && operation.method === spec.method,
  );
  return byPath?.name ?? spec.name;
}

function requireTask(result: ResultFrame): Task {
  if (!result.task) throw new InternalError('The result frame carries no task');
  return result.task;
}

async function clientAuth(lazy: LazyCredentials): Promise<SecurityContext> {
  try {
    return await lazy.getContext();
  } catch (error) {
    throw error instanceof AgentError
      ? error
      : new UnauthenticatedError(`Client authentication failed: ${(error as Error).message}`, {
          cause: error,
        });
  }
}

async function clientHeaders(lazy: LazyCredentials): Promise<Record<string, string>> {
  await clientAuth(lazy);
  return lazy.headers();
}
