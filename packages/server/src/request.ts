import type { TransportKind } from '@agent/core';

/** Header values as node, grpc-js metadata or a plain record present them; names lowercase. */
export type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

/**
 * What a wire adapter tells the pipeline about one request, in transport-neutral terms. `signal` may
 * be a getter: the HTTP host creates its AbortController only when someone reads it.
 */
export interface RequestInfo {
  readonly headers: HeaderBag;
  /** Query parameters, where the wire has them (HTTP, SSE, the WebSocket handshake). */
  readonly query?: URLSearchParams | undefined;
  /** Aborts when the caller goes away. A closed connection is not a task cancel. */
  readonly signal: AbortSignal;
  readonly remoteAddress?: string | undefined;
  /**
   * Called when a stop's grace period is over and this request is still running, after its task was
   * canceled: the transport gives up on it (aborts its signal, ends its stream).
   */
  abort?(reason: unknown): void;
}

/** The operations a wire adapter can ask for. */
export type OperationName = 'send_task' | 'cancel_task' | 'get_card' | 'stream_task';

export interface PipelineSite {
  transport: TransportKind;
}
