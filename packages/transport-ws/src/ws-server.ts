import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { authenticateRequest, type Authenticator } from '@agent/auth';
import {
  NotFoundError,
  normalizeHeaders,
  UnavailableError,
  ValueError,
  InvalidRequestError,
  type TaskHandler,
  type TlsOptions,
} from '@agent/core';
import { WebSocketServer } from 'ws';
import { CONTROL_PATH, DATA_PATH, type ConnectionKind } from './frames.js';
import { rejectUpgrade, writeError, writeJson } from './http-responses.js';
import type { ResolvedOptions } from './options.js';
import { ServerConnection } from './server-connection.js';

export interface WsServerOptions extends ResolvedOptions {
  host: string;
  port: number;
  basePath: string;
  secure: boolean;
  tls?: TlsOptions;
  authenticator?: Authenticator | null;
  handler: TaskHandler;
}

type Readiness = 'starting' | 'ready' | 'stopping';

/** The server half: an HTTP(S) listener answering health probes and upgrading `/ws` and `/ws/control`. */
export class WsServer {
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly connections = new Set<ServerConnection>();
  private readiness: Readiness = 'starting';
  private draining = false;

  constructor(private readonly options: WsServerOptions) {
    if (options.secure && (!options.tls?.cert || !options.tls.key)) {
      throw new ValueError('A wss:// server needs tls.cert and tls.key');
    }
    const onRequest = (req: IncomingMessage, res: ServerResponse): void => this.onRequest(req, res);
    this.http = options.secure
      ? createHttpsServer(
          {
            cert: options.tls?.cert,
            key: options.tls?.key,
            ca: options.tls?.ca,
            // Mutual TLS is enforced by the TLS layer, before any upgrade reaches the authenticator.
            requestCert: options.tls?.requestClientCert === true,
            rejectUnauthorized: options.tls?.requestClientCert === true,
          },
          onRequest,
        )
      : createHttpServer(onRequest);
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxBodyBytes,
      clientTracking: false,
    });
    this.http.on(
      'upgrade',
      // Never let a failed upgrade become an unhandled rejection: that would end the process.
      (req: IncomingMessage, socket: Duplex, head: Buffer) =>
        void this.onUpgrade(req, socket, head).catch(() => socket.destroy()),
    );
  }

  async listen(): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      this.http.once('error', onError);
      this.http.listen(this.options.port, this.options.host, () => {
        this.http.off('error', onError);
        resolve();
      });
    });
    this.readiness = 'ready';
    return this.http.address() as AddressInfo;
  }

  /**
   * Refuses new connections and requests, lets running calls finish for `shutdownGraceMs`, then
   * aborts what remains (UNAVAILABLE error frames, close 1001) and releases every socket.
   */
  async close(): Promise<void> {
    this.readiness = 'stopping';
    // The listener stays open while draining so /readyz can say "stopping" and upgrades get 503.
    for (const connection of this.connections) connection.stopAccepting();
    this.draining = true;
    await this.drain();
    this.draining = false;
    const listenerClosed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    for (const connection of this.connections) connection.shutdown();
    this.http.closeIdleConnections();
    // Sockets that do not finish the close handshake promptly are cut.
    const forceTimer = setTimeout(() => {
      for (const connection of this.connections) connection.terminate();
      this.http.closeAllConnections();
    }, 1_000);
    forceTimer.unref();
    await listenerClosed;
    clearTimeout(forceTimer);
    this.wss.close();
  }

  private async drain(): Promise<void> {
    const grace = this.options.shutdownGraceMs;
    if (grace <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.connections].map((connection) => connection.whenIdle())),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, grace);
      }),
    ]);
    clearTimeout(timer);
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = parseRequestUrl(req);
    if (!url) return writeError(res, new InvalidRequestError(`Malformed request target`));
    const path = url.pathname;
    if (path === `${this.options.basePath}/healthz`) {
      writeJson(res, 200, { status: 'ok' });
    } else if (path === `${this.options.basePath}/readyz`) {
      writeJson(res, this.readiness === 'ready' ? 200 : 503, { status: this.readiness });
    } else if (this.kindOf(path)) {
      writeError(res, new InvalidRequestError('This endpoint only accepts WebSocket upgrades'));
    } else {
      writeError(res, new NotFoundError(`No route for ${req.method ?? 'GET'} ${path}`));
    }
  }

  private kindOf(path: string): ConnectionKind | undefined {
    const relative = path.slice(this.options.basePath.length).replace(/\/+$/, '');
    if (!path.startsWith(this.options.basePath)) return undefined;
    if (relative === DATA_PATH) return 'data';
    if (relative === CONTROL_PATH) return 'control';
    return undefined;
  }

  /** While draining, control sockets still open: a cancel is how a long task ends the drain. */
  private acceptsUpgrade(kind: ConnectionKind): boolean {
    return (
      this.readiness === 'ready' || (this.readiness === 'stopping' && kind === 'control' && this.draining)
    );
  }

  private async onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const url = parseRequestUrl(req);
    if (!url) return rejectUpgrade(socket, new InvalidRequestError('Malformed request target'));
    const kind = this.kindOf(url.pathname);
    if (!kind) return rejectUpgrade(socket, new NotFoundError(`No WebSocket endpoint at ${url.pathname}`));
    if (!this.acceptsUpgrade(kind))
      return rejectUpgrade(socket, new UnavailableError(`Server is ${this.readiness}`));
    let security;
    try {
      // Browsers cannot set headers on a WebSocket, hence the query fallback (api_key, apikey, token).
      security = await authenticateRequest({
        authenticator: this.options.authenticator,
        headers: req.headers,
        query: url.searchParams,
      });
    } catch (error) {
      return rejectUpgrade(socket, error);
    }
    if (!this.acceptsUpgrade(kind) || socket.destroyed)
      return rejectUpgrade(socket, new UnavailableError(`Server is ${this.readiness}`));
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = new ServerConnection({
        socket: ws,
        kind,
        handler: this.options.handler,
        headers: normalizeHeaders(req.headers),
        maxBufferedBytes: this.options.maxBufferedBytes,
        maxInFlight: this.options.maxInFlightPerSocket,
        pingIntervalMs: this.options.pingIntervalMs,
        ...(security ? { security } : {}),
      });
      this.connections.add(connection);
      ws.once('close', () => this.connections.delete(connection));
    });
  }
}

/** The request target as a URL, or undefined when it cannot be parsed (a malformed target must not throw). */
function parseRequestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
}
