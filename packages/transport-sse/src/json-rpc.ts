/**
 * JSON-RPC 2.0 framing of DESIGN.md §3: method names, request checks, and the error mapping that
 * carries the core error code in `error.data.code` so a client rebuilds the typed error.
 */
import {
  AgentError,
  ERROR_CODES,
  InvalidRequestError,
  isErrorCode,
  isRecord,
  type ClientOperationName,
  type ErrorCode,
} from '@agent/core';

export const JSON_RPC_VERSION = '2.0';

export type JsonRpcId = string | number | null;

/** Unary methods served on `POST /rpc`, by the client operation they carry. */
export const UNARY_METHODS = {
  'tasks/send': 'send_task',
  'tasks/cancel': 'cancel_task',
  'agent/card': 'get_card',
} as const satisfies Record<string, ClientOperationName>;

export type UnaryMethod = keyof typeof UNARY_METHODS;

/** The one streaming method, served on `POST /tasks/stream`. */
export const STREAM_METHOD = 'tasks/stream';

/** Client operation name → JSON-RPC method. */
export const OPERATION_METHODS: Readonly<Record<string, string>> = {
  send_task: 'tasks/send',
  cancel_task: 'tasks/cancel',
  get_card: 'agent/card',
  stream_task: STREAM_METHOD,
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
  /** The error's own structured detail, when it has one. */
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

export function toJsonRpcError(error: AgentError): JsonRpcErrorObject {
  const data: JsonRpcErrorData =
    error.data === undefined ? { code: error.code } : { code: error.code, data: error.data };
  return { code: error.jsonRpcCode, message: error.message, data };
}

export function successResponse<TResult>(id: JsonRpcId, result: TResult): JsonRpcSuccess<TResult> {
  return { jsonrpc: JSON_RPC_VERSION, id, result };
}

export function failureResponse(id: JsonRpcId, error: unknown): JsonRpcFailure {
  return { jsonrpc: JSON_RPC_VERSION, id, error: toJsonRpcError(AgentError.from(error)) };
}

function codeForJsonRpcNumber(code: unknown): ErrorCode {
  // -32601 is shared by several table rows; over JSON-RPC it means the method.
  if (code === -32601) return 'METHOD_NOT_FOUND';
  const match = (Object.keys(ERROR_CODES) as ErrorCode[]).find(
    (name) => ERROR_CODES[name].jsonRpcCode === code,
  );
  return match ?? 'INTERNAL';
}

/** Rebuilds the typed error from a JSON-RPC error object; `data.code` wins over the numeric code. */
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
