/**
 * What every axios-based client of this family shares (the HTTP transport's and the A2A client's):
 * keep-alive agents closed together, one axios instance that never buffers past `maxResponseBytes`,
 * a call's deadline joined with its caller's signal, bounded reading of a body, and one mapping of
 * a failed call to an AgentError.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import axios, { type AxiosInstance } from 'axios';
import {
  AgentError,
  DeadlineExceededError,
  PayloadTooLargeError,
  TaskCanceledError,
  UnavailableError,
  type TlsOptions,
} from '@agent/core';

export interface HttpSessionOptions {
  /** Answers (a body, one stream event) above this many bytes are refused with PAYLOAD_TOO_LARGE. */
  maxResponseBytes: number;
  tls?: TlsOptions | undefined;
}

export class HttpSession {
  private instance: AxiosInstance | undefined;
  private httpAgent: HttpAgent | undefined;
  private httpsAgent: HttpsAgent | undefined;

  constructor(private readonly options: HttpSessionOptions) {}

  get maxResponseBytes(): number {
    return this.options.maxResponseBytes;
  }

  /** The axios instance, created on first use: statuses are never thrown, bodies stay text. */
  get axios(): AxiosInstance {
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
      // Bodies are parsed by the caller so that a non-JSON error page still gives a typed error.
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

  /** What a failed call becomes: the caller's abort, the deadline, an oversized answer, or the network. */
  failure(error: unknown, url: string, call: CallSignal): AgentError {
    if (error instanceof AgentError) return error;
    if (call.callerAborted) {
      return new TaskCanceledError(`Request to ${url} was aborted by the caller`, { cause: error });
    }
    if (call.deadlinePassed) {
      return new DeadlineExceededError(`Request to ${url} timed out after ${call.timeoutMs} ms`, {
        cause: error,
      });
    }
    if (isOverflow(error)) return this.tooLarge(url, error);
    const code = (error as { code?: unknown }).code;
    const reason = typeof code === 'string' ? code : (error as Error).message;
    return new UnavailableError(`Request to ${url} failed: ${reason}`, {
      cause: error,
      data: typeof code === 'string' ? { code } : undefined,
    });
  }

  /** Reads a (small) non-stream body, refusing it past `maxResponseBytes`. */
  async readText(body: Readable, url: string): Promise<string> {
    const max = this.options.maxResponseBytes;
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > max) {
        body.destroy();
        throw this.tooLarge(url);
      }
      parts.push(chunk as Buffer);
    }
    return Buffer.concat(parts, size).toString('utf8');
  }

  /** Closes pooled connections; a later request opens new ones. */
  close(): void {
    this.httpAgent?.destroy();
    this.httpsAgent?.destroy();
    this.httpAgent = undefined;
    this.httpsAgent = undefined;
    this.instance = undefined;
  }

  private tooLarge(url: string, cause?: unknown): PayloadTooLargeError {
    const max = this.options.maxResponseBytes;
    return new PayloadTooLargeError(`The response from ${url} exceeds maxResponseBytes (${max} bytes)`, {
      ...(cause === undefined ? {} : { cause }),
      data: { max_response_bytes: max },
    });
  }
}

/** The caller's signal and the call's deadline (0 = none) as one signal, with a deadline that can end. */
export class CallSignal {
  readonly signal: AbortSignal | undefined;
  private readonly deadline: AbortController | undefined;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    readonly timeoutMs: number,
    private readonly caller: AbortSignal | undefined,
  ) {
    if (timeoutMs > 0) {
      const deadline = new AbortController();
      this.deadline = deadline;
      this.timer = setTimeout(() => deadline.abort(), timeoutMs);
    }
    const signals = [caller, this.deadline?.signal].filter((s): s is AbortSignal => s !== undefined);
    this.signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  }

  get callerAborted(): boolean {
    return this.caller?.aborted === true;
  }

  get deadlinePassed(): boolean {
    return this.deadline?.signal.aborted === true;
  }

  /** The answer has begun: from here only the caller's signal ends the call. */
  endDeadline(): void {
    clearTimeout(this.timer);
  }

  dispose(): void {
    clearTimeout(this.timer);
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
