import {
  CLIENT_OPERATIONS,
  UnsupportedOperationError,
  ValueError,
  type ClientRequestSpec,
  type SendOptions,
  type SubscribeTaskOptions,
  type Task,
  type TaskEvent,
  type TlsOptions,
} from '@agent/core';
import { numberOption } from '@agent/core/internal';
import { TransportBase, type Listening, type ServerPipeline, type TransportDefinition } from '@agent/server';
import { CorsPolicy } from '@agent/server/node';
import type { BackendFactory, BackendOptions } from './backend.js';
import { HttpClient } from './client.js';
import { ExpressBackend } from './express-backend.js';
import { NodeBackend } from './node-backend.js';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  HTTP_OPTION_NAMES,
  type BackendName,
  type HTTPTransportOptions,
} from './options.js';
import { extraEndpoints, routesOption } from './extra-routes.js';
import type { HttpRouteContext, HttpRoutes } from './json-endpoint.js';
import { buildOpenApiDocument, OPENAPI_CONTEXT } from './openapi-document.js';
import { openapiEndpoint } from './openapi-endpoint.js';
import { taskRoutesOpenApi, type OpenApiServing } from './openapi-task-routes.js';
import type { OpenApiDocument } from './openapi-types.js';
import { buildEndpoints } from './server-adapter.js';

const BACKENDS: Record<BackendName, BackendFactory> = {
  node: (options) => new NodeBackend(options),
  express: (options) => new ExpressBackend(options),
};

const DEFINITION: TransportDefinition = {
  kind: 'http',
  className: 'HTTPTransport',
  module: '@agent/transport-http',
  schemes: ['http', 'https'],
  options: HTTP_OPTION_NAMES,
};

/**
 * HTTP/HTTPS transport. Server side: serves a bound TaskHandler on `POST /tasks/`,
 * `POST /tasks/cancel`, `POST /tasks/stream`, `GET /tasks`, `GET /tasks/{id}`,
 * `GET /tasks/{id}/events`, `GET /.well-known/agent.json`, `/healthz` and `/readyz` through a
 * pluggable backend, every route a call of the server pipeline, and beside them the endpoints of the
 * `routes` option (built with `jsonEndpoint`) and the OpenAPI document of them all (`GET /openapi.json`). Client side: `send()` (GET, POST, PUT, DELETE),
 * `subscribe()` and `subscribeTask()` over axios with lazy authentication.
 */
export class HTTPTransport extends TransportBase<HTTPTransportOptions> {
  readonly maxResponseBytes: number;
  private readonly backendFactory: BackendFactory;
  private readonly backendName: BackendName | undefined;
  private readonly client: HttpClient;
  private readonly routes: readonly HttpRoutes[];
  private readonly cors: CorsPolicy | undefined;
  private readonly openapi: OpenApiServing;
  /** The document of the current start, without `servers`, and the whole one once asked for. */
  private document: Omit<OpenApiDocument, 'servers'> | undefined;
  private served: OpenApiDocument | undefined;

  constructor(options: HTTPTransportOptions) {
    super(DEFINITION, options);
    this.maxResponseBytes = numberOption(
      'maxResponseBytes',
      options.maxResponseBytes,
      DEFAULT_MAX_RESPONSE_BYTES,
    );
    const backend = options.backend ?? 'node';
    if (typeof backend === 'function') {
      this.backendFactory = backend;
    } else if (Object.prototype.hasOwnProperty.call(BACKENDS, backend)) {
      this.backendFactory = BACKENDS[backend];
      this.backendName = backend;
    } else {
      throw new ValueError(`Unknown HTTP backend "${String(backend)}" (expected node, express or a factory)`);
    }
    this.routes = routesOption(options.routes);
    this.cors = CorsPolicy.from(DEFINITION.className, options.cors);
    this.openapi = openapiOption(options.openapi);
    this.client = new HttpClient({
      timeoutMs: this.timeoutMs,
      maxResponseBytes: this.maxResponseBytes,
      tls: this.tls,
      headers: () => this.callHeaders(),
      onUnauthenticated: () => this.credentials?.reset(),
    });
  }

