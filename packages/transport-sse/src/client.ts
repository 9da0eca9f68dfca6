/**
 * The client side: JSON-RPC unary calls on `/rpc`, incremental parsing of the `/tasks/stream`
 * streams (`tasks/stream`, `tasks/resubscribe`), and the keep-alive socket pools both use.
 * Credentials come from the facade (`ClientCredentials`), read when a request is sent so
 * authentication stays lazy.
 */
import http from 'node:http';
import https from 'node:https';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import {
  isFinalEvent,
  UnavailableError,
  UnsupportedOperationError,
  type AgentError,
  type ClientRequestSpec,
  type InternalError,
  type SendOptions,
  type SubscribeTaskOptions,
  type SubscribeTaskRequest,
  type Task,
  type TaskEvent,
  type TlsOptions,
} from '@agent/core';
import { httpEndpointUrl, isRecord, withRetryAfterHeader, withTraceHeaders } from '@agent/core/internal';
import { errorFromHttpResponse, openRequest, readText, type OpenRequest } from './client-request.js';
import {
  decodeFrame,
  decodeRpcResponse,
  encodeRequest,
  EVENT_STREAM_TYPE,
  malformedAnswer,
  OPERATION_METHODS,
  RESUBSCRIBE_METHOD,
  STREAM_METHOD,
  type JsonRpcId,
} from './codec.js';

/** Free keep-alive sockets close before the server's default 5 s keep-alive timeout would reset them. */
const CLIENT_IDLE_SOCKET_MS = 4_000;

export interface ClientSettings {
  tls: TlsOptions | undefined;
  /** Default deadline of a unary call and of the wait for a stream's headers; 0 = none. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** The headers every call sends: authorization and the tenant (`{}` with neither). */
  headers(): Promise<Record<string, string>>;
  /** The server refused the credentials: the next call authenticates again. */
  onRefused(): void;
}

interface CallOptions {
  baseUrl: string;
  /** Route below the base URL: `/rpc` or `/tasks/stream`. */
  route: string;
  id: JsonRpcId;
  method: string;
  params: unknown;
  accept: string;
  query?: Record<string, string> | undefined;
  options: SendOptions;
}

export class SSEClient {
  private httpAgent: http.Agent | undefined;
  private httpsAgent: https.Agent | undefined;
  private nextRequestId = 1;

  constructor(private readonly settings: ClientSettings) {}

  /** One unary operation as a JSON-RPC call on `/rpc`; a JSON-RPC error rejects with the typed error. */
  async send(
    spec: ClientRequestSpec,
    baseUrl: string,
    data: unknown,
    query: Record<string, string> | undefined,
    options: SendOptions,
  ): Promise<unknown> {
    if (spec.streaming || spec.name === 'stream_task' || spec.name === 'subscribe_task') {
      const instead = spec.name === 'subscribe_task' ? 'subscribeTask()' : 'subscribe()';
      throw new UnsupportedOperationError(`${spec.name} is a streaming operation: use ${instead}`);
    }
    const method = Object.prototype.hasOwnProperty.call(OPERATION_METHODS, spec.name)
      ? OPERATION_METHODS[spec.name]
      : undefined;
    if (method === undefined) {
      throw new UnsupportedOperationError(`The SSE JSON-RPC transport has no operation named ${spec.name}`);
    }
    const open = await this.open({
      baseUrl,
      route: '/rpc',
      id: this.nextRequestId++,
      method,
      params: rpcParams(spec.name, data),
      accept: 'application/json',
      query,
      options,
    });
    try {
      const text = await readText(open, this.settings.maxResponseBytes);
      const status = open.response.statusCode ?? 0;
      if (status !== 200) throw this.failed(status, text, open.response.headers);
      return decodeRpcResponse(text);
    } finally {
      open.settle();
    }
  }

  /**
   * Opens `tasks/stream` on `POST /tasks/stream` and yields TaskEvents as their frames arrive; ends
   * after the final status. Leaving the loop early, or aborting the signal, closes the request.
   */
  subscribe(agentUrl: string, task: Task, options: SendOptions): AsyncGenerator<TaskEvent> {
    return this.follow(agentUrl, STREAM_METHOD, { task }, options, false);
  }

  /**
   * Opens `tasks/resubscribe` on `POST /tasks/stream`: the task's events after `options.after`,
   * then live ones, up to the final status. A finished task with nothing after `after` is an empty
   * stream, which ends the iteration at once.
   */
  subscribeTask(agentUrl: string, taskId: string, options: SubscribeTaskOptions): AsyncGenerator<TaskEvent> {
    const params: SubscribeTaskRequest = { task_id: taskId };
    if (options.after !== undefined) params.after = options.after;
    return this.follow(agentUrl, RESUBSCRIBE_METHOD, params, options, true);
  }

  private async *follow(
    agentUrl: string,
    method: string,
    params: unknown,
    options: SendOptions,
    mayBeEmpty: boolean,
  ): AsyncGenerator<TaskEvent> {
    const open = await this.open({
      baseUrl: agentUrl,
      route: '/tasks/stream',
      id: this.nextRequestId++,
      method,
      params,
      accept: EVENT_STREAM_TYPE,
      options,
    });
    const read = { final: false };
    try {
      yield* this.readStream(open, mayBeEmpty, read);
    } finally {
      // After the final event the server ends the response: let it, and reuse the socket.
      if (read.final) open.release();
      else open.destroy();
    }
  }

