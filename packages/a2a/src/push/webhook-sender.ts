import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import axios, { type AxiosInstance } from 'axios';
import type { PushConfig } from './push-config.js';
import { BlockedAddressError, guardedLookup, type ResolveHost } from './ssrf.js';

export const PUSH_CONTENT_TYPE = 'application/a2a+json';
export const NOTIFICATION_TOKEN_HEADER = 'X-A2A-Notification-Token';
/** A receiver's answer body is read up to this many bytes (so the connection can be reused), then cut. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** What one POST came to. */
export interface SendResult {
  ok: boolean;
  status?: number;
  /** A short description of a failure; never carries a header value. */
  error?: string;
  /** Whether another attempt may succeed: network errors, 408, 429, 5xx. */
  retryable: boolean;
  /** The receiver's Retry-After, in ms, when it sent one we can read. */
  retryAfterMs?: number;
}

export interface WebhookSenderOptions {
  timeoutMs: number;
  /** Refuse connections to non-public addresses (checked on every connect). */
  guard: boolean;
  resolve: ResolveHost;
}

/**
 * Sends one push POST. Redirects are not followed (a redirect could lead past the address check),
 * proxies from the environment are not used (the proxy would connect on our behalf), and the answer
 * body is discarded after at most 64 KiB.
 */
export class WebhookSender {
  private readonly httpAgent = new HttpAgent({ keepAlive: true });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true });
  private readonly http: AxiosInstance;

  constructor(private readonly options: WebhookSenderOptions) {
    this.http = axios.create({
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      maxRedirects: 0,
      proxy: false,
      timeout: options.timeoutMs,
      responseType: 'stream',
      decompress: false,
      validateStatus: () => true,
      maxBodyLength: Infinity,
      ...(options.guard ? { lookup: guardedLookup(options.resolve) } : {}),
    });
  }

  /** One POST of `body`; never throws. `closing` aborts it early (the notifier is closing). */
  async send(config: PushConfig, body: string, closing: AbortSignal): Promise<SendResult> {
    const headers: Record<string, string> = { 'Content-Type': PUSH_CONTENT_TYPE };
    if (config.token !== undefined) headers[NOTIFICATION_TOKEN_HEADER] = config.token;
    const auth = config.authentication;
    if (auth?.credentials !== undefined) headers.Authorization = `${auth.scheme} ${auth.credentials}`;
    // axios's own timeout is per socket inactivity; this deadline bounds the whole exchange.
    const controller = new AbortController();
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.options.timeoutMs);
    deadline.unref();
    const onClosing = (): void => controller.abort();
    closing.addEventListener('abort', onClosing, { once: true });
    try {
      if (closing.aborted) controller.abort();
      const response = await this.http.post<Readable>(config.url, body, {
        headers,
        signal: controller.signal,
      });
      discard(response.data, this.options.timeoutMs);
      const status = response.status;
      if (status >= 200 && status < 300) return { ok: true, status, retryable: false };
      const result: SendResult = {
        ok: false,
        status,
        error: `HTTP ${status}`,
        retryable: isRetryableStatus(status),
      };
      const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
      if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
      return result;
    } catch (error) {
      if (timedOut)
        return { ok: false, error: `no answer within ${this.options.timeoutMs} ms`, retryable: true };
      if (closing.aborted)
        return { ok: false, error: 'aborted: the push notifier is closing', retryable: false };
      return { ok: false, error: describe(error, this.options.timeoutMs), retryable: !isBlocked(error) };
    } finally {
      clearTimeout(deadline);
      closing.removeEventListener('abort', onClosing);
    }
  }

  /** Closes kept-alive sockets so nothing holds the process open. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Retry-After as delay-seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: unknown, now = Date.now()): number | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Reads and drops the answer so a kept-alive socket can serve the next POST. An answer that is too
 * large or too slow closes the connection instead; the attempt's outcome is already known.
 */
function discard(stream: Readable, timeoutMs: number): void {
  let seen = 0;
  const timer = setTimeout(() => stream.destroy(), timeoutMs);
  timer.unref();
  stream.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > MAX_RESPONSE_BYTES) stream.destroy();
  });
  stream.on('close', () => clearTimeout(timer));
  stream.on('error', () => undefined);
}

function errorCause(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
}

function isBlocked(error: unknown): boolean {
  return (
    error instanceof BlockedAddressError ||
    errorCause(error) instanceof BlockedAddressError ||
    (typeof error === 'object' &&
      error !== null &&
      (error as { code?: unknown }).code === 'ERR_PUSH_ADDRESS_REFUSED')
  );
}

/** A failure in a few words: axios messages name the host and port, never request headers. */
function describe(error: unknown, timeoutMs: number): string {
  if (isBlocked(error)) return 'refused: webhook host resolves to a non-public address';
  if (axios.isAxiosError(error)) {
    if (error.code === 'ECONNABORTED' || error.code === 'ETIMEDOUT')
      return `no answer within ${timeoutMs} ms`;
    return error.code ? `${error.code}: ${error.message}` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
