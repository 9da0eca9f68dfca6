import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import axios, { type AxiosInstance, type AxiosResponse } from 'axios';
import {
  AgentError,
  DeadlineExceededError,
  InternalError,
  PayloadTooLargeError,
  TaskCanceledError,
  UnavailableError,
  ValueError,
  errorClassFor,
  errorCodeForHttpStatus,
  isRecord,
  type ClientRequestSpec,
  type TlsOptions,
} from '@agent/core';

/** An AgentError rebuilt from an HTTP error response; `status` is the HTTP status received. */
export type HttpResponseError = AgentError & { readonly status: number };

export interface HttpClientOptions {
  timeoutMs: number;
  /** Responses (success or error) above this many bytes are refused with PAYLOAD_TOO_LARGE. */
  maxResponseBytes: number;
  tls?: TlsOptions;
  /** Headers added to every request (authentication), resolved per call. */
  headers(): Promise<Record<string, string>>;
  /** Called when a server answered 401, so cached credentials are not reused blindly. */
  onUnauthenticated(): void;
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * The outgoing side of HTTPTransport, on axios with keep-alive agents. Every failure comes back as
 * an AgentError: error bodies are turned back into their typed class, network failures become
 * UNAVAILABLE, the deadline DEADLINE_EXCEEDED, a caller's abort TASK_CANCELED.
 */
export class HttpClient {
  private instance: AxiosInstance | undefined;
  private httpAgent: HttpAgent | undefined;
  private httpsAgent: HttpsAgent | undefined;

  constructor(private readonly options: HttpClientOptions) {}

  async request<TResult>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options: RequestOptions = {},
  ): Promise<TResult> {
    const url = joinUrl(baseUrl, spec.path);
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const deadline = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
    const signals = [options.signal, deadline].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    let response: AxiosResponse<string>;
    try {
      const headers = await this.options.headers();
      response = await this.client().request<string>({
        method: spec.method,
        url,
        params,
        data: spec.method === 'POST' ? (data ?? {}) : undefined,
        headers: { accept: 'application/json', ...headers },
        signal,
      });
    } catch (error) {
      if (error instanceof AgentError) throw error;
      if (options.signal?.aborted)
        throw new TaskCanceledError(`Request to ${url} was aborted by the caller`, { cause: error });
      if (deadline?.aborted)
        throw new DeadlineExceededError(`Request to ${url} timed out after ${timeoutMs} ms`, {
          cause: error,
        });
      if (isOverflow(error)) {
        const max = this.options.maxResponseBytes;
        throw new PayloadTooLargeError(`The response from ${url} exceeds maxResponseBytes (${max} bytes)`, {
          cause: error,
          data: { max_response_bytes: max },
        });
      }
      const code = (error as { code?: unknown }).code;
      const reason = typeof code === 'string' ? code : (error as Error).message;
      throw new UnavailableError(`Request to ${url} failed: ${reason}`, {
        cause: error,
        data: typeof code === 'string' ? { code } : undefined,
      });
    }
    if (response.status >= 400) {
      if (response.status === 401) this.options.onUnauthenticated();
      throw responseError(response, url);
    }
    try {
      return JSON.parse(response.data) as TResult;
    } catch (error) {
      throw new InternalError(`Malformed JSON in the response from ${url}`, { cause: error });
    }
  }

  /** Closes pooled connections; a later request opens new ones. */
  close(): void {
    this.httpAgent?.destroy();
    this.httpsAgent?.destroy();
    this.httpAgent = undefined;
    this.httpsAgent = undefined;
    this.instance = undefined;
  }

  private client(): AxiosInstance {
    if (this.instance) return this.instance;
    const tls = this.options.tls;
    this.httpAgent = new HttpAgent({ keepAlive: true });
    this.httpsAgent = new HttpsAgent({
      keepAlive: true,
      ca: tls?.ca,
      cert: tls?.cert,
      key: tls?.key,
      rejectUnauthorized: tls?.rejectUnauthorized !== false,
      servername: tls?.servername,
    });
    this.instance = axios.create({
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      // Bodies are parsed here so that a non-JSON error page still gives a typed error.
      responseType: 'text',
      transformResponse: [(body: unknown) => body],
      validateStatus: () => true,
      maxRedirects: 0,
      // The server enforces its own body limit and answers 413; do not refuse before sending.
      maxBodyLength: Infinity,
      // A peer must not be able to make us buffer an unbounded answer (axios stops reading here).
      maxContentLength: this.options.maxResponseBytes,
      proxy: false,
    });
    return this.instance;
  }
}

/**
 * axios reports a response over `maxContentLength` as ERR_BAD_RESPONSE with this message (its
 * http adapter has no dedicated code). A limit set above node's longest string (~512 MiB) meets
 * ERR_STRING_TOO_LONG first, which is the same condition.
 */
function isOverflow(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === 'ERR_STRING_TOO_LONG') return true;
  return (
    code === 'ERR_BAD_RESPONSE' && typeof message === 'string' && /maxContentLength size of/.test(message)
  );
}

function joinUrl(baseUrl: string, path: string): string {
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new ValueError(`Invalid base URL: ${baseUrl}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ValueError(`HTTPTransport sends to http(s) URLs only, got ${baseUrl}`);
  }
  return baseUrl.replace(/\/+$/, '') + path;
}

/** Rebuilds the typed error of an error response; a body that is not ours maps by status. */
function responseError(response: AxiosResponse<string>, url: string): HttpResponseError {
  let body: unknown;
  try {
    body = JSON.parse(response.data);
  } catch {
    body = undefined;
  }
  const wire = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const error =
    wire && typeof wire.code === 'string'
      ? AgentError.fromJSON(wire)
      : new (errorClassFor(errorCodeForHttpStatus(response.status)))(
          `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} from ${url}`,
        );
  Object.defineProperty(error, 'status', { value: response.status, enumerable: true });
  return error as HttpResponseError;
}
