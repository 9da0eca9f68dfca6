/**
 * One outgoing HTTP(S) request with a deadline and the caller's AbortSignal, and the mapping of
 * every failure (refused connection, TLS, abort, deadline, HTTP error status) to an AgentError.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import {
  AgentError,
  DeadlineExceededError,
  errorCodeForHttpStatus,
  PayloadTooLargeError,
  TaskCanceledError,
  UnauthenticatedError,
  UnavailableError,
} from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { fromJsonRpcError } from './codec.js';

export interface ClientRequest {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  agent: http.Agent;
  signal?: AbortSignal;
  /** The call fails with DeadlineExceededError unless `settle()` runs first; 0 = no deadline. */
  timeoutMs: number;
}

export interface OpenRequest {
  response: IncomingMessage;
  /** Ends the deadline; the caller's signal still aborts the request. */
  clearDeadline(): void;
  /** Ends the deadline and detaches from the caller's signal. */
  settle(): void;
  /** Throws the abort reason once the caller aborted (or the deadline passed). */
  throwIfAborted(): void;
  /** Tears the request down (a no-op once the response was read to its end). */
  destroy(): void;
  /**
   * The caller has all it wanted (a stream's final event): the rest of the body, the stream's end,
   * drains so the keep-alive socket goes back to the pool; torn down if it does not end within
   * {@link RELEASE_DRAIN_MS}.
   */
  release(): void;
  /** Turns whatever a read of the response threw into the AgentError that explains it. */
  explain(error: unknown): AgentError;
}

function callerAbort(reason: unknown): AgentError {
  return reason instanceof AgentError
    ? reason
    : new TaskCanceledError('The call was aborted by the caller', { cause: reason });
}

/** How long a released response may take to end before its socket is torn down instead of reused. */
export const RELEASE_DRAIN_MS = 2000;

/** Sends the request and resolves once the response headers arrived. */
export function openRequest(request: ClientRequest): Promise<OpenRequest> {
  const { url, signal } = request;
  if (signal?.aborted) return Promise.reject(callerAbort(signal.reason));
  const controller = new AbortController();
  const onCallerAbort = () => controller.abort(callerAbort(signal?.reason));
  signal?.addEventListener('abort', onCallerAbort, { once: true });
  const timer =
    request.timeoutMs > 0
      ? setTimeout(() => {
          controller.abort(
            new DeadlineExceededError(`No answer from ${url.origin} within ${request.timeoutMs} ms`),
          );
        }, request.timeoutMs)
      : undefined;
  const clearDeadline = () => clearTimeout(timer);
  const settle = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onCallerAbort);
  };
  const throwIfAborted = () => {
    if (controller.signal.aborted) throw AgentError.from(controller.signal.reason);
  };
  const explain = (error: unknown): AgentError => {
    if (controller.signal.aborted) return AgentError.from(controller.signal.reason);
    if (error instanceof AgentError) return error;
    const detail = error instanceof Error ? error.message : String(error);
    return new UnavailableError(`Request to ${url.origin} failed: ${detail}`, { cause: error });
  };

  const lib = url.protocol === 'https:' ? https : http;
  const req = lib.request(url, {
    method: request.method,
    headers: request.headers,
    agent: request.agent,
    signal: controller.signal,
  });
  return new Promise((resolve, reject) => {
    req.once('response', (response) => {
      resolve({
        response,
        clearDeadline,
        settle,
        throwIfAborted,
        explain,
        destroy: () => {
          settle();
          if (!response.complete) req.destroy();
        },
        release: () => {
          settle();
          if (response.complete) return;
          const teardown = setTimeout(() => req.destroy(), RELEASE_DRAIN_MS);
          teardown.unref();
          response.once('close', () => clearTimeout(teardown));
          response.resume();
        },
      });
    });
    req.once('error', (error) => {
      settle();
      reject(explain(error));
    });
    req.end(request.body);
  });
}

/** Reads a response body as text, refusing more than `maxBytes`. */
export async function readText(open: OpenRequest, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of open.response) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > maxBytes) {
        open.destroy();
        throw new PayloadTooLargeError(`The response exceeds maxResponseBytes (${maxBytes} bytes)`);
      }
      chunks.push(buffer);
    }
  } catch (error) {
    throw open.explain(error);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/**
 * The typed error of a non-success HTTP answer: the JSON error body `{"error": {code, message, data?}}`,
 * a JSON-RPC error object, or else the table entry for the status. A 401 is always UnauthenticatedError.
 */
export function errorFromHttpResponse(status: number, text: string): AgentError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  let error: AgentError | undefined;
  if (isRecord(body) && isRecord(body.error)) {
    error =
      typeof body.error.code === 'number' ? fromJsonRpcError(body.error) : AgentError.fromJSON(body.error);
  }
  if (status === 401 && error?.code !== 'UNAUTHENTICATED') {
    return new UnauthenticatedError(error?.message ?? 'The server rejected the credentials (HTTP 401)', {
      data: { status },
    });
  }
  if (error) return error;
  const snippet = text.trim().slice(0, 200);
  return AgentError.fromJSON({
    code: errorCodeForHttpStatus(status),
    message: `HTTP ${status}${snippet ? `: ${snippet}` : ''}`,
  });
}
