import type {
  ClientRequestSpec,
  Message,
  SendOptions,
  SubscribeTaskOptions,
  Task,
  TaskEvent,
  TlsOptions,
} from '@agent/core';
import { TransportBase, type Listening, type ServerPipeline, type TransportDefinition } from '@agent/server';
import { NodeHost } from '@agent/server/node';
import { WebSocketClient } from './client.js';
import { WS_OPTION_NAMES, wsSettings, type WebSocketTransportOptions, type WsSettings } from './options.js';
import { createPartialResultMapper } from './partial-results.js';
import { WsServerAdapter } from './server-adapter.js';

export interface SendTaskStreamOptions {
  /** Agent to call; defaults to this transport's `url`. */
  baseUrl?: string;
  signal?: AbortSignal;
}

const DEFINITION: TransportDefinition = {
  kind: 'ws',
  className: 'WebSocketTransport',
  module: '@agent/transport-ws',
  schemes: ['ws', 'wss'],
  options: WS_OPTION_NAMES,
};

/**
 * WebSocket transport. Server side: the shared node:http(s) host, upgrading the data connection on
 * the URL's own path and the control connection (cancellation) on `<path>/control`. Client side:
 * one lazily opened data socket and one control socket per agent base URL, many calls in flight
 * on each. Options, lifecycle, credentials, `validateUrl()` and `describe()` are `TransportBase`'s.
 */
export class WebSocketTransport extends TransportBase<WebSocketTransportOptions> {
  private readonly settings: WsSettings;
  private readonly client: WebSocketClient;

  constructor(options: WebSocketTransportOptions) {
    super(DEFINITION, options);
    this.settings = wsSettings(options);
    this.client = new WebSocketClient({
      timeoutMs: this.timeoutMs,
      pingIntervalMs: this.settings.pingIntervalMs,
      maxBodyBytes: this.maxBodyBytes,
      maxQueuedEvents: this.settings.maxQueuedEvents,
      tls: this.tls,
      handshakeHeaders: () => this.callHeaders(),
      onRefused: () => this.credentials?.reset(),
    });
  }

  protected async listen(pipeline: ServerPipeline, tls: TlsOptions | undefined): Promise<Listening> {
    const adapter = new WsServerAdapter({
      pipeline,
      basePath: this.address.basePath,
      maxBodyBytes: this.maxBodyBytes,
      maxBufferedBytes: this.settings.maxBufferedBytes,
      maxInFlightPerSocket: this.settings.maxInFlightPerSocket,
      pingIntervalMs: this.settings.pingIntervalMs,
    });
    const host = new NodeHost({
      tls,
      basePath: this.address.basePath,
      state: () => pipeline.state,
      onRequest: (req, res) => adapter.handleRequest(req, res),
      onUpgrade: (req, socket, head) => adapter.handleUpgrade(req, socket, head),
    });
    const port = await host.start(this.address.host, this.address.port);
    return {
      port,
      async close() {
        // The sockets first: the listener only finishes closing once no upgraded socket is left.
        await adapter.close();
        await host.close();
      },
    };
  }

  protected override closeClient(): void {
    this.client.close();
  }

  protected override describeOptions(): Record<string, unknown> {
    return { ...this.settings };
  }

  send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    _params?: Record<string, string>,
    options?: SendOptions,
  ): Promise<TResult> {
    return this.client.send<TResult>(spec, baseUrl, data, options);
  }

  /**
   * Streams a task's events; the last one is the final `task.status`. No deadline unless
   * `options.timeoutMs` is given. Leaving the loop early stops the call on the server (no task
   * cancel); a consumer that falls more than `maxQueuedEvents` behind fails with `SlowConsumerError`.
   */
  subscribe(agentUrl: string, task: Task, options?: SendOptions): AsyncIterable<TaskEvent> {
    return this.client.subscribe(agentUrl, task, options);
  }

  /**
   * Follows one of the caller's tasks on the data connection (`task.subscribe`): the events recorded
   * after `options.after` (a `sequence`; default 0, all of them), then live ones, up to the final
   * status (at once for a finished task). An id the caller does not own fails with
   * `TaskNotFoundError`. Leaving the loop early ends the subscription, never the task; a consumer
   * that falls more than `maxQueuedEvents` behind fails with `SlowConsumerError`.
   */
  subscribeTask(agentUrl: string, taskId: string, options?: SubscribeTaskOptions): AsyncIterable<TaskEvent> {
    return this.client.subscribeTask(agentUrl, taskId, options);
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
}
