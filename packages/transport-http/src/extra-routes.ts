/**
 * The `routes` option of HTTPTransport: the route sets it accepts, and at start the endpoints they
 * give, checked against each other and against the task routes.
 */
import { ValueError } from '@agent/core';
import type { HttpEndpoint } from './backend.js';
import type { HttpRouteContext, HttpRoutes } from './json-endpoint.js';
import { PathTemplate } from './path-template.js';
import { ENDPOINT_METHODS } from './router.js';

/** Reads the `routes` option: a list of objects with an `endpoints(context)` method (`[]` when absent). */
export function routesOption(value: unknown): readonly HttpRoutes[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw routesError(`expected an array of route sets, got ${typeof value}`);
  value.forEach((routes: unknown, i) => {
    const endpoints = (routes as Partial<HttpRoutes> | null)?.endpoints;
    if (typeof routes !== 'object' || routes === null || typeof endpoints !== 'function') {
      throw routesError(`routes[${i}] has no endpoints(context) method`);
    }
    const openapi = (routes as Partial<HttpRoutes>).openapi;
    if (openapi !== undefined && typeof openapi !== 'function') {
      throw routesError(`routes[${i}].openapi must be a method, got ${typeof openapi}`);
    }
  });
  return Object.freeze([...(value as HttpRoutes[])]);
}

/**
 * The endpoints of every route set for one start, after the task routes' own, checked by
 * {@link checkExtraEndpoints}. What a route set's `endpoints()` throws, start() rejects with.
 */
export function extraEndpoints(
  routes: readonly HttpRoutes[],
  context: HttpRouteContext,
  taskEndpoints: readonly HttpEndpoint[],
): HttpEndpoint[] {
  if (routes.length === 0) return [];
  const sources = routes.map((set, i): EndpointSource => {
    const endpoints: unknown = set.endpoints(context);
    if (!Array.isArray(endpoints)) throw routesError(`routes[${i}].endpoints() did not return an array`);
    return { label: `routes[${i}]`, endpoints };
  });
  return checkExtraEndpoints(taskEndpoints, sources, context.basePath);
}

/** Where an endpoint came from, for the messages of {@link checkExtraEndpoints}. */
export interface EndpointSource {
  /** `routes[i]`, or `the task routes` for the transport's own. */
  readonly label: string;
  readonly endpoints: readonly unknown[];
}

interface Checked {
  endpoint: HttpEndpoint;
  template: PathTemplate;
  label: string;
  extra: boolean;
}

/**
 * Checks the extra endpoints a transport serves beside its task routes, at start: each is an
 * HttpEndpoint (a known method, a path below `basePath`, a `serve` function), none is the host's
 * probe (`GET …/healthz`, `GET …/readyz`, which it would never reach), and none takes a request that
 * another endpoint takes too: two endpoints of one method and one path shape (`/a/{x}` and `/a/{y}`
 * are one) conflict, and so does an extra endpoint that would win a path from a task route (`GET
 * /tasks/special` over `GET /tasks/{id}`). An extra endpoint may be more general than another
 * (`/{x}` beside `/tasks`): the more specific one keeps its paths. ValueError naming both otherwise.
 */
export function checkExtraEndpoints(
  taskEndpoints: readonly HttpEndpoint[],
  extra: readonly EndpointSource[],
  basePath: string,
): HttpEndpoint[] {
  const all: Checked[] = taskEndpoints.map((endpoint) => ({
    endpoint,
    template: PathTemplate.parse(endpoint.path),
    label: 'the task routes',
    extra: false,
  }));
  const probes = [`${basePath}/healthz`, `${basePath}/readyz`];
  const accepted: HttpEndpoint[] = [];
  for (const { label, endpoints } of extra) {
    for (const candidate of endpoints) {
      const endpoint = asEndpoint(candidate, label);
      const template = parsePath(endpoint.path, label);
      const name = `${endpoint.method} ${endpoint.path}`;
      if (template.key !== basePath && !template.key.startsWith(`${basePath}/`)) {
        throw routesError(`${label}: ${name} is not below the transport's path "${basePath}"`);
      }
      if (endpoint.method === 'GET' && probes.includes(template.key)) {
        throw routesError(`${label}: ${name} is the host's own probe; it would never be reached`);
      }
      for (const other of all) {
        if (other.endpoint.method !== endpoint.method || !template.overlaps(other.template)) continue;
        const precedence = template.precedence(other.template);
        if (precedence === 0 || (precedence < 0 && !other.extra)) {
          const otherName = `${other.endpoint.method} ${other.endpoint.path}`;
          throw routesError(
            `${label}: ${name} conflicts with ${otherName} of ${other.label} (both would take some requests)`,
          );
        }
      }
      all.push({ endpoint, template, label, extra: true });
      accepted.push(endpoint);
    }
  }
  return accepted;
}

function asEndpoint(candidate: unknown, label: string): HttpEndpoint {
  if (typeof candidate !== 'object' || candidate === null) {
    throw routesError(`${label}: an endpoint must be an object, got ${String(candidate)}`);
  }
  const { method, path, serve } = candidate as Partial<HttpEndpoint>;
  if (!ENDPOINT_METHODS.includes(method as HttpEndpoint['method'])) {
    throw routesError(
      `${label}: an endpoint's method must be one of ${ENDPOINT_METHODS.join(', ')}, got ${String(method)}`,
    );
  }
  if (typeof path !== 'string') throw routesError(`${label}: ${String(method)} endpoint without a path`);
  if (typeof serve !== 'function') throw routesError(`${label}: ${method} ${path} has no serve() function`);
  return candidate as HttpEndpoint;
}

function parsePath(path: string, label: string): PathTemplate {
  try {
    return PathTemplate.parse(path);
  } catch (error) {
    throw routesError(`${label}: ${(error as Error).message}`);
  }
}

/** Every refusal of the `routes` option names it, in the message and in `data.option`. */
export function routesError(message: string): ValueError {
  return new ValueError(`HTTPTransport option "routes": ${message}`, { data: { option: 'routes' } });
}
