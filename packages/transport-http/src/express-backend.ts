import type { IncomingMessage } from 'node:http';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { CLIENT_GONE, NodeHost, RequestScope } from '@agent/server/node';
import type { BackendOptions, HttpBackend, HttpEndpoint } from './backend.js';
import { EndpointRouter, serveRoute } from './router.js';

export interface ExpressBackendOptions extends BackendOptions {
  /**
   * An existing express app to add the routes to (after whatever middleware and routes it already
   * has). Default: a new app with `x-powered-by` and ETags off.
   */
  app?: Express;
}

const SCOPE = Symbol('agent.requestScope');
type ScopedRequest = IncomingMessage & { [SCOPE]?: RequestScope };

/** The routes an app serves now. Express cannot remove a middleware, so a restart swaps the table. */
interface Mounted {
  routes: EndpointRouter;
  maxBodyBytes: number;
}
const MOUNTED = new WeakMap<Express, Mounted>();

/**
 * The express 5 backend, for users who mount the routes into an express app or want its
 * middleware. The same `NodeHost` (TLS, `/healthz`, `/readyz`, the stop) and the same routes as the
 * `node` backend; express only decides which middleware runs first. A body an earlier middleware
 * parsed (`express.json()`) is used as it is.
 */
export class ExpressBackend implements HttpBackend {
  readonly app: Express;
  private readonly host: NodeHost;

  constructor(private readonly options: ExpressBackendOptions) {
    const app = options.app ?? createApp();
    this.app = app;
    this.host = new NodeHost({
      tls: options.tls,
      basePath: options.basePath,
      state: options.state,
      cors: options.cors,
      onRequest: (req, res, scope) => {
        (req as ScopedRequest)[SCOPE] = scope;
        app(req, res);
      },
    });
  }

  setupRoutes(endpoints: readonly HttpEndpoint[]): void {
    const routes = new EndpointRouter(endpoints);
    const mounted = MOUNTED.get(this.app);
    if (mounted) {
      mounted.routes = routes;
      mounted.maxBodyBytes = this.options.maxBodyBytes;
      return;
    }
    const state: Mounted = { routes, maxBodyBytes: this.options.maxBodyBytes };
    MOUNTED.set(this.app, state);
    this.app.use(routeStep(state));
  }

  start(host: string, port: number): Promise<number> {
    return this.host.start(host, port);
  }

  stop(): Promise<void> {
    return this.host.close();
  }
}

function createApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  return app;
}

/** The last step of the app: our routes, and the JSON 404/405 for whatever nothing else took. */
function routeStep(mounted: Mounted): RequestHandler {
  return (req: Request, res: Response) => {
    const scope = (req as ScopedRequest)[SCOPE] ?? ownScope(res);
    serveRoute(mounted.routes, mounted.maxBodyBytes, req, res, scope, (req as { body?: unknown }).body);
  };
}

/** The app is also served by a server of the user's own (`app.listen`): a scope for this request. */
function ownScope(res: Response): RequestScope {
  const scope = new RequestScope();
  res.once('close', () => {
    if (!res.writableFinished) scope.abort(CLIENT_GONE);
  });
  return scope;
}
