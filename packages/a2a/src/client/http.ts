/**
 * The HTTP exchanges of the A2A client, on axios with keep-alive agents: one JSON request, or one
 * request answered by a `text/event-stream`. Every call carries `A2A-Version` and the
 * authorization headers; every failure comes back as an AgentError (a 401 as UNAUTHENTICATED, the
 * network as UNAVAILABLE, the deadline as DEADLINE_EXCEEDED, the caller's abort as TASK_CANCELED).
 */
import type { Readable } from 'node:stream';
import type { AxiosRequestConfig } from 'axios';
import {
  AgentError,
  InternalError,
  TaskCanceledError,
  UnauthenticatedError,
  errorClassFor,
  errorCodeForHttpStatus,
  type TlsOptions,
} from '@agent/core';
import { withTraceHeaders, type TraceOptions } from '@agent/core/internal';
import { EventStreamParser, SSE_CONTENT_TYPE, type SseFrame } from '@agent/server/node';
import { CallSignal, HttpSession } from '@agent/transport-http/internal';
import { A2A_PROTOCOL_VERSION } from '../protojson.js';

export interface A2AHttpOptions {
  timeoutMs: number;
  maxResponseBytes: number;
  tls?: TlsOptions | undefined;
  /** The authorization headers of the next call (authenticating lazily). */
  headers(): Promise<Record<string, string>>;
  /** A server answered 401: cached credentials must not be reused blindly. */
  onUnauthenticated(): void;
}

export interface CallOptions extends TraceOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
}

/** A JSON answer, whatever its status (A2A errors travel in 200 and 4xx/5xx bodies alike). */
export interface JsonAnswer {
  status: number;
  /** The parsed body; undefined when it was empty or not JSON. */
  body: unknown;
}

/** What a streaming request opened: the frames, or a JSON answer sent instead (an error before the stream). */
export type StreamAnswer =
  { kind: 'json'; answer: JsonAnswer } | { kind: 'frames'; frames: AsyncIterable<SseFrame> };

/** An error that came from the agent's own answer: the card and the connection are fine. */
const answered = new WeakSet<AgentError>();

/** Marks an error decoded from the agent's answer (an A2A error body). */
export function fromAnswer<T extends AgentError>(error: T): T {
  answered.add(error);
  return error;
}

/** True when the agent answered with this error: no reason to resolve its card again. */
export function isAgentAnswer(error: unknown): boolean {
  return error instanceof AgentError && answered.has(error);
}

export class A2AHttp {
  private readonly session: HttpSession;

  constructor(private readonly options: A2AHttpOptions) {
    this.session = new HttpSession({ maxResponseBytes: options.maxResponseBytes, tls: options.tls });
  }

  /** One request with a JSON answer; `timeoutMs` bounds it from connect to last byte. */
  async json(request: HttpRequest, options: CallOptions = {}): Promise<JsonAnswer> {
    const call = new CallSignal(options.timeoutMs ?? this.options.timeoutMs, options.signal);
    try {
      const response = await this.session.axios.request<string>({
        ...(await this.config(request, call, 'application/json, application/a2a+json', options)),
        responseType: 'text',
      });
      this.checkStatus(response.status, request.url);
      return { status: response.status, body: parseJson(response.data) };
    } catch (error) {
      throw this.session.failure(error, request.url, call);
    } finally {
      call.dispose();
    }
  }

  /**
   * A request answered by an event stream. `timeoutMs` bounds the wait for the answer to begin;
   * the stream then lasts as long as the task. Ending the iteration closes the connection.
   */
  async stream(request: HttpRequest, options: CallOptions = {}): Promise<StreamAnswer> {
    const call = new CallSignal(options.timeoutMs ?? this.options.timeoutMs, options.signal);
    let body: Readable;
    let contentType: string;
    try {
      const response = await this.session.axios.request<Readable>({
        ...(await this.config(request, call, `${SSE_CONTENT_TYPE}, application/json`, options)),
        responseType: 'stream',
      });
      call.endDeadline();
      body = response.data;
      contentType = String(response.headers['content-type'] ?? '').toLowerCase();
      if (response.status === 401) body.destroy();
      this.checkStatus(response.status, request.url);
      if (!contentType.startsWith(SSE_CONTENT_TYPE)) {
        const text = await this.session.readText(body, request.url);
        return { kind: 'json', answer: { status: response.status, body: parseJson(text) } };
      }
    } catch (error) {
      call.dispose();
      throw this.session.failure(error, request.url, call);
    }
    return { kind: 'frames', frames: this.frames(body, request.url, call, options.signal) };
  }

  /** Closes pooled connections; a later request opens new ones. */
  close(): void {
    this.session.close();
  }

  private async *frames(
    body: Readable,
    url: string,
    call: CallSignal,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<SseFrame> {
    const parser = new EventStreamParser(this.options.maxResponseBytes, url);
    const abandon = (): void => {
      body.destroy(new TaskCanceledError(`Request to ${url} was aborted by the caller`));
    };
    signal?.addEventListener('abort', abandon, { once: true });
    try {
      for await (const chunk of body) yield* parser.push(chunk as Buffer);
    } catch (error) {
      throw this.session.failure(error, url, call);
    } finally {
      signal?.removeEventListener('abort', abandon);
      call.dispose();
      if (!body.readableEnded) body.destroy();
    }
  }

  /** The request: `A2A-Version`, authorization, and the trace context (the call's own, else the active span's). */
  private async config(
    request: HttpRequest,
    call: CallSignal,
    accept: string,
    trace: TraceOptions,
  ): Promise<AxiosRequestConfig> {
    const headers: Record<string, string> = withTraceHeaders(
      { accept, ...(await this.options.headers()), 'A2A-Version': A2A_PROTOCOL_VERSION },
      trace,
    );
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    return {
      method: request.method,
      url: request.url,
      data: request.body === undefined ? undefined : JSON.stringify(request.body),
      headers,
      signal: call.signal,
    };
  }

  /** 401 is the authenticator's (before any A2A handling); other statuses are read by the binding. */
  private checkStatus(status: number, url: string): void {
    if (status !== 401) return;
    this.options.onUnauthenticated();
    throw Object.defineProperty(new UnauthenticatedError(`HTTP 401 Unauthorized from ${url}`), 'status', {
      value: 401,
      enumerable: true,
    });
  }
}

/** An HTTP status without an A2A error body: the error class of that status. */
export function statusError(status: number, url: string): AgentError {
  return new (errorClassFor(errorCodeForHttpStatus(status)))(`HTTP ${status} from ${url}`);
}

/** A success answer that is not the JSON the binding defines. */
export function malformed(url: string, what: string): InternalError {
  return new InternalError(`The A2A agent at ${url} answered ${what}`);
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
