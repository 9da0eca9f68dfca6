import {
  AgentError,
  CLIENT_OPERATIONS,
  InternalError,
  MethodNotFoundError,
  UnsupportedOperationError,
  ValidationError,
  type AgentCard,
  type ClientRequestSpec,
  type SendOptions,
  type SubscribeTaskOptions,
  type Task,
  type TaskEvent,
  type TaskList,
  type TlsOptions,
} from '@agent/core';
import {
  isRecord,
  outgoingTraceHeaders,
  parseCancelRequest,
  readTaskPayload,
  type TraceOptions,
} from '@agent/core/internal';
import { ClientConnection, type CallOptions, type OutgoingFrame } from './client-connection.js';
import { streamEvents } from './client-stream.js';
import type { ConnectionKind, ResultFrame } from './codec.js';
import { socketUrlFor } from './socket-url.js';

export interface WebSocketClientOptions {
  /** Deadline of a unary call and of the handshake; 0 = none. */
  timeoutMs: number;
  pingIntervalMs: number;
  /** Outgoing frames above this many bytes are refused locally. */
  maxBodyBytes: number;
  maxQueuedEvents: number;
  tls: TlsOptions | undefined;
  /** The headers of a handshake: authorization and the tenant (`{}` with neither). */
  handshakeHeaders(): Promise<Record<string, string>>;
  /** The server refused the credential: the next handshake authenticates afresh. */
  onRefused(): void;
}

/**
 * The client side: per agent base URL, one lazily opened data socket and one control socket, shared
 * by every call and reopened on the next call after a drop. Unary calls and streams share the data
 * socket; cancels go on the control socket, so they never wait behind the stream they stop.
 */
export class WebSocketClient {
  private readonly connections = new Map<string, Promise<ClientConnection>>();

  constructor(private readonly options: WebSocketClientOptions) {}

  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data: unknown,
    options: SendOptions = {},
  ): Promise<TResult> {
    const callOptions: CallOptions = { timeoutMs: options.timeoutMs ?? this.options.timeoutMs };
    if (options.signal) callOptions.signal = options.signal;
    const trace = traced(options);
    switch (operationOf(spec)) {
      case 'send_task': {
        const task = readTaskPayload(data);
        const result = await this.call(
          baseUrl,
          'data',
          trace({ op: 'task.send', task, stream: false }),
          callOptions,
        );
        return requireTask(result) as TResult;
      }
      case 'cancel_task': {
        const { taskId, reason } = parseCancelRequest(data);
        const frame: OutgoingFrame = { op: 'task.cancel', task_id: taskId };
        if (reason !== undefined) frame.reason = reason;
        return requireTask(await this.call(baseUrl, 'control', trace(frame), callOptions)) as TResult;
      }
      case 'get_card': {
        const result = await this.call(baseUrl, 'data', trace({ op: 'agent.card' }), callOptions);
        if (!result.card) throw new InternalError('The agent.card result carries no card');
        return result.card as AgentCard as TResult;
      }
      case 'get_task': {
        const fields = requestFields(data, 'get_task');
        const frame: OutgoingFrame = { ...fields, op: 'task.get', task_id: fields.task_id };
        return requireTask(await this.call(baseUrl, 'data', trace(frame), callOptions)) as TResult;
      }
      case 'list_tasks': {
        const frame: OutgoingFrame = { ...requestFields(data, 'list_tasks'), op: 'task.list' };
        return requireList(await this.call(baseUrl, 'data', trace(frame), callOptions)) as TResult;
      }
      case 'stream_task':
      case 'subscribe_task':
        throw new UnsupportedOperationError(
          'Streaming operations go through subscribe() and subscribeTask()',
        );
      default:
        throw new MethodNotFoundError(`Unknown operation: ${spec.name}`);
    }
  }

  /**
   * Streams a task's events; the last one is the final `task.status`. No deadline unless
   * `options.timeoutMs` is given. Leaving the loop early stops the call on the server (no task cancel).
   */
  async *subscribe(agentUrl: string, task: Task, options: SendOptions = {}): AsyncGenerator<TaskEvent> {
    const checked = readTaskPayload(task);
    const frame = traced(options)({ op: 'task.send', task: checked, stream: true });
    const connection = await this.connection(agentUrl, 'data');
    yield* streamEvents(connection, frame, {
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      maxQueuedEvents: this.options.maxQueuedEvents,
    });
  }

  /**
   * Follows one of the caller's tasks: its events after `options.after`, then live ones, up to the
   * final status. As `subscribe`: no deadline unless `options.timeoutMs` is given, and leaving the
   * loop early stops the subscription on the server (the task runs on).
   */
  async *subscribeTask(
    agentUrl: string,
    taskId: string,
    options: SubscribeTaskOptions = {},
  ): AsyncGenerator<TaskEvent> {
    const frame: OutgoingFrame = traced({})(
      options.after === undefined
        ? { op: 'task.subscribe', task_id: taskId }
        : { op: 'task.subscribe', task_id: taskId, after: options.after },
    );
    const connection = await this.connection(agentUrl, 'data');
    yield* streamEvents(connection, frame, {
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      maxQueuedEvents: this.options.maxQueuedEvents,
    });
  }

  /** Closes every socket; a later call opens new ones. */
  close(): void {
    const open = [...this.connections.values()];
    this.connections.clear();
    for (const pending of open) {
      pending.then(
        (connection) => connection.close(),
        () => undefined,
      );
    }
  }

  private async call(
    baseUrl: string,
    kind: ConnectionKind,
    frame: OutgoingFrame,
    options: CallOptions,
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
    const headers = await this.options.handshakeHeaders();
    try {
      return await ClientConnection.open({
        url: socketUrl,
        headers,
        pingIntervalMs: this.options.pingIntervalMs,
        maxBodyBytes: this.options.maxBodyBytes,
        handshakeTimeoutMs: this.options.timeoutMs,
        ...(this.options.tls ? { tls: this.options.tls } : {}),
      });
    } catch (error) {
      // A refused credential may have expired: authenticate afresh on the next attempt.
      if (error instanceof AgentError && error.code === 'UNAUTHENTICATED') this.options.onRefused();
      throw error;
    }
  }
}

