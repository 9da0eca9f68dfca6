/**
 * The two A2A 1.0 HTTP bindings, behind one interface: an A2A method with its ProtoJSON request
 * (`tenant` excluded) in, the `result` (unary) or the StreamResponses (streaming) out. JSON-RPC posts
 * envelopes to the interface URL; HTTP+JSON maps each method to its REST route, the tenant becoming
 * the `/{tenant}` path prefix.
 */
import { InternalError } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { fromA2AError } from '../a2a-errors.js';
import {
  fromAnswer,
  malformed,
  statusError,
  type A2AHttp,
  type CallOptions,
  type HttpRequest,
  type JsonAnswer,
} from './http.js';
import type { SseFrame } from '@agent/server/node';

export type A2ABinding = 'JSONRPC' | 'HTTP+JSON';
export const A2A_BINDINGS: readonly A2ABinding[] = ['JSONRPC', 'HTTP+JSON'];

export type UnaryMethod = 'SendMessage' | 'GetTask' | 'ListTasks' | 'CancelTask';
export type StreamMethod = 'SendStreamingMessage' | 'SubscribeToTask';

/** The interface a call goes to, from the agent card. */
export interface A2AEndpoint {
  binding: A2ABinding;
  url: string;
  /** Echoed on every request; absent when the interface (and the options) set none. */
  tenant?: string;
}

export interface BindingClient {
  call(
    endpoint: A2AEndpoint,
    method: UnaryMethod,
    request: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<unknown>;
  /** The StreamResponses; the first `next()` rejects when the agent refused before streaming. */
  stream(
    endpoint: A2AEndpoint,
    method: StreamMethod,
    request: Record<string, unknown>,
    options?: CallOptions,
  ): AsyncGenerator<unknown>;
}

export function bindingClient(binding: A2ABinding, http: A2AHttp): BindingClient {
  return binding === 'JSONRPC' ? new JsonRpcBinding(http) : new RestBinding(http);
}

/** JSON-RPC 2.0: envelopes with increasing ids; errors travel as `error` objects (with HTTP 200). */
class JsonRpcBinding implements BindingClient {
  private nextId = 1;

  constructor(private readonly http: A2AHttp) {}

  async call(
    endpoint: A2AEndpoint,
    method: UnaryMethod,
    request: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<unknown> {
    const id = this.nextId++;
    const answer = await this.http.json(this.envelope(endpoint, method, request, id), options);
    return this.result(answer.body, id, endpoint.url, answer.status);
  }

  async *stream(
    endpoint: A2AEndpoint,
    method: StreamMethod,
    request: Record<string, unknown>,
    options?: CallOptions,
  ): AsyncGenerator<unknown> {
    const id = this.nextId++;
    const opened = await this.http.stream(this.envelope(endpoint, method, request, id), options);
    if (opened.kind === 'json') {
      // An agent refuses before streaming with a plain JSON-RPC answer instead of the stream.
      yield this.result(opened.answer.body, id, endpoint.url, opened.answer.status);
      return;
    }
    for await (const frame of opened.frames)
      yield this.result(frameJson(frame, endpoint.url), id, endpoint.url);
  }

  private envelope(
    endpoint: A2AEndpoint,
    method: string,
    request: Record<string, unknown>,
    id: number,
  ): HttpRequest {
    const params = endpoint.tenant === undefined ? request : { tenant: endpoint.tenant, ...request };
    return { method: 'POST', url: endpoint.url, body: { jsonrpc: '2.0', id, method, params } };
  }

  /** The `result` of a response envelope, or its error as a typed AgentError. */
  private result(body: unknown, id: number, url: string, status?: number): unknown {
    if (!isRecord(body)) {
      throw status !== undefined && status >= 400
        ? statusError(status, url)
        : malformed(url, 'without a JSON-RPC response');
    }
    if (isRecord(body.error)) throw fromAnswer(fromA2AError(body.error, status));
    // A response to another request would be another call's answer: never take it for this one.
    if (body.id !== id)
      throw malformed(url, `a JSON-RPC response with id ${JSON.stringify(body.id)} to request ${id}`);
    if (!('result' in body)) throw malformed(url, 'a JSON-RPC response without a result');
    return body.result;
  }
}

/** HTTP+JSON: one route per method; errors are `google.rpc.Status` bodies with an HTTP error status. */
class RestBinding implements BindingClient {
  constructor(private readonly http: A2AHttp) {}

  async call(
    endpoint: A2AEndpoint,
    method: UnaryMethod,
    request: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<unknown> {
    const target = restRequest(endpoint, method, request);
    return this.result(await this.http.json(target, options), target.url);
  }

  async *stream(
    endpoint: A2AEndpoint,
    method: StreamMethod,
    request: Record<string, unknown>,
    options?: CallOptions,
  ): AsyncGenerator<unknown> {
    const target = restRequest(endpoint, method, request);
    const opened = await this.http.stream(target, options);
    if (opened.kind === 'json') {
      const result = this.result(opened.answer, target.url);
      // A 2xx JSON answer to a stream request: the agent answered without streaming.
      yield result;
      return;
    }
    for await (const frame of opened.frames) {
      const json = frameJson(frame, target.url);
      if (frame.event === 'error' || (isRecord(json) && isRecord(json.error)))
        throw fromAnswer(fromA2AError(json));
      yield json;
    }
  }

  private result(answer: JsonAnswer, url: string): unknown {
    if (answer.status >= 400) {
      if (isRecord(answer.body) && isRecord(answer.body.error))
        throw fromAnswer(fromA2AError(answer.body, answer.status));
      throw statusError(answer.status, url);
    }
    if (!isRecord(answer.body)) throw malformed(url, 'without a JSON object');
    return answer.body;
  }
}

/** The method's REST route below the interface URL (and the tenant prefix), with its query or body. */
function restRequest(
  endpoint: A2AEndpoint,
  method: UnaryMethod | StreamMethod,
  request: Record<string, unknown>,
): HttpRequest {
  const base =
    endpoint.url.replace(/\/+$/, '') +
    (endpoint.tenant === undefined ? '' : `/${encodeURIComponent(endpoint.tenant)}`);
  const { id, ...rest } = request;
  const task = `${base}/tasks/${encodeURIComponent(String(id))}`;
  switch (method) {
    case 'SendMessage':
      return { method: 'POST', url: `${base}/message:send`, body: request };
    case 'SendStreamingMessage':
      return { method: 'POST', url: `${base}/message:stream`, body: request };
    case 'GetTask':
      return { method: 'GET', url: task + query(rest) };
    case 'ListTasks':
      return { method: 'GET', url: `${base}/tasks${query(request)}` };
    case 'CancelTask':
      return { method: 'POST', url: `${task}:cancel`, body: rest };
    case 'SubscribeToTask':
      return { method: 'GET', url: `${task}:subscribe` };
  }
}

function query(values: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** The JSON of one stream frame; an `event: error` frame is the agent's error. */
function frameJson(frame: SseFrame, url: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(frame.data);
  } catch (error) {
    throw new InternalError(`Malformed JSON in a stream frame from ${url}`, { cause: error });
  }
  if (frame.event === 'error' && isRecord(json) && !isRecord(json.error)) {
    throw fromAnswer(fromA2AError({ error: json }));
  }
  return json;
}

export function isBinding(value: unknown): value is A2ABinding {
  return value === 'JSONRPC' || value === 'HTTP+JSON';
}
