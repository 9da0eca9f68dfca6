import type { TransportOptions } from '@agent/server';
import type { CorsOptions } from '@agent/server/node';
import type { BackendFactory } from './backend.js';
import type { HttpRoutes } from './json-endpoint.js';

/** Built-in backends: `node` (a router on node:http, the fast default) and `express` (express 5). */
export type BackendName = 'node' | 'express';

/** The shared transport vocabulary (`TransportOptions` from `@agent/server`) plus the HTTP-only options. */
export interface HTTPTransportOptions extends TransportOptions {
  /** Server backend, by name or as a factory of a custom backend. Default `node`. */
  backend?: BackendName | BackendFactory;
  /** Client side: responses (success, error or one stream event) above this many bytes are refused with PAYLOAD_TOO_LARGE. Default 4 MiB. */
  maxResponseBytes?: number;
  /**
   * Server side: extra endpoints served beside the task routes on the same pipeline (authenticator,
   * tenant, error policy), such as a `Registry`'s. Asked for their endpoints at every `start()`.
   */
  routes?: readonly HttpRoutes[];
  /**
   * Server side: which other origins' pages may call the server (preflights answered before
   * authentication; every response marked for an allowed origin). Default: none (no CORS headers).
   */
  cors?: CorsOptions;
  /**
   * Server side: serve the OpenAPI 3.1 document of every route at `GET /openapi.json`: `true`
   * (default) behind the authenticator like the card, `'public'` without credentials, `false` not at all.
   */
  openapi?: boolean | 'public';
}

/** The option names HTTPTransport accepts beyond the shared ones. */
export const HTTP_OPTION_NAMES = ['backend', 'maxResponseBytes', 'routes', 'cors', 'openapi'] as const;

export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
