import { ValueError, type TlsOptions, numberOption } from '@agent/core';
import type { Authenticator } from '@agent/auth';

export interface SSETransportOptions {
  /** Server address `http(s)://host:port[/base-path]`; port 0 picks a free port on `start()`. */
  url: string;
  /** Client: deadline of a unary call, and of the wait for a stream's response headers, in ms. Default 30000. */
  timeoutMs?: number;
  /** Server: validates every non-public request. Client: with `credentials`, builds the outgoing headers. */
  authenticator?: Authenticator | null;
  /** Client: the raw credential, authenticated lazily on the first `send`/`subscribe`. Needs `authenticator`. */
  credentials?: string;
  /** TLS for an `https` URL: server certificate, client verification (mTLS), client trust. */
  tls?: TlsOptions;
  /** Server: an open stream that wrote nothing for this many ms gets a comment line; 0 disables. Default 15000. */
  heartbeatMs?: number;
  /** Server: largest accepted request body, in bytes; larger bodies get 413. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Client: largest unary response body or single stream frame it buffers, in bytes. Default 64 MiB. */
  maxResponseBytes?: number;
  /** Server: a client that disconnects from a stream before its final status cancels the task. Default false. */
  cancelOnDisconnect?: boolean;
  /** Server: how long `stop()` waits for in-flight unary calls after aborting their signals, in ms. Default 5000. */
  stopGraceMs?: number;
}

export interface ResolvedOptions {
  url: string;
  timeoutMs: number;
  heartbeatMs: number;
  maxBodyBytes: number;
  maxResponseBytes: number;
  cancelOnDisconnect: boolean;
  stopGraceMs: number;
}

export const DEFAULTS = {
  timeoutMs: 30_000,
  heartbeatMs: 15_000,
  maxBodyBytes: 4 * 1024 * 1024,
  maxResponseBytes: 64 * 1024 * 1024,
  stopGraceMs: 5_000,
} as const;

export function resolveOptions(options: SSETransportOptions): ResolvedOptions {
  if (typeof options?.url !== 'string' || options.url === '')
    throw new ValueError('SSETransport needs a url');
  if (options.credentials !== undefined && !options.authenticator) {
    // The authenticator's scheme decides which headers carry the credential; guessing would leak it.
    throw new ValueError('credentials need an authenticator to build the outgoing headers');
  }
  return {
    url: options.url,
    timeoutMs: numberOption('timeoutMs', options.timeoutMs, DEFAULTS.timeoutMs, { exclusive: true }),
    heartbeatMs: numberOption('heartbeatMs', options.heartbeatMs, DEFAULTS.heartbeatMs),
    maxBodyBytes: numberOption('maxBodyBytes', options.maxBodyBytes, DEFAULTS.maxBodyBytes, {
      exclusive: true,
    }),
    maxResponseBytes: numberOption('maxResponseBytes', options.maxResponseBytes, DEFAULTS.maxResponseBytes, {
      exclusive: true,
    }),
    cancelOnDisconnect: options.cancelOnDisconnect ?? false,
    stopGraceMs: numberOption('stopGraceMs', options.stopGraceMs, DEFAULTS.stopGraceMs),
  };
}
