import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SecurityContextLike } from '@agent/core';
import type { BackendOptions, EndpointResponse, HttpBackend, HttpEndpoint } from './backend.js';
import { errorResponse } from './error-response.js';
import { answerAfterDrain, readJsonBody } from './json-body.js';
import { isEndpoint, RouteTable } from './route-table.js';
import { type RequestScope, ScopedRequest, ServerHost } from './server-host.js';
import { writeJson } from './write-json.js';

/**
 * The default backend: a route table straight on `node:http`/`node:https`. Per request it does one
 * map lookup, at most one body read and one `JSON.stringify`; no middleware chain.
 */
export class NodeBackend implements HttpBackend {
  private routes = new RouteTable([]);
  private readonly host: ServerHost;

  constructor(private readonly options: BackendOptions) {
    this.host = new ServerHost((req, res, scope) => this.serve(req, res, scope), options);
  }

  setupRoutes(endpoints: readonly HttpEndpoint[]): void {
    this.routes = new RouteTable(endpoints);
  }

  start(host: string, port: number): Promise<number> {
    return this.host.start(host, port);
  }

  stop(): Promise<void> {
    return this.host.stop();
  }

  private serve(req: IncomingMessage, res: ServerResponse, scope: RequestScope): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const matched = this.routes.match(req.method ?? 'GET', q === -1 ? url : url.slice(0, q));
    if (!isEndpoint(matched)) {
      this.refuse(req, res, matched);
      return;
    }
    if (!matched.authenticate) {
      this.afterAuth(matched, req, res, scope, undefined);
      return;
    }
    const query = q === -1 ? undefined : new URLSearchParams(url.slice(q + 1));
    matched
      .authenticate({ headers: req.headers, query })
      .then(
        (security) => this.afterAuth(matched, req, res, scope, security),
        (error: unknown) => this.refuse(req, res, errorResponse(error)),
      )
      .catch((error: unknown) => writeJson(res, errorResponse(error)));
  }

  private afterAuth(
    endpoint: HttpEndpoint,
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    security: SecurityContextLike | undefined,
  ): void {
    if (!endpoint.readsBody) {
      this.handle(endpoint, req, res, scope, undefined, security);
      return;
    }
    readJsonBody(req, this.options.maxBodyBytes, (error, body) => {
      if (error) this.refuse(req, res, errorResponse(error));
      else this.handle(endpoint, req, res, scope, body, security);
    });
  }

  private handle(
    endpoint: HttpEndpoint,
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    body: unknown,
    security: SecurityContextLike | undefined,
  ): void {
    endpoint.handle(new ScopedRequest(req.headers, body, scope, security)).then(
      (response) => writeJson(res, response),
      (error: unknown) => writeJson(res, errorResponse(error)),
    );
  }

  /** A refused request may still have an unread body: drain it (bounded) before answering. */
  private refuse(req: IncomingMessage, res: ServerResponse, response: EndpointResponse): void {
    answerAfterDrain(req, res, this.options.maxBodyBytes, () => writeJson(res, response));
  }
}
