import { MethodNotAllowedError, NotFoundError, type AgentError } from '@agent/core';

export interface Routed {
  method: string;
  /** Absolute path; matched without a trailing slash or with exactly one. */
  path: string;
}

/**
 * Route key: the path without its one trailing slash, so `/tasks` and `/tasks/` are one route. A
 * second trailing slash is an empty path segment, not part of the route: `/tasks//` keeps one slash
 * and matches no route (404), on every backend and for the host's `/healthz` and `/readyz` alike.
 */
export function routeKey(path: string): string {
  const end = path.length;
  return end > 1 && path.charCodeAt(end - 1) === 47 /* '/' */ ? path.slice(0, end - 1) : path;
}

/** A failed match: the error to answer and, for 405, the `Allow` header. */
export interface RouteMiss {
  error: AgentError;
  headers?: Record<string, string>;
}

/** Routes by path, then by method; a request that matches none gets the 404 or 405 answer. */
export class RouteTable<T extends Routed> {
  private readonly routes = new Map<string, Map<string, T>>();

  constructor(routes: readonly T[]) {
    for (const route of routes) {
      const key = routeKey(route.path);
      let byMethod = this.routes.get(key);
      if (!byMethod) this.routes.set(key, (byMethod = new Map()));
      byMethod.set(route.method, route);
    }
  }

  /** The route for a request, or the miss to answer. HEAD is served as GET. */
  match(method: string, path: string): T | RouteMiss {
    const byMethod = this.routes.get(routeKey(path));
    if (!byMethod) return { error: new NotFoundError(`No route for ${method} ${path}`) };
    const route = byMethod.get(method === 'HEAD' ? 'GET' : method);
    if (route) return route;
    const allow = [...byMethod.keys()].join(', ');
    return {
      error: new MethodNotAllowedError(`${method} is not allowed on ${path} (allowed: ${allow})`),
      headers: { allow },
    };
  }

  get paths(): string[] {
    return [...this.routes.keys()];
  }
}

export function isRouteMiss<T extends Routed>(value: T | RouteMiss): value is RouteMiss {
  return 'error' in value && !('method' in value);
}

/**
 * The path of a request target: origin-form (`/tasks/`) as it is, absolute-form
 * (`http://host/tasks/`, which HTTP/1.1 servers must accept) reduced to its path; the query dropped.
 */
export function requestPath(target: string): string {
  let path = target;
  if (path.charCodeAt(0) !== 47 /* '/' */) {
    try {
      path = new URL(path).pathname;
    } catch {
      return path;
    }
  }
  const q = path.indexOf('?');
  return q === -1 ? path : path.slice(0, q);
}