  send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options?: SendOptions,
  ): Promise<TResult> {
    if (spec.streaming) {
      return Promise.reject(
        new UnsupportedOperationError(`send() is unary; stream ${spec.name} with subscribe()`),
      );
    }
    return this.client.request<TResult>(spec, baseUrl, data, params, options);
  }

  /** Streams the task over `POST /tasks/stream`: its events, ending with exactly one final status. */
  subscribe(agentUrl: string, task: Task, options?: SendOptions): AsyncIterable<TaskEvent> {
    return this.client.stream(CLIENT_OPERATIONS.stream_task, agentUrl, task, options);
  }

  /**
   * Follows one of the caller's tasks over `GET /tasks/{id}/events`: its events after
   * `options.after` (sent as `Last-Event-ID`), then live ones, ending after the final status; no
   * events when the task finished at or before `after`. TASK_NOT_FOUND for an id the caller does
   * not own. `timeoutMs` bounds the wait for the stream to open.
   */
  subscribeTask(
    agentUrl: string,
    taskId: string,
    options: SubscribeTaskOptions = {},
  ): AsyncIterable<TaskEvent> {
    const { after = 0, ...rest } = options;
    return this.client.stream(
      CLIENT_OPERATIONS.subscribe_task,
      agentUrl,
      { task_id: taskId },
      { ...rest, after },
    );
  }

  /** The outgoing authorization headers (`{}` without credentials); authenticates on first use. */
  buildHeaders(): Promise<Record<string, string>> {
    return this.authHeaders();
  }

  /**
   * The OpenAPI 3.1 document of every route this server serves (what `GET /openapi.json` answers,
   * also when that route is off). ValueError before `start()`: the route sets are asked at start.
   */
  openapiDocument(): OpenApiDocument {
    if (this.served) return this.served;
    const document = this.document;
    if (!document) throw new ValueError('HTTPTransport.openapiDocument() needs a started server');
    const { openapi, info, paths, components, security } = document;
    this.served = {
      openapi,
      info,
      servers: [{ url: this.url }],
      paths,
      components,
      ...(security ? { security } : {}),
    };
    return this.served;
  }

  protected async listen(pipeline: ServerPipeline, tls: TlsOptions | undefined): Promise<Listening> {
    const { basePath } = this.address;
    const options: BackendOptions = {
      maxBodyBytes: this.maxBodyBytes,
      basePath,
      state: () => pipeline.state,
    };
    if (tls) options.tls = tls;
    if (this.cors) options.cors = this.cors;
    const context: HttpRouteContext = { pipeline, basePath, maxBodyBytes: this.maxBodyBytes };
    const own = buildEndpoints(pipeline, basePath, this.maxBodyBytes);
    if (this.openapi !== 'off') {
      own.push(openapiEndpoint(context, this.openapi === 'public', () => this.openapiDocument()));
    }
    // Checked before the backend exists: a conflict fails start() with nothing to clean up.
    const endpoints = [...own, ...extraEndpoints(this.routes, context, own)];
    this.served = undefined;
    this.document = buildOpenApiDocument({
      basePath,
      authenticator: pipeline.authenticator,
      endpoints,
      contributions: [
        { label: 'the task routes', contribution: taskRoutesOpenApi(OPENAPI_CONTEXT, this.openapi) },
        ...this.routes.flatMap((set, i) =>
          set.openapi ? [{ label: `routes[${i}]`, contribution: set.openapi(OPENAPI_CONTEXT) }] : [],
        ),
      ],
    });
    const backend = this.backendFactory(options);
    backend.setupRoutes(endpoints);
    const port = await backend.start(this.address.host, this.address.port);
    return { port, close: () => backend.stop() };
  }

  protected override closeClient(): void {
    this.client.close();
  }

  protected override describeOptions(): Record<string, unknown> {
    const options: Record<string, unknown> = { maxResponseBytes: this.maxResponseBytes };
    if (this.backendName) options.backend = this.backendName;
    return options;
  }
}

/** `openapi`: `true` (default) behind the authenticator, `'public'` without, `false` not served. */
function openapiOption(value: unknown): OpenApiServing {
  if (value === undefined || value === true) return 'authenticated';
  if (value === false) return 'off';
  if (value === 'public') return 'public';
  const message = `HTTPTransport option "openapi" must be true, false or 'public', got ${String(value)}`;
  throw new ValueError(message, { data: { option: 'openapi' } });
}