/**
 * Adds the call's trace context (its own `traceparent`, else the active OpenTelemetry span's) to
 * its frame: per frame, since one socket carries calls of many traces.
 */
function traced(options: TraceOptions): <F extends OutgoingFrame>(frame: F) => F {
  const trace = outgoingTraceHeaders(options);
  return trace === undefined ? (frame) => frame : (frame) => ({ ...frame, ...trace });
}

function operationOf(spec: ClientRequestSpec): string {
  if (spec.name in CLIENT_OPERATIONS) return spec.name;
  const byPath = Object.values(CLIENT_OPERATIONS).find(
    (operation) => operation.path === spec.path && operation.method === spec.method,
  );
  return byPath?.name ?? spec.name;
}

/**
 * A task API request's fields as they go into the frame, checked by the server. The frame's own
 * `op` and `id` are not the request's: an `id` names the task (as in a cancel), unless `task_id` does.
 */
function requestFields(data: unknown, operation: string): Record<string, unknown> {
  if (data === undefined || data === null) return {};
  if (!isRecord(data)) {
    throw new ValidationError(`Invalid ${operation} request: body must be an object`, {
      data: { errors: [{ pointer: '/', message: 'must be object' }] },
    });
  }
  const { op: _op, id, ...fields } = data;
  if (fields.task_id === undefined && id !== undefined) fields.task_id = id;
  return fields;
}

function requireList(result: ResultFrame): TaskList {
  if (!Array.isArray(result.tasks) || typeof result.next_page_token !== 'string')
    throw new InternalError('The task.list result carries no tasks and next_page_token');
  return { tasks: result.tasks, next_page_token: result.next_page_token };
}

function requireTask(result: ResultFrame): Task {
  if (!result.task) throw new InternalError('The result frame carries no task');
  return result.task;
}
