import type { TlsOptions } from '@agent/core';
import type { Authenticator } from '@agent/auth';
import type { BackendFactory } from './backend.js';

/** Built-in backends: `node` (a router on node:http, the fast default) and `express` (express 5). */
export type BackendName = 'node' | 'express';

export interface HTTPTransportOptions {
  /** Where the server listens and what it advertises, e.g. `http://127.0.0.1:8080`; port 0 picks a free one. `https` needs `tls`. */
  url: string;
  /** Client side: deadline of each outgoing call in ms (connect to last byte); 0 disables it. Default 30000. */
  timeoutMs?: number;
  /** Server side: checks every non-public route. Client side: with `credentials`, builds the outgoing headers. */
  authenticator?: Authenticator;
  /** Client side: the raw credential, authenticated lazily on the first outgoing call. */
  credentials?: string;
  /** Server backend, by name or as a factory of a custom backend. Default `node`. */
  backend?: BackendName | BackendFactory;
  /** Strict schema checks on incoming bodies (unknown fields → 422). The basic Task schema is always checked. Default false. */
  validateSchema?: boolean;
  /** HTTPS on both sides: server certificate/key, trusted CA, mutual TLS (`requestClientCert`). */
  tls?: TlsOptions;
  /** Request bodies above this many bytes are refused with 413. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Client side: responses (success or error) above this many bytes are refused with PAYLOAD_TOO_LARGE. Default 4 MiB. */
  maxResponseBytes?: number;
  /** How long `stop()` lets in-flight requests finish before aborting them, in ms. Default 10000. */
  stopTimeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;
