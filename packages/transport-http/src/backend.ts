/**
 * The backend contract: `setupRoutes(endpoints)`, `start(host, port)`, `stop()`. A backend only
 * hosts and routes. Every endpoint serves node's request and response itself (authentication, body,
 * the pipeline, the answer), so `node`, `express` and any plugged-in backend answer byte for byte
 * the same.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TlsOptions } from '@agent/core';
import type { ServerState } from '@agent/server';
import type { CorsPolicy, RequestScope } from '@agent/server/node';

export interface HttpEndpoint {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /**
   * Absolute path, the transport URL's path included; matched with no trailing slash or one. A
   * `{name}` segment (`/tasks/{id}`, `/tasks/{id}/events`, `/registry/agents/{name}`) matches one
   * non-empty path segment, and a more specific path wins over it, method by method: a fixed path
   * first (`GET /tasks/cancel` is `/tasks/{id}`, since `/tasks/cancel` is POST only), then the path
   * whose first parameter comes later. The endpoint reads its parameters from the request URL
   * itself, so a backend only has to route. HEAD is served by the GET endpoint.
   */
  readonly path: string;
  /**
   * Serves one request and never throws. `scope` is the request's abort side (NodeHost makes one per
   * request). `body` is a body an earlier middleware already parsed; without one the endpoint reads it.
   */
  serve(req: IncomingMessage, res: ServerResponse, scope: RequestScope, body?: unknown): void;
}

/** A server backend. `start` resolves with the port it listens on (the real one when given 0). */
export interface HttpBackend {
  setupRoutes(endpoints: readonly HttpEndpoint[]): void;
  start(host: string, port: number): Promise<number>;
  /**
   * Closes the listener and every socket. The transport calls it once the pipeline has drained
   * (in-flight calls finished or were canceled after `stopGraceMs`).
   */
  stop(): Promise<void>;
}

/** Settings the transport passes to a backend factory. */
export interface BackendOptions {
  /** Serve HTTPS with these settings (`cert` and `key` required; `requestClientCert` for mutual TLS). */
  tls?: TlsOptions;
  /** Request bodies above this many bytes are refused with 413; refused requests drain up to 8 times this. */
  maxBodyBytes: number;
  /** The path of the transport URL ('' for the root): `/healthz` and `/readyz` live below it. */
  basePath: string;
  /** What `/readyz` reports. */
  state(): ServerState;
  /**
   * The transport's `cors` option, checked. `NodeHost` applies it when given it; a backend that
   * hosts requests itself calls `cors.handle(req, res)` first and stops there when it returns true.
   */
  cors?: CorsPolicy;
}

export type BackendFactory = (options: BackendOptions) => HttpBackend;
