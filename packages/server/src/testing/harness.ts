import type { Authenticator } from '@agent/auth';
import type { Logger, Transport, TransportKind } from '@agent/core';

/** What the contract suite asks of a server transport it builds. */
export interface ContractServerOptions {
  authenticator?: Authenticator;
  /** Passed as the transport's `stopGraceMs`. */
  stopGraceMs?: number;
  /** Passed as the transport's `logger`: the suite reads the error lines it receives. */
  logger?: Logger;
}

/** What the contract suite asks of a client it builds. */
export interface ContractClientOptions {
  authenticator?: Authenticator;
  credentials?: string;
  /** Passed as the client's shared `tenant` option: the tenant every call names. */
  tenant?: string;
}

/** How the transport's health and readiness are asked for; absent where the wire has none. */
export type ReadinessProbe = (server: Transport) => Promise<string>;

/**
 * How a transport package plugs itself into {@link describeTransport}. Every member builds real
 * objects: the suite starts real servers on 127.0.0.1 with port 0 and talks to them over the wire.
 */
export interface TransportHarness {
  kind: TransportKind;
  /** A server transport on 127.0.0.1 port 0 (not started, no handler bound). */
  server(options: ContractServerOptions): Transport;
  /**
   * A client for a started `server`. It may be the server object itself only when it carries the
   * options asked for (an in-process transport gives a client view of the same registry).
   */
  client(server: Transport, options: ContractClientOptions): Transport;
  /** The address a client sends to, once `server` has started. */
  url(server: Transport): string;
  /**
   * Runs the transport's constructor with these options merged over a valid minimal set (a
   * `url` on 127.0.0.1 port 0 where the transport takes one). Used for the option checks.
   */
  construct(options: Record<string, unknown>): Transport;
  /** A URL of this transport's scheme on `host` with port 0, for `validateUrl()`; absent for in-process. */
  urlFor?(host: string): string;
  /** `/readyz` (or the wire's own health check), answered as the status text. */
  readiness?: ReadinessProbe;
  /**
   * For transports served by the shared node:http host: the absolute URL of the route a task is
   * posted to, so the suite can send a raw compressed body (one Content-Encoding rule).
   */
  rawPostUrl?(server: Transport): string;
}
