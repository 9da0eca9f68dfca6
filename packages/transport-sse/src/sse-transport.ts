import type {
  ClientRequestSpec,
  SendOptions,
  SubscribeTaskOptions,
  Task,
  TaskEvent,
  TlsOptions,
} from '@agent/core';
import { TransportBase, type Listening, type ServerPipeline, type TransportDefinition } from '@agent/server';
import { CorsPolicy, NodeHost } from '@agent/server/node';
import { SSEClient } from './client.js';
import { SSE_OPTION_NAMES, sseSettings, type SSESettings, type SSETransportOptions } from './options.js';
import { SSEServerAdapter } from './server-adapter.js';

const DEFINITION: TransportDefinition = {
  kind: 'sse',
  className: 'SSETransport',
  module: '@agent/transport-sse',
  schemes: ['http', 'https'],
  options: SSE_OPTION_NAMES,
};

/**
 * SSE JSON-RPC transport: JSON-RPC 2.0 unary calls on `POST /rpc` and task event streams on
 * `POST /tasks/stream` answered as `text/event-stream`. The server side serves the bound TaskHandler
 * through the shared server pipeline on the shared node host; the client side (`send`, `subscribe`,
 * `subscribeTask`) talks to any SSE JSON-RPC server.
 */
export class SSETransport extends TransportBase<SSETransportOptions> {
  private readonly sse: SSESettings;
  private readonly client: SSEClient;
  private readonly cors: CorsPolicy | undefined;

  constructor(options: SSETransportOptions) {
    super(DEFINITION, options);
    this.sse = sseSettings(options);
    this.cors = CorsPolicy.from(DEFINITION.className, options.cors);
    this.client = new SSEClient({
      tls: this.tls,
      timeoutMs: this.timeoutMs,
      maxResponseBytes: this.sse.maxResponseBytes,
      headers: () => this.callHeaders(),
      onRefused: () => this.credentials?.reset(),
    });
  }

  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options: SendOptions = {},
  ): Promise<TResult> {
    return (await this.client.send(spec, baseUrl, data, params, options)) as TResult;
  }

  /** Streams a task's events from `POST /tasks/stream`; the last one is the final `task.status`. */
  subscribe(agentUrl: string, task: Task, options: SendOptions = {}): AsyncGenerator<TaskEvent> {
    return this.client.subscribe(agentUrl, task, options);
  }

  /**
   * Follows one of the caller's tasks (`tasks/resubscribe`): its events after `options.after`, then
   * live ones, up to the final status; nothing at all for a finished task with no event after `after`.
   */
  subscribeTask(
    agentUrl: string,
    taskId: string,
    options: SubscribeTaskOptions = {},
  ): AsyncGenerator<TaskEvent> {
    return this.client.subscribeTask(agentUrl, taskId, options);
  }

  protected async listen(pipeline: ServerPipeline, tls: TlsOptions | undefined): Promise<Listening> {
    const { basePath } = this.address;
    const adapter = new SSEServerAdapter(pipeline, {
      basePath,
      maxBodyBytes: this.maxBodyBytes,
      heartbeatMs: this.sse.heartbeatMs,
      cancelOnDisconnect: this.sse.cancelOnDisconnect,
    });
    const host = new NodeHost({
      tls,
      basePath,
      cors: this.cors,
      onRequest: adapter.onRequest,
      state: () => pipeline.state,
    });
    const port = await host.start(this.address.host, this.address.port);
    return { port, close: () => host.close() };
  }

  protected override closeClient(): void {
    this.client.close();
  }

  protected override describeOptions(): Record<string, unknown> {
    return { maxResponseBytes: this.sse.maxResponseBytes };
  }
}
