import {
  AgentError,
  CLIENT_OPERATIONS,
  MethodNotFoundError,
  UnsupportedOperationError,
  ValueError,
  isTerminalState,
  type AgentCard,
  type ClientRequestSpec,
  type ComponentDescriptor,
  type SendOptions,
  type SubscribeTaskOptions,
  type Task,
  type TaskEvent,
  type TlsOptions,
  type Transport,
} from '@agent/core';
import { checkOptionNames, describeComponent, finalStatusEvent, readTaskPayload } from '@agent/core/internal';
import type { Authenticator, ClientCredentials, SecurityContext } from '@agent/auth';
import { authenticateClient, describeClientAuth, clientCredentialsFrom } from '@agent/server';
import { fromA2AAgentCard } from '../agent-card.js';
import { fromA2ATask } from '../protojson.js';
import {
  bindingClient,
  type A2ABinding,
  type BindingClient,
  type StreamMethod,
  type UnaryMethod,
} from './bindings.js';
import { CardResolver, type ResolvedCard } from './card-resolver.js';
import { A2AHttp, isAgentAnswer, type CallOptions } from './http.js';
import { A2A_TRANSPORT_OPTION_NAMES, transportSettings, type A2ATransportOptions } from './options.js';
import { RemoteTaskIds } from './remote-task-ids.js';
import {
  cancelTaskRequest,
  getTaskRequest,
  listTasksRequest,
  sendMessageRequest,
  sendMessageResult,
  taskListResult,
} from './requests.js';
import { taskEvents } from './task-stream.js';

/**
 * A client-only transport that talks to any A2A 1.0 agent: `new AgentClient({ transport: new
 * A2ATransport(), baseUrl })` sends, streams, gets, lists and cancels tasks over the JSON-RPC or
 * HTTP+JSON interface the agent's card (`{baseUrl}/.well-known/agent-card.json`) offers. Task ids
 * are the agent's: a task whose id the agent minted continues it, any other starts a new one.
 */
export class A2ATransport implements Transport {
  readonly kind = 'http' as const;
  /** The agent mints task ids: a send repeated after a lost answer could start a second task. */
  readonly resubmissionIsIdempotent = false;
  readonly authenticator: Authenticator | undefined;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /** Sent instead of the card interface's tenant, when set. */
  readonly tenant: string | undefined;
  readonly bindings: readonly A2ABinding[] | undefined;
  private readonly tls: TlsOptions | undefined;
  private credentials: ClientCredentials | undefined;
  private readonly http: A2AHttp;
  private readonly cards: CardResolver;
  private readonly clients = new Map<A2ABinding, BindingClient>();
  private readonly remoteIds = new RemoteTaskIds();

