import type { TlsOptions } from '@agent/core';
import type { Authenticator } from '@agent/auth';

export interface GRPCTransportOptions {
  /** `grpc://host:port` or `grpcs://host:port` (TLS). Port 0 picks a free port on `start()`. */
  url: string;
  /** Deadline of unary calls (`send`) in ms. Default 30000; 0 means no deadline. Streams take theirs per call. */
  timeoutMs?: number;
  /** Server side: checks the credentials of every `Invoke`/`Stream` call. Client side: used for lazy auth. */
  authenticator?: Authenticator;
  /** Client side: the raw credential authenticated lazily on the first call. Needs `authenticator`. */
  credentials?: string;
  /** Certificates for `grpcs://`: server cert/key, `ca` + `requestClientCert` for mutual TLS; client `ca`, cert/key. */
  tls?: TlsOptions;
  /** Serve the standard `grpc.health.v1.Health` service (no credentials needed). Default false. */
  health?: boolean;
  /** Serve gRPC server reflection (v1 and v1alpha; no credentials needed). Default false. */
  reflection?: boolean;
  /** Largest message either side sends or accepts, in bytes. Default 4 MiB; larger → RESOURCE_EXHAUSTED. */
  maxMessageBytes?: number;
  /** How long `stop()` waits for in-flight calls of other services before it forces the shutdown, in ms. Default 5000. */
  shutdownTimeoutMs?: number;
  /** Server side: also reject Task fields the spec does not name (strict schema). Default false. */
  validateSchema?: boolean;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 5_000;
