import {
  AgentError,
  DeadlineExceededError,
  errorClassFor,
  errorCodeForHttpStatus,
  InternalError,
  newId,
  PayloadTooLargeError,
  UnavailableError,
  type TaskEvent,
  type TlsOptions,
} from '@agent/core';
import { isRecord, ReleasingMap } from '@agent/core/internal';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import {
  frameText,
  parseResponseFrame,
  type CallFrame,
  type ResponseFrame,
  type ResultFrame,
} from './codec.js';
import { startKeepalive } from './keepalive.js';

export interface ClientConnectionOptions {
  /** Full socket URL, path included. */
  url: string;
  headers: Record<string, string>;
  tls?: TlsOptions;
  pingIntervalMs: number;
  /** Outgoing frames above this many bytes are refused locally. */
  maxBodyBytes: number;
  handshakeTimeoutMs: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** No deadline when undefined or 0. */
  timeoutMs?: number;
  onEvent?: (event: TaskEvent) => void;
}

/** A call frame as a caller hands it over: the connection picks its `id`. */
export type OutgoingFrame = CallFrame extends infer F ? (F extends CallFrame ? Omit<F, 'id'> : never) : never;

interface PendingCall {
  onEvent?: (event: TaskEvent) => void;
  settle(error: AgentError | undefined, frame?: ResultFrame): void;
}

/** One client socket (data or control) with many calls in flight, matched by request id. */
export class ClientConnection {
  /** A call's answer hangs off its entry: deleted, it must die young (ReleasingMap). */
  private readonly calls = new ReleasingMap<string, PendingCall>();
  private closeListeners: Array<() => void> = [];

  private constructor(
    private readonly socket: WebSocket,
    private readonly options: ClientConnectionOptions,
  ) {
    socket.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    socket.once('close', (code) => this.onClose(code));
    startKeepalive(socket, options.pingIntervalMs);
  }

  /** Opens the socket; a refused handshake rejects with the server's typed error (401 → UnauthenticatedError). */
  static open(options: ClientConnectionOptions): Promise<ClientConnection> {
    const { tls } = options;
    const socket = new WebSocket(options.url, {
      headers: options.headers,
      handshakeTimeout: options.handshakeTimeoutMs,
      ...(tls?.ca !== undefined ? { ca: tls.ca } : {}),
      ...(tls?.cert !== undefined ? { cert: tls.cert } : {}),
      ...(tls?.key !== undefined ? { key: tls.key } : {}),
      ...(tls?.servername !== undefined ? { servername: tls.servername } : {}),
      rejectUnauthorized: tls?.rejectUnauthorized !== false,
    });
    // ws emits 'close' after every 'error'; failures are reported through the open promise or the calls.
    socket.on('error', () => undefined);
    return new Promise<ClientConnection>((resolve, reject) => {
      socket.once('open', () => resolve(new ClientConnection(socket, options)));
      socket.once('unexpected-response', (_req, res: IncomingMessage) => {
        void readHandshakeError(res).then((error) => {
          reject(error);
          socket.terminate();
        });
      });
      socket.once('error', (error) =>
        reject(new UnavailableError(`Cannot connect to ${options.url}: ${error.message}`, { cause: error })),
      );
    });
  }

  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  onceClosed(listener: () => void): void {
    if (!this.isOpen) listener();
    else this.closeListeners.push(listener);
  }

  /** Sends one request and resolves with its `result` frame; `event` frames go to `onEvent`. */
  call(frame: OutgoingFrame, options: CallOptions = {}): { id: string; result: Promise<ResultFrame> } {
    const id = newId();
    const result = new Promise<ResultFrame>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => {
        this.abortCall(id, AgentError.from(options.signal?.reason));
      };
      const pending: PendingCall = {
        ...(options.onEvent ? { onEvent: options.onEvent } : {}),
        settle: (error, resultFrame) => {
          this.calls.delete(id);
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          if (error) reject(error);
          else resolve(resultFrame!);
        },
      };
      if (options.signal?.aborted) return reject(AgentError.from(options.signal.reason));
      if (!this.isOpen) return reject(new UnavailableError('WebSocket connection is closed'));
      const text = JSON.stringify({ ...frame, id });
      if (Buffer.byteLength(text) > this.options.maxBodyBytes) {
        return reject(
          new PayloadTooLargeError(`Request frame exceeds maxBodyBytes (${this.options.maxBodyBytes} bytes)`),
        );
      }
      this.calls.set(id, pending);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.timeoutMs !== undefined && options.timeoutMs > 0) {
        timer = setTimeout(
          () => this.abortCall(id, new DeadlineExceededError(`No answer within ${options.timeoutMs} ms`)),
          options.timeoutMs,
        );
      }
      this.socket.send(text, (error) => {
        if (error)
          this.calls.get(id)?.settle(new UnavailableError(`Send failed: ${error.message}`, { cause: error }));
      });
    });
    return { id, result };
  }

  /** Gives up on a call locally and tells the server to stop it (its signal aborts; no task cancel). */
  abortCall(id: string, reason: AgentError): void {
    const pending = this.calls.get(id);
    if (!pending) return;
    pending.settle(reason);
    if (this.isOpen) this.socket.send(JSON.stringify({ op: 'call.abort', id }));
  }

  close(): void {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING)
      this.socket.close(1000);
    // A server that does not answer the close frame must not hold the process.
    const timer = setTimeout(() => this.socket.terminate(), 1_000);
    timer.unref();
    this.socket.once('close', () => clearTimeout(timer));
  }

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    let frame: ResponseFrame;
    try {
      frame = parseResponseFrame(frameText(data, isBinary));
    } catch (error) {
      this.failAll(
        new InternalError(`WebSocket protocol error: ${(error as Error).message}`, { cause: error }),
      );
      this.socket.close(1002, 'protocol error');
      return;
    }
    // An error frame without an id answers a request we could not have sent; nothing to match.
    if (frame.id === null) return;
    const pending = this.calls.get(frame.id);
    if (!pending) return;
    if (frame.op === 'event') pending.onEvent?.(frame.event);
    else if (frame.op === 'result') pending.settle(undefined, frame);
    else pending.settle(AgentError.fromJSON(frame.error));
  }

  private onClose(code: number): void {
    this.failAll(
      code === 1009
        ? new PayloadTooLargeError('The server closed the connection: frame too large (1009)')
        : new UnavailableError(`WebSocket connection closed (${code})`),
    );
    const listeners = this.closeListeners;
    this.closeListeners = [];
    for (const listener of listeners) listener();
  }

  private failAll(error: AgentError): void {
    for (const pending of [...this.calls.values()]) pending.settle(error);
  }
}

async function readHandshakeError(res: IncomingMessage): Promise<AgentError> {
  const status = res.statusCode ?? 500;
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (isRecord(body) && isRecord(body.error)) return AgentError.fromJSON(body.error);
  } catch {
    // Not our JSON error body: fall back to the status.
  }
  return new (errorClassFor(errorCodeForHttpStatus(status)))(
    `WebSocket handshake refused with HTTP ${status}`,
    { data: { status } },
  );
}
