/** The client side: JSON-RPC unary calls on `/rpc` and incremental parsing of `/tasks/stream`. */
import type http from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import {
  InternalError,
  isFinalEvent,
  isRecord,
  UnavailableError,
  ValueError,
  type TaskEvent,
} from '@agent/core';
import { errorFromHttpResponse, openRequest, readText } from './client-request.js';
import { fromJsonRpcError, JSON_RPC_VERSION, STREAM_METHOD, type JsonRpcId } from './json-rpc.js';
import { ERROR_EVENT } from './sse-frames.js';

export interface ClientCallOptions {
  baseUrl: string;
  /** Route below the base URL: `/rpc` or `/tasks/stream`. */
  route: string;
  id: JsonRpcId;
  method: string;
  params: unknown;
  /** Called when the request is sent (a stream's on its first `next()`), so authentication stays lazy. */
  headers: () => Promise<Record<string, string>>;
  query?: Record<string, string>;
  agent: http.Agent;
  signal?: AbortSignal;
  timeoutMs: number;
  maxResponseBytes: number;
}

/** `baseUrl` + route, keeping the base path; only http and https are accepted. */
export function endpointUrl(baseUrl: string, route: string, query?: Record<string, string>): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ValueError(`Invalid base URL: ${baseUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValueError(`The SSE transport speaks http and https, not ${url.protocol.replace(/:$/, '')}`);
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${route}`;
  for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
  return url;
}

function requestBody(options: ClientCallOptions): string {
  return JSON.stringify({
    jsonrpc: JSON_RPC_VERSION,
    id: options.id,
    method: options.method,
    params: options.params,
  });
}

function malformed(what: string): InternalError {
  return new InternalError(`Malformed answer from the server: ${what}`);
}

/** Sends one JSON-RPC request and resolves with its `result`; a JSON-RPC error rejects with the typed error. */
export async function callRpc(options: ClientCallOptions): Promise<unknown> {
  const open = await openRequest({
    url: endpointUrl(options.baseUrl, options.route, options.query),
    method: 'POST',
    headers: { ...(await options.headers()), 'content-type': 'application/json', accept: 'application/json' },
    body: requestBody(options),
    agent: options.agent,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  try {
    const text = await readText(open, options.maxResponseBytes);
    const status = open.response.statusCode ?? 0;
    if (status !== 200) throw errorFromHttpResponse(status, text);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw malformed('the body is not JSON');
    }
    if (!isRecord(body)) throw malformed('the body is not a JSON-RPC response');
    if (body.error !== undefined) throw fromJsonRpcError(body.error);
    if (!('result' in body)) throw malformed('the response has neither result nor error');
    return body.result;
  } finally {
    open.settle();
  }
}

function decodeFrame(frame: EventSourceMessage): TaskEvent {
  let payload: unknown;
  try {
    payload = JSON.parse(frame.data);
  } catch {
    throw malformed(`frame ${frame.id ?? '?'} is not JSON`);
  }
  if (!isRecord(payload)) throw malformed(`frame ${frame.id ?? '?'} is not a JSON-RPC response`);
  if (frame.event === ERROR_EVENT || payload.error !== undefined) throw fromJsonRpcError(payload.error);
  const event = payload.result;
  if (!isRecord(event) || typeof event.type !== 'string' || typeof event.task_id !== 'string') {
    throw malformed(`frame ${frame.id ?? '?'} does not carry a TaskEvent`);
  }
  return event as unknown as TaskEvent;
}

/**
 * Opens `POST /tasks/stream` and yields TaskEvents as their frames arrive; ends after the final
 * status. Leaving the loop early, or aborting `signal`, closes the request.
 */
export async function* streamEvents(options: ClientCallOptions): AsyncGenerator<TaskEvent> {
  const open = await openRequest({
    url: endpointUrl(options.baseUrl, options.route, options.query),
    method: 'POST',
    headers: {
      ...(await options.headers()),
      'content-type': 'application/json',
      accept: 'text/event-stream',
    },
    body: requestBody({ ...options, method: STREAM_METHOD }),
    agent: options.agent,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const { response } = open;
  try {
    const status = response.statusCode ?? 0;
    const contentType = String(response.headers['content-type'] ?? '');
    if (status !== 200 || !contentType.startsWith('text/event-stream')) {
      const text = await readText(open, options.maxResponseBytes);
      if (status !== 200) throw errorFromHttpResponse(status, text);
      throw malformed(`expected text/event-stream, got ${contentType || 'no content type'}`);
    }
    // The deadline covers the wait for the stream to open; a task may then run as long as it needs.
    open.clearDeadline();
    response.setEncoding('utf8');
    const frames: EventSourceMessage[] = [];
    let failure: InternalError | undefined;
    const parser = createParser({
      onEvent: (frame) => frames.push(frame),
      onError: (error) => {
        // Unknown fields are ignored, as the SSE standard says; only an oversized frame is fatal.
        if (error.type === 'max-buffer-size-exceeded') failure ??= malformed(error.message);
      },
      maxBufferSize: options.maxResponseBytes,
    });
    try {
      for await (const chunk of response) {
        parser.feed(chunk as string);
        if (failure) throw failure;
        while (frames.length > 0) {
          open.throwIfAborted();
          const event = decodeFrame(frames.shift()!);
          yield event;
          if (isFinalEvent(event)) return;
        }
      }
    } catch (error) {
      throw open.explain(error);
    }
    throw new UnavailableError('The event stream ended before the final status');
  } finally {
    open.destroy();
  }
}