  /** Releases the pooled sockets. */
  close(): void {
    this.httpAgent?.destroy();
    this.httpsAgent?.destroy();
    this.httpAgent = undefined;
    this.httpsAgent = undefined;
  }

  private async open(call: CallOptions): Promise<OpenRequest> {
    const url = httpEndpointUrl('SSETransport', call.baseUrl, call.route, call.query);
    const headers = await this.settings.headers();
    const { signal, timeoutMs } = call.options;
    return openRequest({
      url,
      method: 'POST',
      // The call's own `traceparent`, else the active OpenTelemetry span's.
      headers: withTraceHeaders(
        { ...headers, 'content-type': 'application/json', accept: call.accept },
        call.options,
      ),
      body: encodeRequest(call.id, call.method, call.params),
      agent: this.agentFor(url),
      timeoutMs: timeoutMs ?? this.settings.timeoutMs,
      ...(signal ? { signal } : {}),
    });
  }

  /** `mayBeEmpty`: a stream that ends cleanly before its first event is complete, not cut short. */
  private async *readStream(
    open: OpenRequest,
    mayBeEmpty: boolean,
    read: { final: boolean },
  ): AsyncGenerator<TaskEvent> {
    const { response } = open;
    const max = this.settings.maxResponseBytes;
    const status = response.statusCode ?? 0;
    const contentType = String(response.headers['content-type'] ?? '');
    if (status !== 200 || !contentType.startsWith(EVENT_STREAM_TYPE)) {
      const text = await readText(open, max);
      if (status !== 200) throw this.failed(status, text, response.headers);
      throw malformedAnswer(`expected ${EVENT_STREAM_TYPE}, got ${contentType || 'no content type'}`);
    }
    // The deadline covers the wait for the stream to open; a task may then run as long as it needs.
    open.clearDeadline();
    response.setEncoding('utf8');
    const frames: EventSourceMessage[] = [];
    let received = 0;
    let failure: InternalError | undefined;
    const parser = createParser({
      onEvent: (frame) => frames.push(frame),
      onError: (error) => {
        // Unknown fields are ignored, as the SSE standard says; only an oversized frame is fatal.
        if (error.type === 'max-buffer-size-exceeded') failure ??= malformedAnswer(error.message);
      },
      maxBufferSize: max,
    });
    try {
      // Leaving the loop at the final event must not destroy the response: its end still comes.
      for await (const chunk of response.iterator({ destroyOnReturn: false })) {
        parser.feed(chunk as string);
        if (failure) throw failure;
        while (frames.length > 0) {
          open.throwIfAborted();
          const event = decodeFrame(frames.shift()!);
          received++;
          // Set before the yield: a reader that stops at the final event stops there.
          read.final = isFinalEvent(event);
          yield event;
          if (read.final) return;
        }
      }
    } catch (error) {
      throw open.explain(error);
    }
    if (mayBeEmpty && received === 0) return;
    throw new UnavailableError('The event stream ended before the final status');
  }

  /**
   * The typed error of a non-200 answer; its `Retry-After` becomes `data.retry_after_ms` when the
   * body did not say it (a proxy's bare 429 or 503), for the client's retries.
   */
  private failed(status: number, text: string, headers: http.IncomingHttpHeaders): AgentError {
    const error = withRetryAfterHeader(errorFromHttpResponse(status, text), headers['retry-after']);
    if (error.code === 'UNAUTHENTICATED') this.settings.onRefused();
    return error;
  }

  private agentFor(url: URL): http.Agent {
    if (url.protocol === 'https:') {
      const tls = this.settings.tls ?? {};
      this.httpsAgent ??= new https.Agent({
        keepAlive: true,
        timeout: CLIENT_IDLE_SOCKET_MS,
        ...(tls.ca === undefined ? {} : { ca: tls.ca }),
        ...(tls.cert === undefined ? {} : { cert: tls.cert }),
        ...(tls.key === undefined ? {} : { key: tls.key }),
        ...(tls.servername === undefined ? {} : { servername: tls.servername }),
        rejectUnauthorized: tls.rejectUnauthorized ?? true,
      });
      return this.httpsAgent;
    }
    this.httpAgent ??= new http.Agent({ keepAlive: true, timeout: CLIENT_IDLE_SOCKET_MS });
    return this.httpAgent;
  }
}

/**
 * JSON-RPC params of each unary operation: `{task}`, `{task_id, reason?}`, `{task_id,
 * history_length?}`, `{session_id?, state?, page_size?, page_token?}`, `{}`.
 */
function rpcParams(operation: string, data: unknown): unknown {
  if (operation === 'send_task')
    return isRecord(data) && isRecord(data.task) && !('id' in data) ? data : { task: data };
  if (operation === 'get_card') return {};
  if ((operation === 'cancel_task' || operation === 'get_task') && typeof data === 'string')
    return { task_id: data };
  return data ?? {};
}
