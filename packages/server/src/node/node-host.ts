import {
  createServer as createHttpServer,
  maxHeaderSize as defaultMaxHeaderSize,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { InvalidRequestError, UnavailableError, ValueError, type TlsOptions } from '@agent/core';
import { ReleasingMap } from '@agent/core/internal';
import type { ServerState } from '../pipeline.js';
import { settlesWithin } from '../pipeline.js';
import { answerClientError } from './client-error.js';
import type { CorsPolicy } from './cors.js';
import { requestPath, routeKey } from './route-table.js';
import { writeJson } from './write-json.js';
import { RequestScope } from '../request-scope.js';

/** The abort reason of a request whose client went away; one shared instance so it can be recognized. */
export const CLIENT_GONE = new UnavailableError('The client closed the connection');

export type RequestListener = (req: IncomingMessage, res: ServerResponse, scope: RequestScope) => void;
export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface NodeHostOptions {
  /** Serve HTTPS (`cert` and `key` required; `requestClientCert` + `ca` for mutual TLS). */
  tls?: TlsOptions | undefined;
  /** The transport's requests, after the host answered health and readiness. */
  onRequest: RequestListener;
  /** WebSocket upgrades (or any other `Upgrade`); without it upgrades are refused. */
  onUpgrade?: UpgradeListener;
  /** What `/readyz` reports: the pipeline's state. */
  state(): ServerState;
  /** Prefix of `/healthz` and `/readyz` ('' for the root), the path part of the transport URL. */
  basePath?: string;
  /** Cross-origin rules: preflights are answered here, before the probes, routing and authentication. */
  cors?: CorsPolicy | undefined;
  /** Connection bounds; each field absent takes its default ({@link DEFAULT_CONNECTION_LIMITS}). */
  connections?: Partial<ConnectionLimits> | undefined;
}

/** What one host lets clients hold: how many connections, and how long a request may take to arrive. */
export interface ConnectionLimits {
  /** Most open connections; past it new ones are closed at once. */
  maxConnections: number;
  /** How long a client may take to send a request's headers, in ms (then 408 and a close). */
  headersTimeoutMs: number;
  /** How long a client may take to send a whole request, body included, in ms (then 408). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open, in ms. */
  keepAliveTimeoutMs: number;
}

/**
 * Node's own defaults let a client trickle a request for 5 minutes (and a body forever, checked
 * every 30 s) and open any number of connections; these bound what a slow or hostile client holds.
 * A response may take as long as it needs (a stream): only receiving the request is timed.
 */
export const DEFAULT_CONNECTION_LIMITS: Readonly<ConnectionLimits> = Object.freeze({
  maxConnections: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
});

/** How often node checks the timeouts above (its default, 30 s, would let them run that much longer). */
const TIMEOUT_CHECK_MS = 1_000;

interface Tracked {
  /** Its key among the requests in flight. */
  serial: number;
  scope: RequestScope;
  res: ServerResponse;
}

let requestSerial = 0;

const SCOPE = Symbol('agent.requestScope');
type ScopedResponse = ServerResponse & { [SCOPE]?: Tracked; host?: NodeHost };

/** Once a stop has aborted the stragglers, how long they get to answer before their sockets close. */
const ABORT_GRACE_MS = 1000;

const HEALTHY = { status: 'ok' };
const READINESS: Record<ServerState, { status: number; body: { status: string } }> = {
  ready: { status: 200, body: { status: 'ready' } },
  starting: { status: 503, body: { status: 'starting' } },
  unavailable: { status: 503, body: { status: 'store_unavailable' } },
  stopping: { status: 503, body: { status: 'stopping' } },
};

/**
 * The one `node:http(s)` host under the HTTP, SSE and WebSocket transports: TLS and mutual TLS,
 * listen, `/healthz` and `/readyz`, per-request abort scopes, `Connection: close` while stopping,
 * and the close that follows the pipeline's drain. The listener stays open while the pipeline
 * drains, so that `/readyz` can say `stopping` to whoever asks.
 *
 * Requests node's parser refuses (`clientError`) and an `Expect` other than `100-continue` are
 * answered here too, with the JSON error body and `Connection: close`, for every transport on it.
 */
export class NodeHost {
  private server: Server | undefined;
  /** Keyed by `Tracked.serial`: a request's response hangs off it, and must die young (ReleasingMap). */
  private readonly inFlight = new ReleasingMap<number, Tracked>();
  private readonly healthPath: string;
  private readonly readyPath: string;
  private drained: (() => void) | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: NodeHostOptions) {
    const base = options.basePath ?? '';
    this.healthPath = `${base}/healthz`;
    this.readyPath = `${base}/readyz`;
  }

  /** The node server while listening (for adapters that attach to it). */
  get nodeServer(): Server | undefined {
    return this.server;
  }

  async start(host: string, port: number): Promise<number> {
    if (this.server) throw new ValueError('The server is already started');
    const server = this.createServer();
    this.server = server;
    const limits = { ...DEFAULT_CONNECTION_LIMITS, ...this.options.connections };
    server.maxConnections = limits.maxConnections;
    server.headersTimeout = limits.headersTimeoutMs;
    server.requestTimeout = limits.requestTimeoutMs;
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
    if (this.options.onUpgrade) server.on('upgrade', this.options.onUpgrade);
    // The process-wide limit (`--max-http-header-size`): the host sets no server-specific one.
    server.on('clientError', (error: Error, socket: Duplex) =>
      answerClientError(error, socket, defaultMaxHeaderSize),
    );
    server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
      this.refuseExpectation(req, res),
    );
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException): void => {
        this.server = undefined;
        reject(
          new UnavailableError(`Cannot listen on ${host}:${port}: ${error.code ?? error.message}`, {
            cause: error,
          }),
        );
      };
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : port;
  }

  /**
   * Stops listening and releases every socket: idle keep-alive connections at once, requests still
   * answering after a short grace (their scopes abort first). Call after the pipeline drained.
   */
  close(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    this.closing ??= this.closeServer(server);
    return this.closing;
  }

  private async closeServer(server: Server): Promise<void> {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    if (this.inFlight.size > 0) {
      const allDone = new Promise<void>((resolve) => (this.drained = resolve));
      if (!(await settlesWithin(allDone, ABORT_GRACE_MS))) {
        const reason = new UnavailableError('The server stopped before the request finished');
        for (const tracked of this.inFlight.values()) tracked.scope.abort(reason);
        await settlesWithin(allDone, ABORT_GRACE_MS);
      }
    }
    server.closeAllConnections();
    await closed;
    this.server = undefined;
    this.drained = undefined;
    this.closing = undefined;
  }

  private createServer(): Server {
    const tls = this.options.tls;
    const onRequest = (req: IncomingMessage, res: ServerResponse): void => this.onRequest(req, res);
    if (!tls) return createHttpServer({ connectionsCheckingInterval: TIMEOUT_CHECK_MS }, onRequest);
    return createHttpsServer(
      {
        connectionsCheckingInterval: TIMEOUT_CHECK_MS,
        cert: tls.cert,
        key: tls.key,
        ca: tls.ca,
        // Mutual TLS: the handshake itself refuses a client without a certificate signed by `ca`,
        // so an unverified peer never reaches the authenticator.
        requestCert: tls.requestClientCert === true,
        rejectUnauthorized: tls.requestClientCert === true,
      },
      onRequest,
    );
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const state = this.options.state();
    if (state === 'stopping' || this.closing) res.setHeader('connection', 'close');
    if (this.options.cors?.handle(req, res)) return;
    if (req.method === 'GET' || req.method === 'HEAD') {
      // The routes' rule: absolute-form reduced to its path, at most one trailing slash.
      const path = routeKey(requestPath(req.url ?? '/'));
      if (path === this.healthPath) {
        writeJson(res, 200, HEALTHY);
        return;
      }
      if (path === this.readyPath) {
        const answer = READINESS[state];
        writeJson(res, answer.status, answer.body);
        return;
      }
    }
    const tracked: Tracked = { serial: ++requestSerial, scope: new RequestScope(), res };
    this.inFlight.set(tracked.serial, tracked);
    const scoped = res as ScopedResponse;
    scoped[SCOPE] = tracked;
    scoped.host = this;
    res.on('close', onResponseClose);
    this.options.onRequest(req, res, tracked.scope);
  }

  /**
   * An `Expect` other than `100-continue` (node's `checkExpectation`): 417, HTTP's status for it, with
   * the JSON error body (INVALID_REQUEST) and `Connection: close`; the request never reaches a route.
   */
  private refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
    if (this.options.cors?.handle(req, res)) return;
    const error = new InvalidRequestError('Unsupported Expect header: only 100-continue is supported');
    writeJson(res, 417, { error: error.toJSON() }, { connection: 'close' });
  }

  /** Called once per request when its response closes (sent, or the client went away). */
  release(tracked: Tracked): void {
    this.inFlight.delete(tracked.serial);
    if (this.drained && this.inFlight.size === 0) this.drained();
  }
}

// One shared listener instead of a closure per request: the scope rides on the response.
function onResponseClose(this: ServerResponse): void {
  const scoped = this as ScopedResponse;
  const tracked = scoped[SCOPE];
  if (!tracked) return;
  if (!this.writableFinished) tracked.scope.abort(CLIENT_GONE);
  scoped.host?.release(tracked);
}
