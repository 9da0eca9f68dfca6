/**
 * A2AServer: A2A 1.0 on an HTTPTransport, as a set of extra routes over the transport's pipeline —
 * the public card, the JSON-RPC binding and the HTTP+JSON binding, with the pipeline's authentication,
 * owner and tenant model and error policy.
 */
import { AGENT_CARD_PATH } from '../agent-card.js';
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { type AgentError, type Task, ValueError } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import type { ServerCall, ServerPipeline } from '@agent/server';
import {
  type ExchangeInput,
  type HttpEndpoint,
  type HttpRouteContext,
  type HttpRoutes,
  type OpenApiContext,
  type OpenApiContribution,
  exchangeEndpoint,
} from '@agent/transport-http';
import { toA2AAgentCard, type A2ACardFields } from '../agent-card.js';
import { toRestError } from '../a2a-errors.js';
import { type PushAttempt, PushNotifier, type PushOptions } from '../push/push-notifier.js';
import { A2AOperations } from './a2a-operations.js';
import { a2aOpenApi } from './a2a-openapi.js';
import { wwwAuthenticate, writeJsonBody } from './http.js';
import { JsonRpcBinding, writeRpcError } from './json-rpc-binding.js';
import { RestBinding, restRoutes, writeRestError } from './rest-binding.js';

export interface A2AServerOptions {
  /** Where the JSON-RPC binding lives below the transport URL. Default '/a2a'. */
  jsonRpcPath?: string;
  /** Where the HTTP+JSON binding lives below the transport URL. Default '/a2a/rest'. */
  restPath?: string;
  /** Card fields the native card lacks. */
  card?: A2ACardFields;
  /** The public URL the card advertises (behind a proxy). Default: the native card's url, else the Host header. */
  publicUrl?: string;
  /** Card `Cache-Control` max-age in seconds. Default 300. */
  cardMaxAgeSeconds?: number;
  /** Served by GetExtendedAgentCard to authenticated callers, over the public card; `capabilities.extendedAgentCard` is true when set. */
  extendedCard?: (call: ServerCall) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Push notifications; false turns them off (capability false, push methods -32003). Default on. */
  push?: PushOptions | false;
  /** Receives every push delivery attempt (with `push.onAttempt`, when both are set). */
  onPushAttempt?: (attempt: PushAttempt) => void;
  /** Interface tenant advertised on the card (clients echo it). Default none. */
  tenant?: string;
  /**
   * Picks the new tasks whose answer is a Message rather than a Task (A2A's message-only reply): it
   * sees the task before it runs; once it has run, a send answers `{"message": <its last agent
   * message>}` and a stream is that one `message` frame. The task is recorded all the same.
   */
  replyAsMessage?: (task: Task) => boolean;
}

const OPTION_NAMES = optionNames<A2AServerOptions>({
  jsonRpcPath: true,
  restPath: true,
  card: true,
  publicUrl: true,
  cardMaxAgeSeconds: true,
  extendedCard: true,
  push: true,
  onPushAttempt: true,
  tenant: true,
  replyAsMessage: true,
});

function routePath(value: unknown, name: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !value.startsWith('/') || value.length < 2 || /[{}?#]/.test(value)) {
    throw new ValueError(
      `A2AServer option ${name} must be a path such as "${fallback}", got ${JSON.stringify(value)}`,
    );
  }
  return value.replace(/\/+$/, '');
}

/** `"<sha-256 hex>"` of a body: a strong ETag. */
function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('hex')}"`;
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

export class A2AServer implements HttpRoutes {
  private readonly options: A2AServerOptions;
  private readonly jsonRpcPath: string;
  private readonly restPath: string;
  private readonly maxAge: number;
  private notifier: PushNotifier | undefined;
  private readonly operations = new Set<A2AOperations>();

  constructor(options: A2AServerOptions = {}) {
    checkOptionNames('A2AServer', options, OPTION_NAMES);
    this.options = options;
    this.jsonRpcPath = routePath(options.jsonRpcPath, 'jsonRpcPath', '/a2a');
    this.restPath = routePath(options.restPath, 'restPath', '/a2a/rest');
    const maxAge = options.cardMaxAgeSeconds ?? 300;
    if (options.replyAsMessage !== undefined && typeof options.replyAsMessage !== 'function') {
      throw new ValueError('A2AServer option replyAsMessage must be a function of the task');
    }
    if (!Number.isInteger(maxAge) || maxAge < 0) {
      throw new ValueError(
        `A2AServer option cardMaxAgeSeconds must be a whole number ≥ 0, got ${String(maxAge)}`,
      );
    }
    this.maxAge = maxAge;
    if (options.tenant !== undefined && (typeof options.tenant !== 'string' || options.tenant === '')) {
      throw new ValueError('A2AServer option tenant must be a non-empty string');
    }
  }

