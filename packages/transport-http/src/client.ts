import type { Readable } from 'node:stream';
import type { AxiosRequestConfig, AxiosResponse } from 'axios';
import {
  AgentError,
  InternalError,
  TaskCanceledError,
  UnavailableError,
  errorClassFor,
  errorCodeForHttpStatus,
  isFinalEvent,
  type ClientRequestSpec,
  type TaskEvent,
  type TlsOptions,
} from '@agent/core';
import { isRecord, withRetryAfterHeader, withTraceHeaders, type TraceOptions } from '@agent/core/internal';
import { SSE_CONTENT_TYPE } from '@agent/server/node';
import { callTarget } from './call-target.js';
import { EventDecoder } from './codec.js';
import { CallSignal, HttpSession } from './http-session.js';

/** An AgentError rebuilt from an HTTP error response; `status` is the HTTP status received. */
export type HttpResponseError = AgentError & { readonly status: number };

export interface HttpClientOptions {
  timeoutMs: number;
  /** Responses (success, error or one stream event) above this many bytes are refused with PAYLOAD_TOO_LARGE. */
  maxResponseBytes: number;
  tls?: TlsOptions | undefined;
  /** Headers added to every request (authentication, the tenant), resolved per call. */
  headers(): Promise<Record<string, string>>;
  /** Called when a server answered 401, so cached credentials are not reused blindly. */
  onUnauthenticated(): void;
}

export interface RequestOptions extends TraceOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

export interface StreamOptions extends RequestOptions {
  /**
   * Makes the stream a subscription from this sequence: sent as `Last-Event-ID` unless 0, and an
   * answer without events is complete (the task finished at or before it).
   */
  after?: number | undefined;
}

/**
 * The client side of HTTPTransport, on axios with keep-alive agents. Every failure comes back as
 * an AgentError: error bodies are turned back into their typed class, network failures become
 * UNAVAILABLE, the deadline DEADLINE_EXCEEDED, a caller's abort TASK_CANCELED.
 */
export class HttpClient {
  private readonly session: HttpSession;

  constructor(private readonly options: HttpClientOptions) {
    this.session = new HttpSession({ maxResponseBytes: options.maxResponseBytes, tls: options.tls });
  }

  /** One call; `timeoutMs` bounds it from connect to last byte. */
  async request<TResult>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options: RequestOptions = {},
  ): Promise<TResult> {
    const { url, body } = callTarget(spec, baseUrl, data, params);
    const call = new CallSignal(options.timeoutMs ?? this.options.timeoutMs, options.signal);
    let response: AxiosResponse<string>;
    try {
      response = await this.session.axios.request<string>(await this.config(spec, url, body, call, options));
    } catch (error) {
      throw this.session.failure(error, url, call);
    } finally {
      call.dispose();
    }
    if (response.status >= 400)
      throw this.responseError(response.status, response.statusText, response.data, url, response.headers);
    try {
      return JSON.parse(response.data) as TResult;
    } catch (error) {
      throw new InternalError(`Malformed JSON in the response from ${url}`, { cause: error });
    }
  }

  /**
   * A streaming call: the events as they arrive, ending with the final status. `timeoutMs` bounds
   * the wait for the stream to open; a task may then run as long as it needs. Stopping the
   * iteration closes the connection, which the server does not take as a cancel.
   */
  async *stream(
    spec: ClientRequestSpec,
    baseUrl: string,
    data: unknown,
    options: StreamOptions = {},
  ): AsyncGenerator<TaskEvent> {
    const target = callTarget(spec, baseUrl, data);
    const url = target.url;
    const call = new CallSignal(options.timeoutMs ?? this.options.timeoutMs, options.signal);
    const subscription = options.after !== undefined;
    let body: Readable;
    try {
      const config = await this.config(spec, url, target.body, call, options);
      config.responseType = 'stream';
      config.headers = { ...config.headers, accept: SSE_CONTENT_TYPE };
      if (subscription && options.after !== 0) config.headers['last-event-id'] = String(options.after);
      const response = await this.session.axios.request<Readable>(config);
      body = response.data;
      call.endDeadline();
      if (response.status >= 400) {
        const text = await this.session.readText(body, url);
        throw this.responseError(response.status, response.statusText, text, url, response.headers);
      }
      const contentType = String(response.headers['content-type'] ?? '').toLowerCase();
      if (!contentType.startsWith(SSE_CONTENT_TYPE)) {
        body.destroy();
        throw new InternalError(
          `The stream from ${url} is not ${SSE_CONTENT_TYPE} (got ${contentType || 'no content type'})`,
        );
      }
    } catch (error) {
      call.dispose();
      throw this.session.failure(error, url, call);
    }
    const decoder = new EventDecoder(this.options.maxResponseBytes, url);
    const abandon = (): void => {
      body.destroy(new TaskCanceledError(`Request to ${url} was aborted by the caller`));
    };
    options.signal?.addEventListener('abort', abandon, { once: true });
    let final = false;
    let received = 0;
    try {
      for await (const chunk of body) {
        for (const event of decoder.push(chunk as Buffer)) {
          final ||= isFinalEvent(event);
          received++;
          yield event;
        }
      }
    } catch (error) {
      throw this.session.failure(error, url, call);
    } finally {
      options.signal?.removeEventListener('abort', abandon);
      call.dispose();
      if (!body.readableEnded) body.destroy();
    }
    if (final || (subscription && received === 0)) return;
    throw new UnavailableError(`The stream from ${url} ended before its final status`);
  }

  /** Closes pooled connections; a later request opens new ones. */
  close(): void {
    this.session.close();
  }

  /**
   * `body`: what {@link callTarget} made of the call's data (undefined for GET and DELETE); `trace`:
   * the call's own `traceparent`, else the active OpenTelemetry span's, goes with every request.
   */
  private async config(
    spec: ClientRequestSpec,
    url: string,
    body: unknown,
    call: CallSignal,
    trace: TraceOptions,
  ): Promise<AxiosRequestConfig> {
    const headers = await this.options.headers();
    return {
      method: spec.method,
      url,
      data: body,
      headers: withTraceHeaders({ accept: 'application/json', ...headers }, trace),
      signal: call.signal,
    };
  }

  /**
   * Rebuilds the typed error of an error response; a body that is not ours maps by status. A
   * `Retry-After` header becomes `data.retry_after_ms` when the body did not say it (a proxy's bare
   * 429 or 503), so a client's retries wait as long as the server asked.
   */
  private responseError(
    status: number,
    statusText: string,
    text: string,
    url: string,
    headers: { [name: string]: unknown },
  ): HttpResponseError {
    if (status === 401) this.options.onUnauthenticated();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const wire = isRecord(body) && isRecord(body.error) ? body.error : undefined;
    const error =
      wire && typeof wire.code === 'string'
        ? AgentError.fromJSON(wire)
        : new (errorClassFor(errorCodeForHttpStatus(status)))(
            `HTTP ${status}${statusText ? ` ${statusText}` : ''} from ${url}`,
          );
    withRetryAfterHeader(error, headers['retry-after']);
    Object.defineProperty(error, 'status', { value: status, enumerable: true });
    return error as HttpResponseError;
  }
}
