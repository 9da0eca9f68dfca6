/**
 * The SSE JSON-RPC wire: JSON-RPC 2.0 envelopes (method names, request checks, the error object that
 * carries the core error code and the error's data) and the `text/event-stream` frames that carry
 * them. The frame itself is `encodeSseFrame` of `@agent/server/node`, the one HTTPTransport's stream uses.
 */
import {
  AgentError,
  ERROR_CODES,
  InternalError,
  InvalidRequestError,
  isErrorCode,
  MethodNotFoundError,
  type ClientOperationName,
  type ErrorCode,
  type TaskEvent,
} from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { encodeSseFrame, SSE_CONTENT_TYPE } from '@agent/server/node';

export const JSON_RPC_VERSION = '2.0';

export type JsonRpcId = string | number | null;

/** Unary methods served on `POST /rpc`, by the client operation they carry. */
export const UNARY_METHODS = {
  'tasks/send': 'send_task',
  'tasks/cancel': 'cancel_task',
  'tasks/get': 'get_task',
  'tasks/list': 'list_tasks',
  'agent/card': 'get_card',
} as const satisfies Record<string, ClientOperationName>;

export type UnaryMethod = keyof typeof UNARY_METHODS;

/** The streaming method that runs a task, served on `POST /tasks/stream`. */
export const STREAM_METHOD = 'tasks/stream';

/** The streaming method that follows one of the caller's tasks, served on `POST /tasks/stream` too. */
export const RESUBSCRIBE_METHOD = 'tasks/resubscribe';

/** Streaming methods, by the client operation they carry. */
export const STREAMING_METHODS = {
  [STREAM_METHOD]: 'stream_task',
  [RESUBSCRIBE_METHOD]: 'subscribe_task',
} as const satisfies Record<string, ClientOperationName>;

export type StreamingMethod = keyof typeof STREAMING_METHODS;

/** Client operation name → JSON-RPC method. */
export const OPERATION_METHODS: Readonly<Record<string, string>> = {
  send_task: 'tasks/send',
  cancel_task: 'tasks/cancel',
  get_task: 'tasks/get',
  list_tasks: 'tasks/list',
  get_card: 'agent/card',
  stream_task: STREAM_METHOD,
  subscribe_task: RESUBSCRIBE_METHOD,
};

export interface JsonRpcRequest {
  jsonrpc: typeof JSON_RPC_VERSION;
  /** Absent for a notification (no response is sent). */
  id?: JsonRpcId;
  method: string;
  params?: unknown;
}

export interface JsonRpcErrorData {
  /** The core error code (`TASK_NOT_FOUND`, ...). */
  code: ErrorCode;
  /** The error's own structured detail (`error_id`, validation issues, ...), when it has one. */
  data?: unknown;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data: JsonRpcErrorData;
}

export interface JsonRpcSuccess<TResult = unknown> {
  jsonrpc: typeof JSON_RPC_VERSION;
  id: JsonRpcId;
  result: TResult;
}

export interface JsonRpcFailure {
  jsonrpc: typeof JSON_RPC_VERSION;
  id: JsonRpcId;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse<TResult = unknown> = JsonRpcSuccess<TResult> | JsonRpcFailure;

export function isUnaryMethod(method: string): method is UnaryMethod {
  return Object.prototype.hasOwnProperty.call(UNARY_METHODS, method);
}

export function isStreamingMethod(method: string): method is StreamingMethod {
  return Object.prototype.hasOwnProperty.call(STREAMING_METHODS, method);
}

/** The refusal of a method `/rpc` does not serve; a streaming method is told where to go. */
export function unknownMethod(method: string): MethodNotFoundError {
  return new MethodNotFoundError(
    isStreamingMethod(method) ? `${method} is served at POST /tasks/stream` : `Unknown method: ${method}`,
  );
}

function isValidId(value: unknown): value is JsonRpcId {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** The request id when it is usable in a response, else null (as JSON-RPC 2.0 prescribes). */
export function responseId(value: unknown): JsonRpcId {
  return isRecord(value) && isValidId(value.id) ? value.id : null;
}

/** Checks the JSON-RPC 2.0 envelope; throws InvalidRequestError (-32600) naming what is wrong. */
export function parseJsonRpcRequest(value: unknown): JsonRpcRequest {
  if (!isRecord(value)) throw new InvalidRequestError('Invalid JSON-RPC request: must be an object');
  if (value.jsonrpc !== JSON_RPC_VERSION) {
    throw new InvalidRequestError('Invalid JSON-RPC request: "jsonrpc" must be "2.0"');
  }
  if (typeof value.method !== 'string' || value.method === '') {
    throw new InvalidRequestError('Invalid JSON-RPC request: "method" must be a non-empty string');
  }
  if ('id' in value && !isValidId(value.id)) {
    throw new InvalidRequestError('Invalid JSON-RPC request: "id" must be a string, a number or null');
  }
  if (value.params !== undefined && typeof value.params !== 'object') {
    throw new InvalidRequestError('Invalid JSON-RPC request: "params" must be an object or an array');
  }
  const request: JsonRpcRequest = { jsonrpc: JSON_RPC_VERSION, method: value.method };
  if ('id' in value) request.id = value.id as JsonRpcId;
  if (value.params !== undefined) request.params = value.params;
  return request;
}

/** The request body of one call. */
export function encodeRequest(id: JsonRpcId, method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: JSON_RPC_VERSION, id, method, params });
}

