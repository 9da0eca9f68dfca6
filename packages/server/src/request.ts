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
   * The tenant named through a carrier the wire decoded itself (the WebSocket handshake's `tenant`
   * query, which browsers need because they cannot set headers). Absent: the `x-tenant` header (gRPC
   * metadata arrives as headers too). Either way the pipeline checks it.
   */
  readonly tenant?: string | undefined;
  /**
   * Called when a stop's grace period is over and this request is still running, after its task was
   * canceled: the transport gives up on it (aborts its signal, ends its stream).
   */
  abort?(reason: unknown): void;
}

/** The operations a wire adapter can ask for. */
export type OperationName =
  'send_task' | 'cancel_task' | 'get_card' | 'stream_task' | 'get_task' | 'list_tasks' | 'subscribe_task';

export interface PipelineSite {
  transport: TransportKind;
}

/** The header every header-carrying wire names the call's tenant in (lowercase, as in {@link HeaderBag}). */
export const TENANT_HEADER = 'x-tenant';

/**
 * The tenant a request names, unchecked: the wire's own carrier first, else the `x-tenant` header.
 * `undefined` when it names none; an array when the header came more than once (which is refused).
 */
export function requestedTenant(request: RequestInfo): string | readonly string[] | undefined {
  if (request.tenant !== undefined) return request.tenant;
  const value = request.headers[TENANT_HEADER];
  if (Array.isArray(value)) return value.length === 1 ? value[0] : value;
  return value;
}
