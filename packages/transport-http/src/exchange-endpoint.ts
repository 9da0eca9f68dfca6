/**
 * Exchange endpoints: extra routes that answer in a wire format of their own (another protocol's
 * error bodies, streams, caching headers) while every request still goes through the pipeline's
 * open step first — refused while stopping, authenticated before any body is read, tenant checked —
 * and through its error policy.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentError, UnavailableError, ValueError } from '@agent/core';
import { ServerCall, type ServerPipeline } from '@agent/server';
import type { BodyCallback } from '@agent/server/node';
import type { HttpEndpoint } from './backend.js';
import { ExchangeRoute, type Exchange } from './exchange.js';
import type { HttpRouteContext } from './json-endpoint.js';
import { ENDPOINT_METHODS } from './router.js';

/** What an exchange endpoint's `serve` gets besides the call. */
export interface ExchangeInput {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The `{name}` segments of the path, percent-decoded. */
  readonly params: Record<string, string>;
  /** The query string, without the credential parameters an authenticator reads. */
  readonly query: URLSearchParams;
  /** The transport's `maxBodyBytes` (what `answerAfterDrain` drains up to before an early answer). */
  readonly maxBodyBytes: number;
  /**
   * Reads the JSON body as every route does (`maxBodyBytes` → 413, the Content-Encoding rule,
   * malformed JSON → MalformedJsonError; a body an express app parsed already is taken as it is).
   */
  readBody(done: BodyCallback): void;
}

export interface ExchangeEndpointSpec {
  method: HttpEndpoint['method'];
  /** The route below the transport URL's path; `{name}` matches one segment. */
  path: string;
  /** The operation's name in the error policy's log line. */
  operation: string;
  /**
   * `false`: a public endpoint (a discovery document): no credentials are read and the call has no
   * security context. It is still refused while the server stops. Default true.
   */
  authenticate?: boolean;
  /**
   * Authenticate, but leave the tenant to `pipeline.scope(call, tenant)`: for wires that name the
   * tenant in the body or the path. Default false (the `X-Tenant` header is checked at once).
   */
  deferTenant?: boolean;
  /**
   * Writes a refusal that happened before `serve` (stopping, authentication, tenant, a malformed
   * path escape), already through the error policy. The unread body is drained first.
   */
  refuse(res: ServerResponse, error: AgentError, req: IncomingMessage): void;
  /**
   * Serves the opened request and answers `res`, reading the body with `input.readBody` when it
   * needs one. A throw is answered through `refuse`.
   */
  serve(call: ServerCall, input: ExchangeInput): void;
}

/**
 * An endpoint that owns its answers but not its rules: the pipeline opens the call (or, for a public
 * endpoint, only checks that the server is not stopping), then `serve` does the rest. ValueError for a
 * spec that is not one.
 */
export function exchangeEndpoint(spec: ExchangeEndpointSpec, context: HttpRouteContext): HttpEndpoint {
  if (typeof spec !== 'object' || spec === null)
    throw new ValueError('exchangeEndpoint() needs a spec object');
  const { method, path, operation, serve, refuse } = spec;
  if (!ENDPOINT_METHODS.includes(method)) {
    throw new ValueError(
      `exchangeEndpoint(): method must be one of ${ENDPOINT_METHODS.join(', ')}, got ${String(method)}`,
    );
  }
  if (typeof operation !== 'string' || operation === '') {
    throw new ValueError('exchangeEndpoint(): operation must be a non-empty string');
  }
  if (typeof serve !== 'function' || typeof refuse !== 'function') {
    throw new ValueError('exchangeEndpoint(): serve and refuse must be functions');
  }
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new ValueError(`exchangeEndpoint(): path must start with "/", got ${JSON.stringify(path)}`);
  }
  if (typeof context?.basePath !== 'string') {
    throw new ValueError('exchangeEndpoint() needs the route context its HttpRoutes.endpoints() was given');
  }
  return new OwnAnswerRoute(spec, context.basePath + path, context.pipeline, context.maxBodyBytes);
}

class OwnAnswerRoute extends ExchangeRoute {
  constructor(
    private readonly spec: ExchangeEndpointSpec,
    path: string,
    pipeline: ServerPipeline,
    maxBodyBytes: number,
  ) {
    // The endpoint reads its own body: the exchange hands it over unread.
    super(spec.method, path, spec.operation, pipeline, maxBodyBytes, false);
  }

  protected override open(exchange: Exchange): Promise<ServerCall> {
    const pipeline = this.pipeline;
    if (this.spec.authenticate !== false) {
      return pipeline.open(exchange, { deferTenant: this.spec.deferTenant === true });
    }
    if (pipeline.state === 'stopping') return Promise.reject(new UnavailableError('The server is stopping'));
    return Promise.resolve(new ServerCall(exchange, undefined, pipeline.transport, ''));
  }

  override writeRefusal(res: ServerResponse, error: unknown, req: IncomingMessage): void {
    const wire = error instanceof AgentError ? error : this.pipeline.wireError(error, this.operation);
    this.spec.refuse(res, wire, req);
  }

  override decodeLine(exchange: Exchange): Omit<ExchangeInput, 'req' | 'res' | 'readBody'> {
    return {
      params: exchange.pathParams(),
      query: exchange.operationQuery(),
      maxBodyBytes: this.maxBodyBytes,
    };
  }

  answer(exchange: Exchange, call: ServerCall, line: unknown): void {
    const input: ExchangeInput = {
      ...(line as Omit<ExchangeInput, 'req' | 'res' | 'readBody'>),
      req: exchange.req,
      res: exchange.res,
      readBody: (done) => exchange.readBody(done),
    };
    try {
      this.spec.serve(call, input);
    } catch (error) {
      exchange.refuseBody(error);
    }
  }
}
