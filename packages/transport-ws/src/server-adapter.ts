import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { InvalidRequestError, NotFoundError, UnavailableError } from '@agent/core';
import { settlesWithin, TENANT_HEADER, type ServerCall, type ServerPipeline } from '@agent/server';
import { answerAfterDrain, errorAnswer, writeError } from '@agent/server/node';
import { WebSocketServer } from 'ws';
import type { ConnectionKind } from './codec.js';
import { SocketSession } from './server-adapter-socket.js';
import { SocketPaths } from './socket-url.js';

export interface WsServerAdapterOptions {
  pipeline: ServerPipeline;
  /** The path of the transport URL ('' for a bare origin). */
  basePath: string;
  maxBodyBytes: number;
  maxBufferedBytes: number;
  maxInFlightPerSocket: number;
  pingIntervalMs: number;
}

/** How long sockets get to write their last frames, and then to answer the close frame, before they are cut. */
const CLOSE_GRACE_MS = 1000;

/**
 * The server side of the WebSocket wire, under `NodeHost` (which owns the listener, TLS, `/healthz`
 * and `/readyz`). An upgrade on the data or control path is authenticated by `pipeline.open`
 * (headers, else the `api_key`/`apikey`/`token` query; the tenant from `X-Tenant`, else the
 * `tenant` query) before any socket exists; each accepted socket is served by a {@link SocketSession}.
 */
export class WsServerAdapter {
  private readonly pipeline: ServerPipeline;
  private readonly paths: SocketPaths;
  private readonly wss: WebSocketServer;
  private readonly sessions = new Set<SocketSession>();
  private closed = false;

  constructor(private readonly options: WsServerAdapterOptions) {
    this.pipeline = options.pipeline;
    this.paths = new SocketPaths(options.basePath);
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxBodyBytes,
      clientTracking: false,
    });
  }

  /** A plain HTTP request (health and readiness were answered by the host): 400 on a socket path, else 404. */
  handleRequest(req: IncomingMessage, res: ServerResponse): void {
    const target = requestTarget(req);
    const error = !target
      ? new InvalidRequestError('Malformed request target')
      : this.paths.kindOf(target.pathname)
        ? new InvalidRequestError('This endpoint only accepts WebSocket upgrades')
        : new NotFoundError(`No route for ${req.method ?? 'GET'} ${target.pathname}`);
    answerAfterDrain(req, res, this.options.maxBodyBytes, () => writeError(res, error));
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const target = requestTarget(req);
    if (!target) return refuseUpgrade(socket, new InvalidRequestError('Malformed request target'));
    const kind = this.paths.kindOf(target.pathname);
    if (!kind) return refuseUpgrade(socket, new NotFoundError(`No WebSocket endpoint at ${target.pathname}`));
    const tenants = target.searchParams.getAll('tenant');
    const scope = new AbortController();
    this.pipeline
      .open({
        headers: req.headers,
        // Browsers cannot set headers on a WebSocket: credentials and the tenant may come in the
        // query instead. A tenant header wins over the query, as credential headers do.
        query: target.searchParams,
        tenant: req.headers[TENANT_HEADER] === undefined ? tenants[0] : undefined,
        signal: scope.signal,
        remoteAddress: req.socket.remoteAddress,
      })
      .then(
        (handshake) =>
          // Two values would let a proxy and this server each read a different one. Refused after
          // authentication, as the pipeline refuses a repeated X-Tenant header.
          tenants.length > 1
            ? refuseUpgrade(socket, new InvalidRequestError('More than one tenant query parameter'))
            : this.accept(req, socket, head, { kind, handshake, scope }),
        (error: unknown) => refuseUpgrade(socket, error),
      )
      // Never let a failed upgrade become an unhandled rejection: that would end the process.
      .catch(() => socket.destroy());
  }

  /**
   * Called once the pipeline has drained: lets the calls that finished write their last frames,
   * closes every socket (1001), and cuts those that do not answer the close frame in time.
   */
  async close(): Promise<void> {
    this.closed = true;
    const sessions = [...this.sessions];
    await settlesWithin(
      Promise.all(sessions.map((session) => session.whenIdle())).then(noop),
      CLOSE_GRACE_MS,
    );
    await settlesWithin(
      Promise.all(sessions.map((session) => session.shutdown())).then(noop),
      CLOSE_GRACE_MS,
    );
    for (const session of this.sessions) session.terminate();
    this.wss.close();
  }

  private accept(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    accepted: { kind: ConnectionKind; handshake: ServerCall; scope: AbortController },
  ): void {
    if (socket.destroyed) return;
    if (this.closed) return refuseUpgrade(socket, new UnavailableError('The server is stopping'));
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const session = new SocketSession({
        socket: ws,
        kind: accepted.kind,
        pipeline: this.pipeline,
        handshake: accepted.handshake,
        maxBufferedBytes: this.options.maxBufferedBytes,
        maxInFlight: this.options.maxInFlightPerSocket,
        pingIntervalMs: this.options.pingIntervalMs,
      });
      this.sessions.add(session);
      void session.closed.then(() => {
        this.sessions.delete(session);
        accepted.scope.abort(new UnavailableError('WebSocket connection closed'));
      });
    });
  }
}

function noop(): void {}

/** The request target as a URL, or undefined when it cannot be parsed (a malformed target must not throw). */
function requestTarget(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
}

/**
 * Refuses an upgrade before any WebSocket exists: the JSON error body every HTTP wire answers with,
 * written as a plain HTTP response on the raw socket, which then closes. The client sees the
 * status and no connection.
 */
function refuseUpgrade(socket: Duplex, error: unknown): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const { status, body } = errorAnswer(error);
  const payload = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(payload)}\r\n` +
      '\r\n' +
      payload,
  );
  // end() flushes the response; destroy afterwards so a peer that keeps its side open cannot linger.
  socket.once('finish', () => socket.destroy());
}
