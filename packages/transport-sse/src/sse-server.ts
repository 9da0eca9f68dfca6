/**
 * The server side: a node:http(s) listener with health routes, authentication before any route,
 * the unary and streaming routes, and a shutdown that ends open streams and releases every socket.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { authenticateRequest, type Authenticator } from '@agent/auth';
import {
  InvalidRequestError,
  MethodNotAllowedError,
  NotFoundError,
  UnavailableError,
  ValueError,
  normalizeHeaders,
  type CallContext,
  type TaskHandler,
  type TlsOptions,
  type TransportAddress,
} from '@agent/core';
import { sendError, sendJson } from './http-io.js';
import { serveRpc } from './rpc-route.js';
import { CLIENT_GONE, serveStream } from './stream-route.js';

export type ServerState = 'idle' | 'starting' | 'ready' | 'stopping' | 'stopped';

export interface SSEServerOptions {
  address: TransportAddress;
  handler: TaskHandler;
  authenticator?: Authenticator | null;
  tls?: TlsOptions;
  heartbeatMs: number;
  maxBodyBytes: number;
  cancelOnDisconnect: boolean;
  stopGraceMs: number;
}

type Route = 'rpc' | 'stream' | 'card';

const ROUTES: Readonly<Record<string, Route>> = {
  '/rpc': 'rpc',
  '/tasks/stream': 'stream',
  '/.well-known/agent.json': 'card',
};

const ROUTE_METHODS: Readonly<Record<Route, string>> = { rpc: 'POST', stream: 'POST', card: 'GET' };

interface ActiveCall {
  controller: AbortController;
  /** Resolves once the response is finished or its connection is gone. */
  closed: Promise<void>;
}

function createNodeServer(
  address: TransportAddress,
  tls: TlsOptions | undefined,
  listener: http.RequestListener,
): http.Server {
  if (!address.secure) {
    if (tls?.cert || tls?.key) {
      throw new ValueError(`tls.cert/tls.key are set but the URL scheme is ${address.scheme}; use https`);
    }
    return http.createServer(listener);
  }
  if (!tls?.cert || !tls.key) throw new ValueError('An https URL needs tls.cert and tls.key');
  const requestCert = tls.requestClientCert === true;
  return https.createServer(
    {
      cert: tls.cert,
      key: tls.key,
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      // Mutual TLS: a client without a certificate signed by `ca` fails the handshake, before any route.
      requestCert,
      rejectUnauthorized: requestCert,
    },
    listener,
  );
}

export class SSEServer {
  state: ServerState = 'idle';
  private server: http.Server | undefined;
  private closing: Promise<void> | undefined;
  private readonly active = new Set<ActiveCall>();

  constructor(private readonly options: SSEServerOptions) {}

  /** Listens and resolves with the bound port. */
  async listen(): Promise<number> {
    if (this.state !== 'idle') throw new ValueError(`The server cannot start from state "${this.state}"`);
    this.state = 'starting';
    const { address } = this.options;
    const server = createNodeServer(address, this.options.tls, (req, res) => this.onRequest(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, address.host, () => {
        server.off('error', reject);
        resolve();
      });
    }).catch((error: unknown) => {
      this.state = 'stopped';
      throw new UnavailableError(`Cannot listen on ${address.host}:${address.port}`, { cause: error });
    });
    this.state = 'ready';
    return (server.address() as AddressInfo).port;
  }

  /** Idempotent: stops accepting, ends open streams with an UNAVAILABLE frame, then closes every socket. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const server = this.server;
    this.state = 'stopping';
    if (!server) {
      this.state = 'stopped';
      return;
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const reason = new UnavailableError('The server is stopping');
    for (const call of this.active) call.controller.abort(reason);
    server.closeIdleConnections();
    await settleWithin(
      [...this.active].map((call) => call.closed),
      this.options.stopGraceMs,
    );
    // Whatever is still open ignored its abort signal for the whole grace period.
    server.closeAllConnections();
    await closed;
    this.state = 'stopped';
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    void this.route(req, res).catch((error: unknown) => sendError(res, error));
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      return sendError(res, new InvalidRequestError('Malformed request target'));
    }
    const path = this.localPath(url.pathname);
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      return this.state === 'ready'
        ? sendJson(res, 200, { status: 'ready' })
        : sendJson(res, 503, {
            status: this.state === 'starting' || this.state === 'idle' ? 'starting' : 'stopping',
          });
    }
    if (this.state !== 'ready') {
      return sendError(res, new UnavailableError('The server is stopping'), { connection: 'close' });
    }
    // Authentication runs before routing, so an unauthenticated caller learns nothing about routes.
    const security = await authenticateRequest({
      authenticator: this.options.authenticator,
      headers: req.headers,
      query: url.searchParams,
      path: path ?? url.pathname,
    });
    const route = path === undefined ? undefined : ROUTES[path];
    if (route === undefined || !Object.prototype.hasOwnProperty.call(ROUTES, path ?? '')) {
      throw new NotFoundError(`No route for ${req.method ?? 'GET'} ${url.pathname}`);
    }
    const allowed = ROUTE_METHODS[route];
    if (req.method !== allowed && !(allowed === 'GET' && req.method === 'HEAD')) {
      return sendError(
        res,
        new MethodNotAllowedError(`${req.method ?? ''} ${path} is not allowed; use ${allowed}`),
        {
          allow: allowed,
        },
      );
    }

    const call = this.track(res);
    const ctx: CallContext = {
      signal: call.controller.signal,
      headers: normalizeHeaders(req.headers),
      transport: 'sse',
      ...(security ? { security } : {}),
    };
    const { handler } = this.options;
    if (route === 'rpc') return serveRpc(req, res, handler, ctx, this.options.maxBodyBytes);
    if (route === 'stream') return serveStream(req, res, ctx, this.options);
    return sendJson(res, 200, await handler.getAgentCard(ctx));
  }

  /** The path below the URL's base path, or undefined when the request is outside it. */
  private localPath(pathname: string): string | undefined {
    const base = this.options.address.basePath;
    if (base === '') return pathname;
    if (pathname === base) return '/';
    return pathname.startsWith(`${base}/`) ? pathname.slice(base.length) : undefined;
  }

  private track(res: ServerResponse): ActiveCall {
    const controller = new AbortController();
    const closed = new Promise<void>((resolve) => {
      res.once('close', () => {
        // A response that closes before it finished lost its client: abort the call, not the task.
        if (!res.writableFinished) controller.abort(CLIENT_GONE);
        this.active.delete(call);
        resolve();
      });
    });
    const call: ActiveCall = { controller, closed };
    this.active.add(call);
    return call;
  }
}

async function settleWithin(promises: Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([Promise.allSettled(promises), deadline]);
  clearTimeout(timer);
}
