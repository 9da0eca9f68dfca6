/**
 * The backend contract (SPEC.md "Backend contract"): `setupRoutes(endpoints)`, `start(host, port)`,
 * `stop()`. A backend only moves bytes: routing, authentication, body limits and error mapping are
 * decided by the endpoints the transport hands it, so every backend answers the same way.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { SecurityContextLike, TlsOptions } from '@agent/core';

/** What an endpoint sees of a request before its body is read. */
export interface RequestHead {
  headers: IncomingHttpHeaders;
  /** Query parameters, or undefined when the URL has none. */
  query: URLSearchParams | undefined;
}

export interface EndpointRequest {
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when the route reads none or the request had none). */
  body: unknown;
  /** Aborts when the client disconnects or a stop times out. A disconnect is not a task cancel. */
  signal: AbortSignal;
  /** Set when the endpoint's `authenticate` accepted the caller. */
  security: SecurityContextLike | undefined;
}

export interface EndpointResponse {
  status: number;
  /** Serialized once with `JSON.stringify`. */
  body: unknown;
  headers?: Readonly<Record<string, string>>;
}

export interface HttpEndpoint {
  method: 'GET' | 'POST';
  /** Absolute path; the backends match it with or without a trailing slash. */
  path: string;
  /** Runs before the body is read; rejects with UnauthenticatedError. Absent on public routes. */
  authenticate?: (head: RequestHead) => Promise<SecurityContextLike | undefined>;
  /** True when the route takes a JSON body (read once, capped at `maxBodyBytes`). */
  readsBody: boolean;
  /** Never rejects: failures come back as an error response. */
  handle(request: EndpointRequest): Promise<EndpointResponse>;
}

/** A server backend. `start` resolves with the port it listens on (the real one when given 0). */
export interface HttpBackend {
  setupRoutes(endpoints: readonly HttpEndpoint[]): void;
  start(host: string, port: number): Promise<number>;
  /** Drains in-flight requests (bounded by `stopTimeoutMs`), then closes every socket. Idempotent. */
  stop(): Promise<void>;
}

/** Settings the transport passes to a backend factory. */
export interface BackendOptions {
  /** Serve HTTPS with these settings (`cert` and `key` required; `requestClientCert` for mutual TLS). */
  tls?: TlsOptions;
  /** Request bodies above this many bytes are refused with 413. */
  maxBodyBytes: number;
  /** How long `stop()` waits for in-flight requests before aborting them and closing sockets, in ms. */
  stopTimeoutMs: number;
}

export type BackendFactory = (options: BackendOptions) => HttpBackend;
