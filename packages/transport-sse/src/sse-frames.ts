/**
 * Server-sent event encoding (DESIGN.md §3): every frame has `id:`, `event:` and a single `data:`
 * line holding a JSON-RPC response. JSON.stringify never emits a raw newline, so one line suffices.
 */
import type { TaskEvent } from '@agent/core';
import { failureResponse, successResponse, type JsonRpcId } from './json-rpc.js';

/** The `event:` name of a frame that carries a JSON-RPC error instead of a TaskEvent. */
export const ERROR_EVENT = 'error';

/** The comment written on an idle stream so proxies and clients see the connection is alive. */
export const HEARTBEAT_FRAME = ': ping\n\n';

export function encodeFrame(frameId: number, event: string, data: unknown): string {
  return `id: ${frameId}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function encodeEventFrame(frameId: number, requestId: JsonRpcId, event: TaskEvent): string {
  return encodeFrame(frameId, event.type, successResponse(requestId, event));
}

export function encodeErrorFrame(frameId: number, requestId: JsonRpcId, error: unknown): string {
  return encodeFrame(frameId, ERROR_EVENT, failureResponse(requestId, error));
}