  constructor(options: A2ATransportOptions = {}) {
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      throw new ValueError('A2ATransport options must be an object');
    }
    checkOptionNames('A2ATransport', options, A2A_TRANSPORT_OPTION_NAMES);
    const settings = transportSettings(options);
    this.credentials = clientCredentialsFrom(options);
    this.authenticator = options.authenticator;
    this.timeoutMs = settings.timeoutMs;
    this.maxResponseBytes = settings.maxResponseBytes;
    this.tenant = settings.tenant;
    this.bindings = settings.bindings;
    this.tls = options.tls;
    this.http = new A2AHttp({
      timeoutMs: this.timeoutMs,
      maxResponseBytes: this.maxResponseBytes,
      tls: this.tls,
      headers: () => (this.credentials ? this.credentials.headers() : Promise.resolve({})),
      onUnauthenticated: () => this.credentials?.reset(),
    });
    this.cards = new CardResolver(this.http, { bindings: this.bindings, tenant: this.tenant });
  }

  /** Client only: there is nothing to serve. */
  start(): Promise<void> {
    return Promise.reject(
      new UnsupportedOperationError('A2ATransport is client-only: it cannot start a server'),
    );
  }

  /**
   * Uses `card` (an A2A card already known, such as a registry entry's) for the agent at `baseUrl`
   * instead of fetching `baseUrl/.well-known/agent-card.json`; a call that fails short of the agent's
   * answer fetches it again from there. UNSUPPORTED_OPERATION when the card offers no JSONRPC or
   * HTTP+JSON interface of A2A 1.x.
   */
  useCard(baseUrl: string, card: Record<string, unknown>): void {
    this.cards.remember(baseUrl, card);
  }

  /** Releases pooled connections; later calls open new ones. */
  async stop(): Promise<void> {
    this.http.close();
  }

  bind(): void {
    throw new UnsupportedOperationError(
      'A2ATransport is client-only: serve A2A with A2AServer on an HTTPTransport',
    );
  }

  onTaskReceived(): void {
    throw new UnsupportedOperationError(
      'A2ATransport is client-only: serve A2A with A2AServer on an HTTPTransport',
    );
  }

  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    _params?: Record<string, string>,
    options: SendOptions = {},
  ): Promise<TResult> {
    return (await this.dispatch(spec, baseUrl, data, options)) as TResult;
  }

  /** SendStreamingMessage: the task's events, ending with exactly one final status. */
  subscribe(agentUrl: string, task: Task, options: SendOptions = {}): AsyncIterable<TaskEvent> {
    const continues = this.remoteIds.has(agentUrl, task.id);
    return this.events(
      agentUrl,
      'SendStreamingMessage',
      () => sendMessageRequest(task, continues),
      task,
      options,
    );
  }

  /**
   * SubscribeToTask: the task's current state, then its live events, ending after the final status.
   * `after` skips that many events of this stream. A task that already finished (which A2A refuses
   * to subscribe to) yields its final status alone, or nothing when `after` is set.
   */
  subscribeTask(
    agentUrl: string,
    taskId: string,
    options: SubscribeTaskOptions = {},
  ): AsyncIterable<TaskEvent> {
    const { after = 0, ...call } = options;
    return this.followTask(agentUrl, taskId, after, call);
  }

  async authenticate(credentials: string): Promise<SecurityContext> {
    const { store, context } = await authenticateClient(this.authenticator, this.credentials, credentials);
    this.credentials = store;
    return context;
  }

  /** A client transport serves no URL. */
  validateUrl(): boolean {
    return false;
  }

  /** A recipe that rebuilds this transport in a worker thread (`client.sync`). */
  describe(): ComponentDescriptor {
    const options: Record<string, unknown> = {
      timeoutMs: this.timeoutMs,
      maxResponseBytes: this.maxResponseBytes,
    };
    if (this.tenant !== undefined) options.tenant = this.tenant;
    if (this.bindings !== undefined) options.bindings = [...this.bindings];
    Object.assign(
      options,
      describeClientAuth({ tls: this.tls, credentials: this.credentials, authenticator: this.authenticator }),
    );
    return describeComponent('@agent/a2a', 'A2ATransport', options);
  }

  private async dispatch(
    spec: ClientRequestSpec,
    baseUrl: string,
    data: unknown,
    options: CallOptions,
  ): Promise<unknown> {
    switch (spec.name) {
      case 'send_task': {
        const task = readTaskPayload(data);
        const request = sendMessageRequest(task, this.remoteIds.has(baseUrl, task.id));
        const { task: result, remoteId } = sendMessageResult(
          await this.call(baseUrl, 'SendMessage', request, options),
          task,
        );
        if (remoteId !== undefined) this.remoteIds.remember(baseUrl, remoteId);
        return result;
      }
      case 'cancel_task':
        return this.taskResult(
          baseUrl,
          await this.call(baseUrl, 'CancelTask', cancelTaskRequest(data), options),
        );
      case 'get_task':
        return this.taskResult(baseUrl, await this.call(baseUrl, 'GetTask', getTaskRequest(data), options));
      case 'list_tasks': {
        const list = taskListResult(await this.call(baseUrl, 'ListTasks', listTasksRequest(data), options));
        for (const task of list.tasks) this.remoteIds.remember(baseUrl, task.id);
        return list;
      }
      case 'get_card':
        return this.card(baseUrl, options);
      case 'stream_task':
      case 'subscribe_task':
        throw new UnsupportedOperationError(`send() is unary; stream ${spec.name} with subscribe()`);
      default:
        throw new MethodNotFoundError(`A2ATransport has no operation ${spec.name}`);
    }
  }

  private async *followTask(
    agentUrl: string,
    taskId: string,
    after: number,
    options: CallOptions,
  ): AsyncGenerator<TaskEvent> {
    const placeholder: Task = {
      id: taskId,
      state: 'submitted',
      messages: [],
      artifacts: [],
      metadata: {},
      created_at: '',
    };
    try {
      yield* this.events(agentUrl, 'SubscribeToTask', () => ({ id: taskId }), placeholder, options, after);
    } catch (error) {
      if (!(error instanceof AgentError && error.code === 'UNSUPPORTED_OPERATION')) throw error;
      const task = await this.dispatch(CLIENT_OPERATIONS.get_task, agentUrl, { task_id: taskId }, options);
      if (!isTerminalState((task as Task).state)) throw error;
      if (after === 0) yield { ...finalStatusEvent(task as Task), sequence: 1 };
    }
  }

  private taskResult(baseUrl: string, result: unknown): Task {
    const task = fromA2ATask(result);
    this.remoteIds.remember(baseUrl, task.id);
    return task;
  }

  private async card(baseUrl: string, options: CallOptions): Promise<AgentCard> {
    // get_card asks the agent now: a card cached from earlier calls may be stale.
    this.cards.forget(baseUrl);
    const { card } = await this.cards.resolve(baseUrl, options);
    return fromA2AAgentCard(card);
  }

  private async call(
    baseUrl: string,
    method: UnaryMethod,
    request: Record<string, unknown>,
    options: CallOptions,
  ): Promise<unknown> {
    const resolved = await this.cards.resolve(baseUrl, options);
    try {
      return await this.client(resolved).call(resolved.endpoint, method, request, options);
    } catch (error) {
      this.afterFailure(baseUrl, error);
      throw error;
    }
  }

  private async *events(
    baseUrl: string,
    method: StreamMethod,
    request: () => Record<string, unknown>,
    fallback: Task,
    options: CallOptions,
    after = 0,
  ): AsyncGenerator<TaskEvent> {
    const resolved = await this.cards.resolve(baseUrl, options);
    const responses = this.client(resolved).stream(resolved.endpoint, method, request(), options);
    try {
      yield* taskEvents(responses, {
        url: resolved.endpoint.url,
        fallback,
        after,
        onRemoteId: (id) => this.remoteIds.remember(baseUrl, id),
      });
    } catch (error) {
      this.afterFailure(baseUrl, error);
      throw error;
    }
  }

  /** A call that failed short of the agent's answer may have gone to a stale interface. */
  private afterFailure(baseUrl: string, error: unknown): void {
    if (!isAgentAnswer(error)) this.cards.forget(baseUrl);
  }

  private client(resolved: ResolvedCard): BindingClient {
    const binding = resolved.endpoint.binding;
    let client = this.clients.get(binding);
    if (!client) {
      client = bindingClient(binding, this.http);
      this.clients.set(binding, client);
    }
    return client;
  }
}
