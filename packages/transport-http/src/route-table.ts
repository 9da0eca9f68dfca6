import { MethodNotAllowedError, NotFoundError } from '@agent/core';
import type { EndpointResponse, HttpEndpoint } from './backend.js';
import { errorResponse } from './error-response.js';

/** Route key: the path without trailing slashes, so `/tasks` and `/tasks/` are one route. */
export function routeKey(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 47 /* '/' */) end--;
  return end === path.length ? path : path.slice(0, end);
}

/** Endpoints by path, then by method; answers the 404/405 bodies for requests that match none. */
export class RouteTable {
  private readonly routes = new Map<string, Map<string, HttpEndpoint>>();

  constructor(endpoints: readonly HttpEndpoint[]) {
    for (const endpoint of endpoints) {
      const key = routeKey(endpoint.path);
      let byMethod = this.routes.get(key);
      if (!byMethod) this.routes.set(key, (byMethod = new Map()));
      byMethod.set(endpoint.method, endpoint);
    }
  }

  /** The endpoint for a request, or the 404/405 response when there is none. HEAD is served as GET. */
  match(method: string, path: string): HttpEndpoint | EndpointResponse {
    const byMethod = this.routes.get(routeKey(path));
    if (!byMethod) return errorResponse(new NotFoundError(`No route for ${method} ${path}`));
    const endpoint = byMethod.get(method === 'HEAD' ? 'GET' : method);
    if (endpoint) return endpoint;
    const allow = [...byMethod.keys()].join(', ');
    return errorResponse(
      new MethodNotAllowedError(`${method} is not allowed on ${path} (allowed: ${allow})`),
      {
        allow,
      },
    );
  }

  get paths(): string[] {
    return [...this.routes.keys()];
  }
}

export function isEndpoint(value: HttpEndpoint | EndpointResponse): value is HttpEndpoint {
  return 'handle' in value;
}
