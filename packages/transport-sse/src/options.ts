import type { TransportOptions } from '@agent/server';
import type { CorsOptions } from '@agent/server/node';
import { numberOption } from '@agent/core/internal';

/**
 * The shared transport vocabulary (`url`, `authenticator`, `credentials`, `tls`, `timeoutMs`,
 * `stopGraceMs`, `maxBodyBytes`, `validateSchema`, `logger`) plus what only this wire has.
 * `url` is `http(s)://host:port[/base-path]`; every route is served below the base path.
 */
export interface SSETransportOptions extends TransportOptions {
  /** Server: an open stream that wrote nothing for this many ms gets a `: ping` comment; 0 disables. Default 15000. */
  heartbeatMs?: number;
  /** Client: largest unary response body or single stream frame it buffers, in bytes. Default 64 MiB. */
  maxResponseBytes?: number;
  /** Server: a client that leaves a stream before its final status cancels the task. Default false. */
  cancelOnDisconnect?: boolean;
  /**
   * Server: which other origins' pages may call the server (preflights answered before
   * authentication; every response marked for an allowed origin). Default: none (no CORS headers).
   */
  cors?: CorsOptions;
}

/** The option names this transport accepts beyond the shared ones. */
export const SSE_OPTION_NAMES = ['heartbeatMs', 'maxResponseBytes', 'cancelOnDisconnect', 'cors'] as const;

export const DEFAULTS = {
  heartbeatMs: 15_000,
  maxResponseBytes: 64 * 1024 * 1024,
} as const;

export interface SSESettings {
  heartbeatMs: number;
  maxResponseBytes: number;
  cancelOnDisconnect: boolean;
}

/** Reads the SSE-only options with their defaults; the shared ones are read by `TransportBase`. */
export function sseSettings(options: SSETransportOptions): SSESettings {
  return {
    heartbeatMs: numberOption('heartbeatMs', options.heartbeatMs, DEFAULTS.heartbeatMs),
    maxResponseBytes: numberOption('maxResponseBytes', options.maxResponseBytes, DEFAULTS.maxResponseBytes, {
      min: 1,
      integer: true,
    }),
    cancelOnDisconnect: options.cancelOnDisconnect === true,
  };
}
