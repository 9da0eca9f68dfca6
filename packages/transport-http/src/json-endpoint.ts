/**
 * Extra routes: endpoints an HTTPTransport serves beside its task routes (the registry's, a custom
 * set), on the same request plumbing, the same pipeline and the same error policy.
 */
import { ValueError } from '@agent/core';
import type { ServerCall, ServerPipeline } from '@agent/server';
import { writeError, writeJson } from '@agent/server/node';
import type { HttpEndpoint } from './backend.js';
import { ExchangeRoute, type Exchange } from './exchange.js';
import type { OpenApiContext, OpenApiContribution } from './openapi-types.js';
import { ENDPOINT_METHODS } from './router.js';

/** Extra endpoints an HTTPTransport serves beside its task routes (e.g. the registry's). */
export interface HttpRoutes {
  /**
   * The endpoints to serve, asked once per `start()` (a restarted transport asks again, with the new
   * pipeline). Paths are absolute: below `context.basePath`, as {@link jsonEndpoint} builds them.
   */
  endpoints(context: HttpRouteContext): HttpEndpoint[];
  /**
   * Describes the endpoints in the transport's OpenAPI document (`GET /openapi.json`): paths below
   * the transport URL's path, as `endpoints()` names them. Asked once per `start()`. Without it the
   * endpoints are listed bare, marked `x-undocumented`.
   */
  openapi?(context: OpenApiContext): OpenApiContribution;
}

/** What a route set gets from the transport that serves it. */
export interface HttpRouteContext {
  /** The transport's server pipeline: its authenticator, tenant rule and error policy. */
  pipeline: ServerPipeline;
  /** The path of the transport URL (`''` for the root): every endpoint lives below it. */
  basePath: string;
  /** The transport's `maxBodyBytes`: request bodies above it are refused with 413. */
  maxBodyBytes: number;
}

/** What an extra endpoint's `run` gets besides the call. */
export interface JsonEndpointInput {
  /** The parsed JSON body when the endpoint reads one (`body: true`), else undefined. */
  body: unknown;
  /** The `{name}` segments of the path, percent-decoded. */
  params: Record<string, string>;
  /** The query string, without the credential parameters an authenticator reads (`api_key`, …). */
  query: URLSearchParams;
}

/** What `run` answers: a JSON body (`undefined` is sent as `null`), with `status` (an integer 200–599, default 200). */
export interface JsonEndpointAnswer {
  status?: number;
  body: unknown;
}

export interface JsonEndpointSpec {
  method: HttpEndpoint['method'];
  /** The route below the transport URL's path, e.g. `/registry/agents/{name}`; `{name}` matches one segment. */
  path: string;
  /** The operation's name in the error policy's log line (`register_agent`). */
  operation: string;
  /** Read and parse a JSON body (required: an empty body is a 400). False: any body is ignored. */
  body: boolean;
  /**
   * Runs the operation under an opened call (`call.owner` is its tenant and principal;
   * `call.request.signal` aborts when the caller goes away). A rejection is answered through the
   * pipeline's error policy: an AgentError as itself, anything else as a logged 500 INTERNAL.
   */
  run(call: ServerCall, input: JsonEndpointInput): Promise<JsonEndpointAnswer>;
}

/**
 * The one way an extra endpoint serves a request: opens the call on the pipeline (refuse while
 * stopping, authenticate, tenant), reads and parses the JSON body when `body: true` (maxBodyBytes,
 * one Content-Encoding rule, malformed JSON → 400), decodes the path params, runs `run`, answers
 * JSON with `status` (default 200) or the wire error via the pipeline's error policy.
 * ValueError for a spec that is not one (unknown method, malformed path, no `run`).
 */
export function jsonEndpoint(spec: JsonEndpointSpec, context: HttpRouteContext): HttpEndpoint {
  if (typeof spec !== 'object' || spec === null) throw new ValueError('jsonEndpoint() needs a spec object');
  const { method, path, operation, body, run } = spec;
  if (!ENDPOINT_METHODS.includes(method)) {
    throw new ValueError(
      `jsonEndpoint(): method must be one of ${ENDPOINT_METHODS.join(', ')}, got ${String(method)}`,
    );
  }
  if (typeof operation !== 'string' || operation === '') {
    throw new ValueError('jsonEndpoint(): operation must be a non-empty string');
  }
  if (typeof body !== 'boolean') throw new ValueError('jsonEndpoint(): body must be true or false');
  if (typeof run !== 'function') throw new ValueError('jsonEndpoint(): run must be a function');
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new ValueError(`jsonEndpoint(): path must start with "/", got ${JSON.stringify(path)}`);
  }
  if (typeof context?.basePath !== 'string') {
    throw new ValueError('jsonEndpoint() needs the route context its HttpRoutes.endpoints() was given');
  }
  const { pipeline, basePath, maxBodyBytes } = context;
  return new JsonRoute(method, basePath + path, operation, pipeline, maxBodyBytes, body, run);
}

class JsonRoute extends ExchangeRoute {
  constructor(
    method: HttpEndpoint['method'],
    path: string,
    operation: string,
    pipeline: ServerPipeline,
    maxBodyBytes: number,
    readsBody: boolean,
    private readonly run: JsonEndpointSpec['run'],
  ) {
    super(method, path, operation, pipeline, maxBodyBytes, readsBody);
  }

  override decodeLine(exchange: Exchange): Omit<JsonEndpointInput, 'body'> {
    return { params: exchange.pathParams(), query: exchange.operationQuery() };
  }

  answer(exchange: Exchange, call: ServerCall, line: unknown, body: unknown): void {
    const input: JsonEndpointInput = { ...(line as Omit<JsonEndpointInput, 'body'>), body };
    const res = exchange.res;
    const failed = (error: unknown): void =>
      writeError(res, this.pipeline.wireError(error, this.operation, call));
    let answered: Promise<JsonEndpointAnswer>;
    try {
      answered = Promise.resolve(this.run(call, input));
    } catch (error) {
      failed(error);
      return;
    }
    answered.then((answer: JsonEndpointAnswer | undefined) => {
      const status = answer?.status ?? 200;
      // A bug of the endpoint, not the caller's: a plain error, so the policy logs it and masks it.
      if (typeof answer !== 'object' || answer === null) {
        failed(new TypeError(`${this.operation} resolved with ${String(answer)}, not { status?, body }`));
      } else if (!Number.isInteger(status) || status < 200 || status > 599) {
        failed(new RangeError(`${this.operation} answered the invalid HTTP status ${String(status)}`));
      } else {
        try {
          // JSON has no undefined: an answer without a body is `null`.
          writeJson(res, status, answer.body === undefined ? null : answer.body);
        } catch (error) {
          // A body JSON cannot carry at all (a function) throws before anything is written.
          failed(error);
        }
      }
    }, failed);
  }
}
