import type { Authenticator } from '@agent/auth';
import { ValueError, type TlsOptions, numberOption } from '@agent/core';

export interface WebSocketTransportOptions {
  /**
   * Server address (`ws://host:port[/base]` or `wss://…` with `tls`); port `0` picks a free port.
   * Also the default target of `sendTaskStream`. The data socket is `<url>/ws`, control `<url>/ws/control`.
   */
  url: string;
  /** Deadline of one unary call (send_task, cancel_task, get_card) in milliseconds. Default 30 000. */
  timeoutMs?: number;
  /** Server side: checks every upgrade. Client side (with `credentials`): builds the handshake headers. */
  authenticator?: Authenticator | null;
  /** Client side raw credential, authenticated lazily on the first call. */
  credentials?: string;
  /** TLS for `wss` (server certificate, CA, mutual TLS). */
  tls?: TlsOptions;
  /** Ping period in milliseconds on both sides; a peer that misses one pong is terminated. 0 disables. Default 30 000. */
  pingIntervalMs?: number;
  /** Per-socket send buffer in bytes; producers pause while `bufferedAmount` is above it. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** Largest accepted incoming frame in bytes (server); larger frames close the socket with 1009. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Concurrent requests one server socket may run; more get `UNAVAILABLE` error frames. Default 1024. */
  maxInFlightPerSocket?: number;
  /** Client side: events buffered per stream before the socket stops reading. Default 1024. */
  maxQueuedEvents?: number;
  /** How long `stop()` lets in-flight calls finish before aborting them, in milliseconds. Default 5 000. */
  shutdownGraceMs?: number;
}

export interface ResolvedOptions {
  url: string;
  timeoutMs: number;
  pingIntervalMs: number;
  maxBufferedBytes: number;
  maxBodyBytes: number;
  maxInFlightPerSocket: number;
  maxQueuedEvents: number;
  shutdownGraceMs: number;
}

export const DEFAULTS = {
  timeoutMs: 30_000,
  pingIntervalMs: 30_000,
  maxBufferedBytes: 1024 * 1024,
  maxBodyBytes: 4 * 1024 * 1024,
  maxInFlightPerSocket: 1024,
  maxQueuedEvents: 1024,
  shutdownGraceMs: 5_000,
} as const;

export function resolveOptions(options: WebSocketTransportOptions): ResolvedOptions {
  if (typeof options?.url !== 'string' || options.url === '')
    throw new ValueError('WebSocketTransport needs a url');
  return {
    url: options.url,
    timeoutMs: numberOption('timeoutMs', options.timeoutMs, DEFAULTS.timeoutMs, { min: 1 }),
    pingIntervalMs: numberOption('pingIntervalMs', options.pingIntervalMs, DEFAULTS.pingIntervalMs, {
      min: 0,
    }),
    maxBufferedBytes: numberOption('maxBufferedBytes', options.maxBufferedBytes, DEFAULTS.maxBufferedBytes, {
      min: 1,
    }),
    maxBodyBytes: numberOption('maxBodyBytes', options.maxBodyBytes, DEFAULTS.maxBodyBytes, { min: 1 }),
    maxInFlightPerSocket: numberOption(
      'maxInFlightPerSocket',
      options.maxInFlightPerSocket,
      DEFAULTS.maxInFlightPerSocket,
      { min: 1 },
    ),
    maxQueuedEvents: numberOption('maxQueuedEvents', options.maxQueuedEvents, DEFAULTS.maxQueuedEvents, {
      min: 1,
    }),
    shutdownGraceMs: numberOption('shutdownGraceMs', options.shutdownGraceMs, DEFAULTS.shutdownGraceMs, {
      min: 0,
    }),
  };
}
