import type { TransportOptions } from '@agent/server';
import { numberOption } from '@agent/core/internal';

/**
 * The shared transport vocabulary (`url`, `authenticator`, `credentials`, `tls`, `timeoutMs`,
 * `stopGraceMs`, `maxBodyBytes`, `validateSchema`, `logger`) plus what only a WebSocket has.
 */
export interface WebSocketTransportOptions extends TransportOptions {
  /** Ping period in milliseconds on both sides; a peer that misses one pong is terminated. 0 disables. Default 30 000. */
  pingIntervalMs?: number;
  /** Server: per-socket send buffer in bytes; producers wait while `bufferedAmount` is above it. Default 64 KiB. */
  maxBufferedBytes?: number;
  /** Server: concurrent requests one socket may run; more get `UNAVAILABLE` error frames. Default 1024. */
  maxInFlightPerSocket?: number;
  /**
   * Client: events one stream may hold for a consumer that has not read them yet. A stream that
   * falls further behind fails on its own with `SlowConsumerError`; the other calls on the socket
   * go on. Default 1024.
   */
  maxQueuedEvents?: number;
}

/** The option names this transport accepts beyond the shared ones. */
export const WS_OPTION_NAMES = [
  'pingIntervalMs',
  'maxBufferedBytes',
  'maxInFlightPerSocket',
  'maxQueuedEvents',
] as const satisfies readonly (keyof WebSocketTransportOptions)[];

export interface WsSettings {
  pingIntervalMs: number;
  maxBufferedBytes: number;
  maxInFlightPerSocket: number;
  maxQueuedEvents: number;
}

export const WS_DEFAULTS: WsSettings = {
  pingIntervalMs: 30_000,
  maxBufferedBytes: 64 * 1024,
  maxInFlightPerSocket: 1024,
  maxQueuedEvents: 1024,
};

/** Reads the WebSocket-only options with their defaults; the shared ones are read by `TransportBase`. */
export function wsSettings(options: WebSocketTransportOptions): WsSettings {
  return {
    pingIntervalMs: numberOption('pingIntervalMs', options.pingIntervalMs, WS_DEFAULTS.pingIntervalMs),
    maxBufferedBytes: numberOption(
      'maxBufferedBytes',
      options.maxBufferedBytes,
      WS_DEFAULTS.maxBufferedBytes,
      {
        min: 1,
      },
    ),
    maxInFlightPerSocket: numberOption(
      'maxInFlightPerSocket',
      options.maxInFlightPerSocket,
      WS_DEFAULTS.maxInFlightPerSocket,
      { min: 1, integer: true },
    ),
    maxQueuedEvents: numberOption('maxQueuedEvents', options.maxQueuedEvents, WS_DEFAULTS.maxQueuedEvents, {
      min: 1,
      integer: true,
    }),
  };
}
