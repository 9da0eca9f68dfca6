/**
 * The routes HTTPTransport serves, built once per start and shared by every backend, so `node`,
 * `express` and any plugged-in backend answer byte for byte the same.
 */
import {
  CLIENT_OPERATIONS,
  UnavailableError,
  ValidationError,
  normalizeHeaders,
  parseCancelRequest,
  readTaskPayload,
  type AgentCard,
  type CallContext,
  type TaskHandler,
} from '@agent/core';
import { authenticateRequest, type Authenticator } from '@agent/auth';
import type { EndpointRequest, EndpointResponse, HttpEndpoint, RequestHead } from './backend.js';
import { errorResponse } from './error-response.js';

export type ServerState = 'starting' | 'ready' | 'stopping';

export interface EndpointSources {
  handler: TaskHandler;
  authenticator?: Authenticator;
  /** Strict schema checks: unknown fields are rejected (422). */
  validateSchema: boolean;
  /** Prefix of every route, '' for the root (the path part of the transport URL). */
  basePath: string;
  state(): ServerState;
}

const ok = (body: unknown): EndpointResponse => ({ status: 200, body });
const CANCEL_FIELDS = new Set(['task_id', 'id', 'reason', 'metadata']);
const HEALTH_OK: EndpointResponse = { status: 200, body: { status: 'ok' } };
const READY: EndpointResponse = { status: 200, body: { status: 'ready' } };
const NOT_READY = {
  starting: { status: 503, body: { status: 'starting' } },
  stopping: { status: 503, body: { status: 'stopping' } },
};

export function buildEndpoints(sources: EndpointSources): HttpEndpoint[] {
  const { handler, authenticator, basePath } = sources;
  const strict = sources.validateSchema;
  const authenticate = authenticator
    ? (head: RequestHead) => authenticateRequest({ authenticator, headers: head.headers, query: head.query })
    : undefined;

  /**
   * The signal and the normalized header copy are built on first access, so a handler that reads
   * neither costs nothing extra. Own enumerable getters, so that spreading the context keeps them.
   */
  function context(request: EndpointRequest): CallContext {
    let headers: Record<string, string> | undefined;
    const ctx: CallContext = {
      transport: 'http',
      get signal() {
        return request.signal;
      },
      get headers() {
        headers ??= normalizeHeaders(request.headers);
        return headers;
      },
    };
    if (request.security) ctx.security = request.security;
    return ctx;
  }

  /** A protected route: refused while stopping, every failure mapped to the JSON error body. */
  function route(
    spec: { method: 'GET' | 'POST'; path: string },
    readsBody: boolean,
    run: (request: EndpointRequest, ctx: CallContext) => Promise<unknown> | unknown,
  ): HttpEndpoint {
    const endpoint: HttpEndpoint = {
      method: spec.method,
      path: basePath + spec.path,
      readsBody,
      // Plain promise chaining rather than async/await: one promise per request on the hot path.
      handle(request) {
        let result: unknown;
        try {
          if (sources.state() === 'stopping') throw new UnavailableError('Server is stopping');
          result = run(request, context(request));
        } catch (error) {
          return Promise.resolve(errorResponse(error));
        }
        return Promise.resolve(result).then(ok, errorResponse);
      },
    };
    if (authenticate) endpoint.authenticate = authenticate;
    return endpoint;
  }

  function publicRoute(path: string, answer: () => EndpointResponse): HttpEndpoint {
    return { method: 'GET', path: basePath + path, readsBody: false, handle: async () => answer() };
  }

  return [
    route(CLIENT_OPERATIONS.send_task, true, (request, ctx) =>
      handler.handleTask(readTaskPayload(request.body, { strict }), ctx),
    ),
    route(CLIENT_OPERATIONS.cancel_task, true, (request, ctx) => {
      if (strict) rejectUnknownCancelFields(request.body);
      const { taskId, reason } = parseCancelRequest(request.body);
      return handler.cancelTask(taskId, reason, ctx);
    }),
    route(CLIENT_OPERATIONS.get_card, false, async (_request, ctx) =>
      withSecuritySchemes(await handler.getAgentCard(ctx), authenticator),
    ),
    publicRoute('/healthz', () => HEALTH_OK),
    publicRoute('/readyz', () => {
      const state = sources.state();
      return state === 'ready' ? READY : NOT_READY[state];
    }),
  ];
}

function rejectUnknownCancelFields(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const unknown = Object.keys(body).filter((key) => !CANCEL_FIELDS.has(key));
  if (unknown.length === 0) return;
  const errors = unknown.map((key) => ({ pointer: `/${key}`, message: 'is not allowed' }));
  throw new ValidationError(
    `Invalid cancel request: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`,
    {
      data: { errors },
    },
  );
}

/**
 * A card served behind an authenticator advertises it (SPEC.md "Discovery"), even when the bound
 * handler does not know the transport's authenticator; a card that already names schemes is kept.
 */
function withSecuritySchemes(card: AgentCard, authenticator: Authenticator | undefined): AgentCard {
  if (!authenticator || card.securitySchemes) return card;
  const scheme = authenticator.securityScheme;
  return { ...card, securitySchemes: { [scheme.authType]: scheme.toDict() } };
}
