/** Routing for the backends: which endpoint takes a request, or the 404/405 to answer. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MethodNotAllowedError } from '@agent/core';
import {
  answerAfterDrain,
  isRouteMiss,
  requestPath,
  routeKey,
  RouteTable,
  writeError,
  type RequestScope,
  type RouteMiss,
} from '@agent/server/node';
import type { HttpEndpoint } from './backend.js';
import { PathTemplate } from './path-template.js';

/** The methods an endpoint may serve (HEAD is served by the GET endpoint). */
export const ENDPOINT_METHODS: readonly HttpEndpoint['method'][] = ['GET', 'POST', 'PUT', 'DELETE'];

interface Templated {
  template: PathTemplate;
  byMethod: Map<string, HttpEndpoint>;
}

/**
 * The routes a backend serves: fixed paths through `RouteTable`, then the paths with `{name}`
 * segments, the most specific first (see {@link PathTemplate.precedence}). A fixed path wins, so
 * `POST /tasks/cancel` is the cancel while `GET /tasks/cancel` reads the task whose id is `cancel`;
 * a method that no matching path takes answers 405 with every method those paths have.
 */
export class EndpointRouter {
  private readonly fixed: RouteTable<HttpEndpoint>;
  private readonly templated: Templated[] = [];

  constructor(endpoints: readonly HttpEndpoint[]) {
    const fixed: HttpEndpoint[] = [];
    for (const endpoint of endpoints) {
      const template = PathTemplate.parse(endpoint.path);
      if (template.names.length === 0) {
        fixed.push(endpoint);
        continue;
      }
      let entry = this.templated.find((t) => t.template.key === template.key);
      if (!entry) this.templated.push((entry = { template, byMethod: new Map() }));
      entry.byMethod.set(endpoint.method, endpoint);
    }
    this.templated.sort((a, b) => byPrecedence(a.template, b.template));
    this.fixed = new RouteTable(fixed);
  }

  /** The endpoint for a request, or the 404/405 miss to answer. HEAD is served as GET. */
  match(method: string, path: string): HttpEndpoint | RouteMiss {
    const found = this.fixed.match(method, path);
    if (!isRouteMiss(found) || this.templated.length === 0) return found;
    const segments = routeKey(path).split('/');
    const allowed = found.headers?.allow ? found.headers.allow.split(', ') : [];
    for (const { template, byMethod } of this.templated) {
      if (template.match(segments) === undefined) continue;
      const endpoint = byMethod.get(method === 'HEAD' ? 'GET' : method);
      if (endpoint) return endpoint;
      for (const name of byMethod.keys()) if (!allowed.includes(name)) allowed.push(name);
    }
    if (allowed.length === 0) return found;
    const allow = allowed.join(', ');
    return {
      error: new MethodNotAllowedError(`${method} is not allowed on ${path} (allowed: ${allow})`),
      headers: { allow },
    };
  }
}

/** A total order of templates that puts, of any two that overlap, the one that takes the path first. */
function byPrecedence(a: PathTemplate, b: PathTemplate): number {
  const first = a.precedence(b);
  if (first !== 0) return first;
  const length = a.key.split('/').length - b.key.split('/').length;
  if (length !== 0) return length;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Routes one request for a backend: the endpoint that takes it, or the 404/405 JSON error (after
 * the unread body was drained, so a client still uploading reads the answer rather than a reset).
 */
export function serveRoute(
  router: EndpointRouter,
  maxBodyBytes: number,
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  body?: unknown,
): void {
  const matched = router.match(req.method ?? 'GET', requestPath(req.url ?? '/'));
  if (isRouteMiss(matched)) {
    answerAfterDrain(req, res, maxBodyBytes, () => writeError(res, matched.error, matched.headers));
    return;
  }
  matched.serve(req, res, scope, body);
}
