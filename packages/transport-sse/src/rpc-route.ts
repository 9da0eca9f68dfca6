/** `POST /rpc`: JSON-RPC 2.0 unary calls (single or batch) against the bound TaskHandler. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  dispatchOperation,
  InvalidRequestError,
  MethodNotFoundError,
  PayloadTooLargeError,
  type CallContext,
  type TaskHandler,
} from '@agent/core';
import { parseJson, readBody, sendError, sendJson } from './http-io.js';
import {
  STREAM_METHOD,
  UNARY_METHODS,
  failureResponse,
  isUnaryMethod,
  parseJsonRpcRequest,
  responseId,
  successResponse,
  type JsonRpcResponse,
} from './json-rpc.js';

async function answerOne(
  raw: unknown,
  handler: TaskHandler,
  ctx: CallContext,
): Promise<JsonRpcResponse | undefined> {
  let request;
  try {
    request = parseJsonRpcRequest(raw);
  } catch (error) {
    return failureResponse(responseId(raw), error);
  }
  const isNotification = !('id' in request);
  const id = request.id ?? null;
  try {
    if (!isUnaryMethod(request.method)) {
      throw new MethodNotFoundError(
        request.method === STREAM_METHOD
          ? `${STREAM_METHOD} is served at POST /tasks/stream`
          : `Unknown method: ${request.method}`,
      );
    }
    const result = await dispatchOperation(handler, UNARY_METHODS[request.method], request.params ?? {}, ctx);
    return isNotification ? undefined : successResponse(id, result);
  } catch (error) {
    return isNotification ? undefined : failureResponse(id, error);
  }
}

/** The reply to a parsed body: one response, an array for a batch, or undefined when only notifications came. */
export async function answerRpc(body: unknown, handler: TaskHandler, ctx: CallContext): Promise<unknown> {
  if (!Array.isArray(body)) return answerOne(body, handler, ctx);
  if (body.length === 0)
    return failureResponse(null, new InvalidRequestError('Invalid JSON-RPC request: empty batch'));
  const replies = await Promise.all(body.map((entry) => answerOne(entry, handler, ctx)));
  const present = replies.filter((reply) => reply !== undefined);
  return present.length === 0 ? undefined : present;
}

export async function serveRpc(
  req: IncomingMessage,
  res: ServerResponse,
  handler: TaskHandler,
  ctx: CallContext,
  maxBodyBytes: number,
): Promise<void> {
  let body: unknown;
  try {
    body = parseJson(await readBody(req, maxBodyBytes));
  } catch (error) {
    // Only a body that was never read in full gets an HTTP status; a malformed one is a JSON-RPC -32700.
    if (error instanceof PayloadTooLargeError) sendError(res, error, { connection: 'close' });
    else sendJson(res, 200, failureResponse(null, error));
    return;
  }
  const reply = await answerRpc(body, handler, ctx);
  if (res.headersSent || res.destroyed) return;
  if (reply === undefined) res.writeHead(204).end();
  else sendJson(res, 200, reply);
}
