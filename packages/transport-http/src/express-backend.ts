import type { IncomingMessage, ServerResponse } from 'node:http';
import express, {
  type ErrorRequestHandler,
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { AgentError, InvalidRequestError, type SecurityContextLike } from '@agent/core';
import type { BackendOptions, HttpBackend, HttpEndpoint } from './backend.js';
import { errorResponse } from './error-response.js';
import { answerAfterDrain, payloadTooLarge, unsupportedEncoding } from './json-body.js';
import { RouteTable, isEndpoint, routeKey } from './route-table.js';
import { RequestScope, ScopedRequest, ServerHost } from './server-host.js';
import { writeJson } from './write-json.js';

export interface ExpressBackendOptions extends BackendOptions {
  /**
   * An existing express app to add the routes to (after whatever middleware it already has).
   * Default: a new app with `x-powered-by` and ETags off.
   */
  app?: Express;
}

const SIGNAL = Symbol('agent.signal');
/** Apps that already carry the routes: express cannot drop routes, so a restart reuses them. */
const APPS_WITH_ROUTES = new WeakSet<Express>();
type SignalRequest = IncomingMessage & { [SIGNAL]?: RequestScope };

/**
 * The express 5 backend, for users who mount the routes into an express app or want its
 * middleware. Bodies go through `express.json()` (skipped when an earlier middleware parsed them).
 */
export class ExpressBackend implements HttpBackend {
  readonly app: Express;
  private readonly host: ServerHost;

  constructor(private readonly options: ExpressBackendOptions) {
    this.app = options.app ?? createApp();
    this.host = new ServerHost((req, res, scope) => {
      (req as SignalRequest)[SIGNAL] = scope;
      this.app(req, res);
    }, options);
  }

  setupRoutes(endpoints: readonly HttpEndpoint[]): void {
    if (APPS_WITH_ROUTES.has(this.app)) return;
    APPS_WITH_ROUTES.add(this.app);
    const { maxBodyBytes } = this.options;
    const json = express.json({ limit: maxBodyBytes, strict: false, type: () => true, inflate: false });
    const router = express.Router({ strict: false, caseSensitive: true });
    for (const endpoint of endpoints) {
      const chain: RequestHandler[] = [authenticateStep(endpoint)];
      if (endpoint.readsBody) chain.push(requireBody, json);
      chain.push(handleStep(endpoint));
      const paths = [...new Set([routeKey(endpoint.path), endpoint.path])];
      if (endpoint.method === 'GET') router.get(paths, ...chain);
      else router.post(paths, ...chain);
    }
    const table = new RouteTable(endpoints);
    router.use((req: Request, res: Response) => {
      const matched = table.match(req.method, req.path);
      // Only reachable for a known path with a method no route takes, or an unknown path.
      if (!isEndpoint(matched)) answerAfterDrain(req, res, maxBodyBytes, () => writeJson(res, matched));
    });
    router.use(errorStep(maxBodyBytes));
    this.app.use(router);
  }

  start(host: string, port: number): Promise<number> {
    return this.host.start(host, port);
  }

  stop(): Promise<void> {
    return this.host.stop();
  }
}

function createApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  return app;
}

function scopeOf(req: IncomingMessage): RequestScope {
  return (req as SignalRequest)[SIGNAL] ?? new RequestScope();
}

function authenticateStep(endpoint: HttpEndpoint): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    if (!endpoint.authenticate) return next();
    const q = req.url.indexOf('?');
    const query = q === -1 ? undefined : new URLSearchParams(req.url.slice(q + 1));
    res.locals.security = await endpoint.authenticate({ headers: req.headers, query });
    next();
  };
}

/**
 * Node's reader calls an empty body malformed JSON and refuses a Content-Encoding; body-parser
 * would silently skip the one and inflate the other. A body an earlier middleware parsed is left alone.
 */
const requireBody: RequestHandler = (req, _res, next) => {
  if ((req as { body?: unknown }).body !== undefined) {
    next();
    return;
  }
  const encodingError = unsupportedEncoding(req);
  if (encodingError) {
    next(encodingError);
    return;
  }
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (!chunked && (length === undefined || length === '0')) {
    next(new InvalidRequestError('Malformed JSON: the request body is empty'));
    return;
  }
  next();
};

function handleStep(endpoint: HttpEndpoint): RequestHandler {
  return async (req: Request, res: Response) => {
    const response = await endpoint.handle(
      new ScopedRequest(
        req.headers,
        (req as { body?: unknown }).body,
        scopeOf(req),
        res.locals.security as SecurityContextLike | undefined,
      ),
    );
    writeJson(res, response);
  };
}

/**
 * body-parser's errors carry a `type`; map them onto the same codes the node backend uses. A body
 * still unread (an authentication failure) is drained before the answer, as on the node backend.
 */
function errorStep(maxBodyBytes: number): ErrorRequestHandler {
  return (error: unknown, req, res: ServerResponse, _next) => {
    const response = errorResponse(toAgentError(error, req));
    answerAfterDrain(req, res, maxBodyBytes, () => writeJson(res, response));
  };
}

function toAgentError(error: unknown, req: Request): unknown {
  if (error instanceof AgentError || typeof error !== 'object' || error === null) return error;
  const { type, limit, message } = error as { type?: unknown; limit?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : 'unreadable body';
  if (type === 'entity.too.large')
    return payloadTooLarge(typeof limit === 'number' ? limit : Number(req.headers['content-length']));
  if (type === 'entity.parse.failed') return new InvalidRequestError(`Malformed JSON: ${text}`);
  if (typeof type === 'string') return new InvalidRequestError(`Request body could not be read: ${text}`);
  // raw-body passes a stream error (a reset mid-body) on untyped, with status 400: still the body's fault.
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown };
  const httpStatus = typeof status === 'number' ? status : statusCode;
  if (typeof httpStatus === 'number' && httpStatus >= 400 && httpStatus < 500)
    return new InvalidRequestError(`Request body could not be read: ${text}`);
  return error;
}
