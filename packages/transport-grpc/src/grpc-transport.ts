import {
  MethodNotFoundError,
  UnsupportedOperationError,
  type ClientRequestSpec,
  type SendOptions,
  type SubscribeTaskOptions,
  type Task,
  type TaskEvent,
  type TlsOptions,
} from '@agent/core';
import { readTaskPayload } from '@agent/core/internal';
import { TransportBase, type Listening, type ServerPipeline, type TransportDefinition } from '@agent/server';
import type { Metadata } from '@grpc/grpc-js';
import { GrpcClientPool } from './client.js';
import {
  decodeInvokeResponse,
  encodeInvokeRequest,
  encodeSubscribeRequest,
  type InvokeOperation,
} from './codec.js';
import { headersToMetadata } from './metadata.js';
import { GRPC_OPTION_NAMES, type GRPCTransportOptions } from './options.js';
import { GrpcServerAdapter } from './server-adapter.js';

const DEFINITION: TransportDefinition = {
  kind: 'grpc',
  className: 'GRPCTransport',
  module: '@agent/transport-grpc',
  schemes: ['grpc', 'grpcs'],
  options: GRPC_OPTION_NAMES,
};

const UNARY_OPERATIONS: ReadonlySet<string> = new Set([
  'send_task',
  'cancel_task',
  'get_card',
  'get_task',
  'list_tasks',
] satisfies InvokeOperation[]);

/**
 * The gRPC transport: `agent.v1.AgentService` with `Invoke` for send_task / cancel_task / get_card /
 * get_task / list_tasks, `Stream` for a new task's events and `Subscribe` for a sent one's,
 * credentials in lowercase metadata, optional health and reflection services, `grpcs://` with TLS and
 * mutual TLS. Options, lifecycle and the server rules come from `@agent/server`; this class adds the
 * gRPC wire.
 */
export class GRPCTransport extends TransportBase<GRPCTransportOptions> {
  private readonly pool: GrpcClientPool;

  constructor(options: GRPCTransportOptions) {
    super(DEFINITION, options);
    this.pool = new GrpcClientPool({ tls: this.tls, maxMessageBytes: this.maxBodyBytes });
  }

  protected async listen(pipeline: ServerPipeline, tls: TlsOptions | undefined): Promise<Listening> {
    const server = new GrpcServerAdapter({
      pipeline,
      address: this.address,
      tls,
      health: this.options.health === true,
      reflection: this.options.reflection === true,
      maxMessageBytes: this.maxBodyBytes,
    });
    const port = await server.listen();
    return {
      port,
      // Health turns NOT_SERVING as soon as a stop begins, before in-flight calls drain.
      stopping: () => server.markStopping(),
      close: () => server.close(),
    };
  }

  protected override closeClient(): void {
    this.pool.close();
  }

  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    _params?: Record<string, string>,
    options: SendOptions = {},
  ): Promise<TResult> {
    if (spec.streaming) {
      const method = spec.name === 'subscribe_task' ? 'subscribeTask' : 'subscribe';
      throw new UnsupportedOperationError(`${spec.name} is a stream: call ${method}()`);
    }
    if (!UNARY_OPERATIONS.has(spec.name)) throw new MethodNotFoundError(`Unknown operation: ${spec.name}`);
    const operation = spec.name as InvokeOperation;
    // Checked here so a bad Task is a local ValidationError, not a half-encoded message.
    const payload = operation === 'send_task' ? readTaskPayload(data) : data;
    const request = encodeInvokeRequest(operation, payload);
    const response = await this.pool.invoke(baseUrl, request, {
      metadata: await this.outgoingMetadata(options),
      timeoutMs: options.timeoutMs ?? this.timeoutMs,
      signal: options.signal,
    });
    return decodeInvokeResponse(response) as TResult;
  }

  /** Streams a task's events; `options.timeoutMs` sets a deadline for the whole stream (none by default). */
  async *subscribe(agentUrl: string, task: Task, options: SendOptions = {}): AsyncIterable<TaskEvent> {
    const request = encodeInvokeRequest('send_task', readTaskPayload(task));
    const metadata = await this.outgoingMetadata(options);
    yield* this.pool.stream(agentUrl, request, {
      metadata,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  }

  /**
   * One of the caller's tasks' events after `options.after` (default 0: all), then live ones, up to its
   * final status; empty when `after` is already the final one. `options.timeoutMs` sets a deadline for
   * the whole subscription (none by default).
   */
  async *subscribeTask(
    agentUrl: string,
    taskId: string,
    options: SubscribeTaskOptions = {},
  ): AsyncIterable<TaskEvent> {
    const request = encodeSubscribeRequest({ task_id: taskId, after: options.after ?? 0 });
    const metadata = await this.outgoingMetadata(options);
    yield* this.pool.subscribe(agentUrl, request, {
      metadata,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  }

  /**
   * The credentials as lowercase metadata, `x-tenant` for a tenant other than the default one, and
   * the call's trace context.
   */
  private async outgoingMetadata(options: SendOptions): Promise<Metadata> {
    return headersToMetadata(await this.callHeaders('metadata'), options);
  }
}