/** The JSON-RPC error object: the table's numeric code, the message, and `data: {code, data?}`. */
export function toJsonRpcError(error: AgentError): JsonRpcErrorObject {
  const data: JsonRpcErrorData =
    error.data === undefined ? { code: error.code } : { code: error.code, data: error.data };
  return { code: error.jsonRpcCode, message: error.message, data };
}

export function successResponse<TResult>(id: JsonRpcId, result: TResult): JsonRpcSuccess<TResult> {
  return { jsonrpc: JSON_RPC_VERSION, id, result };
}

/** `error` has been through the server's error policy already: it is sent as it is. */
export function failureResponse(id: JsonRpcId, error: AgentError): JsonRpcFailure {
  return { jsonrpc: JSON_RPC_VERSION, id, error: toJsonRpcError(error) };
}

function codeForJsonRpcNumber(code: unknown): ErrorCode {
  // -32601 is shared by several table rows; over JSON-RPC it means the method.
  if (code === -32601) return 'METHOD_NOT_FOUND';
  const match = (Object.keys(ERROR_CODES) as ErrorCode[]).find(
    (name) => ERROR_CODES[name].jsonRpcCode === code,
  );
  return match ?? 'INTERNAL';
}

/** Rebuilds the typed error (code, message, data) from a JSON-RPC error object; `data.code` wins over the number. */
export function fromJsonRpcError(error: unknown): AgentError {
  const record = isRecord(error) ? error : {};
  const data = isRecord(record.data) ? record.data : {};
  const code = isErrorCode(data.code) ? data.code : codeForJsonRpcNumber(record.code);
  return AgentError.fromJSON({
    code,
    message: typeof record.message === 'string' ? record.message : undefined,
    data: data.data,
  });
}

export function malformedAnswer(what: string): InternalError {
  return new InternalError(`Malformed answer from the server: ${what}`);
}

/** The `result` of a unary response body; a JSON-RPC error is thrown as the typed error. */
export function decodeRpcResponse(text: string): unknown {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw malformedAnswer('the body is not JSON');
  }
  if (!isRecord(body)) throw malformedAnswer('the body is not a JSON-RPC response');
  if (body.error !== undefined) throw fromJsonRpcError(body.error);
  if (!('result' in body)) throw malformedAnswer('the response has neither result nor error');
  return body.result;
}

// --- text/event-stream frames -------------------------------------------------------------------

/** The `event:` name of a frame that carries a JSON-RPC error instead of a TaskEvent. */
export const ERROR_EVENT = 'error';

/** The comment written on an idle stream so proxies and clients see the connection is alive. */
export const HEARTBEAT_FRAME = ': ping\n\n';

export { SSE_CONTENT_TYPE as EVENT_STREAM_TYPE };

/** An event's frame; its `id:` is the event's `sequence`, what a resubscription passes as `after`. */
export function encodeEventFrame(requestId: JsonRpcId, event: TaskEvent): string {
  return encodeSseFrame(event.sequence ?? 0, event.type, successResponse(requestId, event));
}

/**
 * An error frame; its `id:` repeats the sequence of the last event before it (0 when none), so a
 * client that resumes from the last id it saw misses nothing.
 */
export function encodeErrorFrame(lastSequence: number, requestId: JsonRpcId, error: AgentError): string {
  return encodeSseFrame(lastSequence, ERROR_EVENT, failureResponse(requestId, error));
}

/** One parsed frame as the client's event-stream parser hands it over. */
export interface StreamFrame {
  id?: string | undefined;
  event?: string | undefined;
  data: string;
}

/** The TaskEvent a frame carries; an error frame is thrown as the typed error. */
export function decodeFrame(frame: StreamFrame): TaskEvent {
  let payload: unknown;
  try {
    payload = JSON.parse(frame.data);
  } catch {
    throw malformedAnswer(`frame ${frame.id ?? '?'} is not JSON`);
  }
  if (!isRecord(payload)) throw malformedAnswer(`frame ${frame.id ?? '?'} is not a JSON-RPC response`);
  if (frame.event === ERROR_EVENT || payload.error !== undefined) throw fromJsonRpcError(payload.error);
  const event = payload.result;
  if (!isRecord(event) || typeof event.type !== 'string' || typeof event.task_id !== 'string') {
    throw malformedAnswer(`frame ${frame.id ?? '?'} does not carry a TaskEvent`);
  }
  return event as unknown as TaskEvent;
}
