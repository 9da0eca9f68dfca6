/**
 * The request plumbing every route of the HTTP wire shares, the task routes and the extra endpoints
 * alike: the call is opened on the pipeline before anything is decoded, then the path and query,
 * then the JSON body (with `maxBodyBytes` and the one Content-Encoding rule), and every failure of
 * the wire leaves through the pipeline's error policy.
 *
 * The per-request path is written for the fast path (the `node` backend): one exchange object, the
 * shared `onOpened` step (the exchange rides on the call as its request), the callback body reader.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CREDENTIAL_QUERY_PARAMS } from '@agent/auth';
import type { ServerCall, ServerPipeline } from '@agent/server';
import {
  answerAfterDrain,
  NodeRequest,
  readJsonBody,
  requestPath,
  unsupportedEncoding,
  writeError,
  type BodyCallback,
  type RequestScope,
} from '@agent/server/node';
import type { HttpEndpoint } from './backend.js';
import { PathTemplate } from './path-template.js';

/**
 * Query parameters the authenticator reads credentials from (for clients that cannot set headers,
 * such as a browser's EventSource). They belong to authentication, not to the operation, so they
 * never reach its input, where `validateSchema` would refuse them as unknown fields.
 */
const CREDENTIAL_PARAMS: ReadonlySet<string> = new Set(CREDENTIAL_QUERY_PARAMS);

/**
 * An endpoint served through an {@link Exchange}. A subclass says what it decodes from the request
 * line (`decodeLine`), whether it reads a JSON body (`readsBody`) and how it answers (`answer`).
 */
export abstract class ExchangeRoute implements HttpEndpoint {
  /** The parameters of the path, for the routes that have some. */
  readonly template: PathTemplate | undefined;

  constructor(
    readonly method: HttpEndpoint['method'],
    readonly path: string,
    /** The operation's name, for the error policy's log line. */
    readonly operation: string,
    readonly pipeline: ServerPipeline,
    readonly maxBodyBytes: number,
    readonly readsBody: boolean,
  ) {
    const template = PathTemplate.parse(path);
    this.template = template.names.length > 0 ? template : undefined;
  }

  serve(req: IncomingMessage, res: ServerResponse, scope: RequestScope, body?: unknown): void {
    const exchange = new Exchange(this, req, res, scope, body);
    // The pipeline authenticates before any body is read: an unauthenticated upload costs nothing.
    this.open(exchange).then(onOpened, (error: unknown) => exchange.refuse(error));
  }

  /** Opens the call on the pipeline (an endpoint that authenticates differently overrides it). */
  protected open(exchange: Exchange): Promise<ServerCall> {
    return this.pipeline.open(exchange);
  }

  /** Writes an error answer; the body may still be unread (it is drained first). */
  writeRefusal(res: ServerResponse, error: unknown, _req: IncomingMessage): void {
    writeError(res, error);
  }

  /**
   * What the request line and headers carry, decoded once the call is open and before any body is
   * read. A throw refuses the request through the error policy (the unread body drained first).
   */
  decodeLine(_exchange: Exchange): unknown {
    return undefined;
  }

  /** Runs the operation and writes the answer; never throws. `body` is the parsed body when `readsBody`. */
  abstract answer(exchange: Exchange, call: ServerCall, line: unknown, body: unknown): void;
}

/** One request on its way through a route; it is also what the pipeline sees of the request. */
export class Exchange extends NodeRequest {
  call: ServerCall | undefined;

  constructor(
    readonly route: ExchangeRoute,
    req: IncomingMessage,
    readonly res: ServerResponse,
    scope: RequestScope,
    readonly parsed: unknown,
  ) {
    super(req, scope);
  }

  /**
   * The path parameters, percent-decoded (`{}` for a path without any). Throws InvalidRequestError
   * for a malformed escape; a request that reached this route matches its path.
   */
  pathParams(): Record<string, string> {
    const template = this.route.template;
    if (!template) return {};
    return template.params(requestPath(this.req.url ?? '/')) ?? {};
  }

  /** The query without the credential parameters, which belong to authentication. */
  operationQuery(): URLSearchParams {
    const query = this.query ?? new URLSearchParams();
    for (const name of CREDENTIAL_PARAMS) query.delete(name);
    return query;
  }

  /**
   * The query parameters as the operation's fields, values as the strings they arrived as (the
   * pipeline decodes numbers); a repeated name gives its values as an array, which the pipeline
   * refuses. The pipeline ignores unknown names unless `validateSchema` is on.
   */
  queryFields(): Record<string, string | string[]> {
    const query = this.query;
    if (!query) return {};
    // A Map, then fromEntries: a parameter named `__proto__` stays a field, never the prototype.
    const fields = new Map<string, string | string[]>();
    for (const [name, value] of query) {
      if (CREDENTIAL_PARAMS.has(name)) continue;
      const seen = fields.get(name);
      fields.set(name, seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value]);
    }
    return Object.fromEntries(fields);
  }

  /**
   * The request's JSON body, within the route's `maxBodyBytes`: the one way every route reads it.
   * An express app may have parsed it already; the one Content-Encoding rule holds either way.
   */
  readBody(done: BodyCallback): void {
    if (this.parsed === undefined) {
      readJsonBody(this.req, this.route.maxBodyBytes, done);
      return;
    }
    const refused = unsupportedEncoding(this.req);
    if (refused) done(refused);
    else done(undefined, this.parsed);
  }

  /** Answers an error while the body may still be unread. */
  refuse(error: unknown): void {
    const { req, res, route } = this;
    answerAfterDrain(req, res, route.maxBodyBytes, () => route.writeRefusal(res, error, req));
  }

  /** A failure of the wire itself (an unreadable body or path), through the pipeline's error policy. */
  refuseBody(error: unknown): void {
    this.refuse(this.route.pipeline.wireError(error, this.route.operation, this.call));
  }
}

function onOpened(call: ServerCall): void {
  const exchange = call.request as Exchange;
  exchange.call = call;
  const route = exchange.route;
  let line: unknown;
  try {
    line = route.decodeLine(exchange);
  } catch (error) {
    exchange.refuseBody(error);
    return;
  }
  if (!route.readsBody) {
    route.answer(exchange, call, line, undefined);
    return;
  }
  exchange.readBody((error, body) => {
    if (error) exchange.refuseBody(error);
    else route.answer(exchange, call, line, body);
  });
}