  endpoints(context: HttpRouteContext): HttpEndpoint[] {
    const { pipeline } = context;
    const challenge = wwwAuthenticate(pipeline.authenticator);
    const push = this.pushNotifier(pipeline);
    const ops = new A2AOperations(pipeline, {
      push,
      extendedCard: this.options.extendedCard,
      replyAsMessage: this.options.replyAsMessage,
      publicCard: async (call) => this.publicCard(pipeline, call, context.basePath),
    });
    this.operations.add(ops);
    const rpc = new JsonRpcBinding(pipeline, ops, challenge);
    const rest = new RestBinding(pipeline, challenge);
    const endpoints: HttpEndpoint[] = [
      exchangeEndpoint(
        {
          method: 'GET',
          path: AGENT_CARD_PATH,
          operation: 'get_agent_card',
          authenticate: false,
          refuse: (res, error) => writeRestError(res, error, challenge),
          serve: (call, input) => void this.serveCard(pipeline, call, input, context.basePath),
        },
        context,
      ),
      exchangeEndpoint(
        {
          method: 'POST',
          path: this.jsonRpcPath,
          operation: 'a2a_jsonrpc',
          deferTenant: true,
          refuse: (res, error) => writeRpcError(res, error, null, challenge),
          serve: (call, input) => rpc.serve(call, input),
        },
        context,
      ),
    ];
    for (const route of restRoutes(ops)) {
      for (const prefix of ['', '/{tenant}']) {
        endpoints.push(
          exchangeEndpoint(
            {
              method: route.method,
              path: `${this.restPath}${prefix}${route.path}`,
              operation: 'a2a_rest',
              deferTenant: true,
              refuse: (res: ServerResponse, error: AgentError) => writeRestError(res, error, challenge),
              serve: (call, input) => rest.serve(route, call, input),
            },
            context,
          ),
        );
      }
    }
    return endpoints;
  }

  /**
   * Every route above in the transport's OpenAPI document (`GET /openapi.json`): the card, the
   * JSON-RPC binding and each HTTP+JSON route, with A2A's ProtoJSON schemas and error bodies.
   */
  openapi(context: OpenApiContext): OpenApiContribution {
    return a2aOpenApi(context, {
      jsonRpcPath: this.jsonRpcPath,
      restPath: this.restPath,
      cardMaxAgeSeconds: this.maxAge,
    });
  }

  /** Stops push deliveries and detaches push followers; the tasks themselves run on. */
  async close(): Promise<void> {
    const operations = [...this.operations];
    this.operations.clear();
    await Promise.all(operations.map((ops) => ops.close()));
    const notifier = this.notifier;
    this.notifier = undefined;
    await notifier?.close();
  }

  private pushNotifier(pipeline: ServerPipeline): PushNotifier | undefined {
    if (this.options.push === false) return undefined;
    if (this.notifier) return this.notifier;
    const given = this.options.push ?? {};
    const extra = this.options.onPushAttempt;
    const options: PushOptions = { ...given };
    if (extra) {
      const own = given.onAttempt;
      options.onAttempt = (attempt) => {
        own?.(attempt);
        extra(attempt);
      };
    }
    this.notifier = new PushNotifier(options, { logger: pipeline.logger });
    return this.notifier;
  }

  /** The transport's public base URL for this request. */
  private baseUrl(cardUrl: string, req: IncomingMessage, basePath: string): string {
    const configured = this.options.publicUrl ?? (cardUrl !== '' ? cardUrl : undefined);
    if (configured !== undefined) return configured.replace(/\/+$/, '');
    const secure = (req.socket as Partial<TLSSocket>).encrypted === true;
    const host =
      req.headers.host ?? `${req.socket.localAddress ?? 'localhost'}:${req.socket.localPort ?? ''}`;
    return `${secure ? 'https' : 'http'}://${host}${basePath}`;
  }

  private async publicCard(
    pipeline: ServerPipeline,
    call: ServerCall,
    basePath: string,
  ): Promise<Record<string, unknown>> {
    const native = await pipeline.card(call);
    const req = (call.request as { req?: IncomingMessage }).req;
    const base = req
      ? this.baseUrl(native.url ?? '', req, basePath)
      : (this.options.publicUrl ?? native.url ?? '');
    const options: Parameters<typeof toA2AAgentCard>[1] = {
      jsonRpcUrl: `${base}${this.jsonRpcPath}`,
      restUrl: `${base}${this.restPath}`,
      pushNotifications: this.options.push !== false,
      extendedAgentCard: this.options.extendedCard !== undefined,
    };
    if (this.options.tenant) options.tenant = this.options.tenant;
    if (this.options.card) options.fields = this.options.card;
    if (pipeline.authenticator) options.authenticator = pipeline.authenticator;
    return toA2AAgentCard(native, options) as unknown as Record<string, unknown>;
  }

  private async serveCard(
    pipeline: ServerPipeline,
    call: ServerCall,
    input: ExchangeInput,
    basePath: string,
  ): Promise<void> {
    const { req, res } = input;
    let body: string;
    try {
      body = JSON.stringify(await this.publicCard(pipeline, call, basePath));
    } catch (error) {
      const { status, body: errorBody } = toRestError(pipeline.wireError(error, 'get_agent_card', call));
      writeJsonBody(res, status, errorBody);
      return;
    }
    const etag = etagOf(body);
    const headers = { etag, 'cache-control': `public, max-age=${this.maxAge}` };
    if (matchesEtag(req.headers['if-none-match'], etag)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, {
      ...headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  }
}
