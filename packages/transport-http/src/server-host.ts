import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { UnavailableError, ValueError, type SecurityContextLike, type TlsOptions } from '@agent/core';
import type { EndpointRequest } from './backend.js';

export type RequestListener = (req: IncomingMessage, res: ServerResponse, scope: RequestScope) => void;

/**
 * The abort side of one request. The AbortController is made only when someone asks for the
 * signal: most requests finish without anyone listening, and the fast path should not pay for one.
 */
export class RequestScope {
  private controller: AbortController | undefined;
  private reason: unknown;
  private aborted = false;

  constructor(readonly host?: ServerHost) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

const SCOPE = Symbol('agent.requestScope');
type ScopedResponse = ServerResponse & { [SCOPE]?: RequestScope };

// One shared listener instead of a closure per request: the scope rides on the response.
function onResponseClose(this: ServerResponse): void {
  const scope = (this as ScopedResponse)[SCOPE];
  if (!scope) return;
  if (!this.writableFinished) scope.abort(new UnavailableError('The client closed the connection'));
  scope.host?.release(scope);
}

export interface ServerHostOptions {
  tls?: TlsOptions;
  stopTimeoutMs: number;
}

/** Once a stop has aborted the stragglers, how long they get to answer before their sockets close. */
const ABORT_GRACE_MS = 1000;

/**
 * Owns one node:http(s) server for a backend: listening, per-request abort signals, and the
 * graceful stop both backends share. While stopping, the listener stays open so that `/readyz` can
 * say `stopping` to whoever asks, every response carries `Connection: close`, and the server closes
 * once in-flight requests have drained (or `stopTimeoutMs` passed: then their signals abort).
 */
export class ServerHost {
  private server: Server | undefined;
  private readonly inFlight = new Set<RequestScope>();
  private stopping: Promise<void> | undefined;
  private drained: (() => void) | undefined;

  constructor(
    private readonly listener: RequestListener,
    private readonly options: ServerHostOptions,
  ) {}

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  async start(host: string, port: number): Promise<number> {
    if (this.server) throw new ValueError('The server is already started');
    const server = this.createServer();
    this.server = server;
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

  stop(): Promise<void> {
    if (!this.server) return Promise.resolve();
    this.stopping ??= this.drainAndClose(this.server);
    return this.stopping;
  }

  private createServer(): Server {
    const tls = this.options.tls;
    const onRequest = (req: IncomingMessage, res: ServerResponse): void => this.onRequest(req, res);
    if (!tls) return createHttpServer(onRequest);
    return createHttpsServer(
      {
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
    const scope = new RequestScope(this);
    this.inFlight.add(scope);
    (res as ScopedResponse)[SCOPE] = scope;
    res.on('close', onResponseClose);
    if (this.stopping) res.setHeader('connection', 'close');
    this.listener(req, res, scope);
  }

  /** Called once per request when its response closes (sent, or the client went away). */
  release(scope: RequestScope): void {
    this.inFlight.delete(scope);
    if (this.drained && this.inFlight.size === 0) this.drained();
  }

  private async drainAndClose(server: Server): Promise<void> {
    server.closeIdleConnections();
    if (this.inFlight.size > 0) {
      const allDone = new Promise<void>((resolve) => (this.drained = resolve));
      if (!(await settlesWithin(allDone, this.options.stopTimeoutMs))) {
        const reason = new UnavailableError('The server stopped before the request finished');
        for (const scope of this.inFlight) scope.abort(reason);
        await settlesWithin(allDone, ABORT_GRACE_MS);
      }
    }
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    this.server = undefined;
    this.drained = undefined;
    this.stopping = undefined;
  }
}

/** Resolves true when `promise` settles within `ms`, false otherwise; leaves no timer behind. */
async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** An EndpointRequest whose signal is created on first access. */
export class ScopedRequest implements EndpointRequest {
  constructor(
    readonly headers: IncomingHttpHeaders,
    readonly body: unknown,
    private readonly scope: RequestScope,
    readonly security: SecurityContextLike | undefined,
  ) {}

  get signal(): AbortSignal {
    return this.scope.signal;
  }
}
