/**
 * A2A error bodies. Native AgentErrors keep their code and message; on the A2A wire they get the A2A
 * JSON-RPC code (or REST status) and a `google.rpc.ErrorInfo` detail whose `reason` is the error's
 * code, plus `google.rpc.BadRequest` field violations for validation failures.
 */
import {
  AgentError,
  type AgentErrorOptions,
  ERROR_CODES,
  type ErrorCode,
  type GrpcStatusName,
  errorClassFor,
  errorCodeForHttpStatus,
  isErrorCode,
} from '@agent/core';
import { isRecord } from '@agent/core/internal';

export const A2A_ERROR_DOMAIN = 'a2a-protocol.org';

export const A2A_ERRORS = {
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  INVALID_AGENT_RESPONSE: -32006,
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: -32007,
  EXTENSION_SUPPORT_REQUIRED: -32008,
  VERSION_NOT_SUPPORTED: -32009,
} as const;

export type A2AErrorReason = keyof typeof A2A_ERRORS;

const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

/** The A2A binding's HTTP status and google.rpc code for each A2A error (REST). */
const A2A_REST: Record<A2AErrorReason, { status: number; grpc: GrpcStatusName }> = {
  TASK_NOT_FOUND: { status: 404, grpc: 'NOT_FOUND' },
  // 409 rather than the spec table's 400: the task exists and its state forbids the change.
  TASK_NOT_CANCELABLE: { status: 409, grpc: 'FAILED_PRECONDITION' },
  PUSH_NOTIFICATION_NOT_SUPPORTED: { status: 400, grpc: 'FAILED_PRECONDITION' },
  UNSUPPORTED_OPERATION: { status: 400, grpc: 'FAILED_PRECONDITION' },
  CONTENT_TYPE_NOT_SUPPORTED: { status: 415, grpc: 'INVALID_ARGUMENT' },
  INVALID_AGENT_RESPONSE: { status: 500, grpc: 'INTERNAL' },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: { status: 400, grpc: 'FAILED_PRECONDITION' },
  EXTENSION_SUPPORT_REQUIRED: { status: 400, grpc: 'FAILED_PRECONDITION' },
  VERSION_NOT_SUPPORTED: { status: 400, grpc: 'FAILED_PRECONDITION' },
};

/** Standard JSON-RPC codes for the core codes whose table entry is not the JSON-RPC 2.0 one. */
const JSON_RPC_OVERRIDES: Partial<Record<ErrorCode, number>> = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  VALIDATION_FAILED: -32602,
  VALUE_ERROR: -32602,
  INTERNAL: -32603,
};

function isA2AReason(value: unknown): value is A2AErrorReason {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(A2A_ERRORS, value);
}

const DEFAULT_MESSAGES: Record<A2AErrorReason, string> = {
  TASK_NOT_FOUND: 'Task not found',
  TASK_NOT_CANCELABLE: 'Task is not cancelable',
  PUSH_NOTIFICATION_NOT_SUPPORTED: 'Push notifications are not supported',
  UNSUPPORTED_OPERATION: 'Operation not supported',
  CONTENT_TYPE_NOT_SUPPORTED: 'Content type not supported',
  INVALID_AGENT_RESPONSE: 'Invalid agent response',
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: 'Extended agent card not configured',
  EXTENSION_SUPPORT_REQUIRED: 'Extension support required',
  VERSION_NOT_SUPPORTED: 'A2A version not supported',
};

/** An AgentError for an A2A condition: every A2A reason is a code of @agent/core's table. */
export function a2aError(
  reason: A2AErrorReason,
  message?: string,
  data?: Record<string, unknown>,
): AgentError {
  const options: AgentErrorOptions = data === undefined ? {} : { data };
  return new (errorClassFor(reason))(message ?? DEFAULT_MESSAGES[reason], options);
}

/** The A2A reason of an error (its code), or undefined for a code A2A has no error of its own for. */
export function a2aReasonOf(error: AgentError): A2AErrorReason | undefined {
  return isA2AReason(error.code) ? error.code : undefined;
}

function reasonOf(error: AgentError): string {
  return a2aReasonOf(error) ?? error.code;
}

/** ErrorInfo metadata is a map of strings: the data's scalar fields. */
function infoMetadata(data: unknown): Record<string, string> | undefined {
  if (!isRecord(data)) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      out[key] = String(value);
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `/message/parts/0/text` -> `message.parts[0].text`, the path form BadRequest field names use. */
function pointerToField(pointer: string): string {
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
  let field = '';
  for (const token of tokens) {
    if (/^\d+$/.test(token)) field += `[${token}]`;
    else field += field === '' ? token : `.${token}`;
  }
  return field;
}

function errorDetails(error: AgentError): Record<string, unknown>[] {
  const info: Record<string, unknown> = {
    '@type': ERROR_INFO_TYPE,
    reason: reasonOf(error),
    domain: A2A_ERROR_DOMAIN,
  };
  const metadata = infoMetadata(error.data);
  if (metadata) info.metadata = metadata;
  const details = [info];
  const issues = isRecord(error.data) ? error.data.errors : undefined;
  if (Array.isArray(issues) && issues.length > 0) {
    details.push({
      '@type': BAD_REQUEST_TYPE,
      fieldViolations: issues.filter(isRecord).map((issue) => ({
        field: typeof issue.pointer === 'string' ? pointerToField(issue.pointer) : '',
        description: typeof issue.message === 'string' ? issue.message : 'is invalid',
      })),
    });
  }
  return details;
}

export function jsonRpcCodeOf(error: AgentError): number {
  const reason = a2aReasonOf(error);
  if (reason) return A2A_ERRORS[reason];
  return JSON_RPC_OVERRIDES[error.code] ?? error.jsonRpcCode;
}

/** JSON-RPC error object {code, message, data: [ErrorInfo, ...]} for an AgentError (after the pipeline's error policy). */
export function toJsonRpcError(error: AgentError): { code: number; message: string; data?: unknown[] } {
  return { code: jsonRpcCodeOf(error), message: error.message, data: errorDetails(error) };
}

/** REST error body {error: {code: <http status>, status: <google.rpc code name>, message, details: [ErrorInfo]}} + HTTP status. */
export function toRestError(error: AgentError): { status: number; body: unknown } {
  const reason = a2aReasonOf(error);
  let status: number;
  let grpc: GrpcStatusName;
  if (reason) ({ status, grpc } = A2A_REST[reason]);
  else if (error.code === 'VALIDATION_FAILED') {
    // google.rpc INVALID_ARGUMENT is 400 on HTTP; the native HTTP API's 422 is its own choice.
    status = 400;
    grpc = 'INVALID_ARGUMENT';
  } else {
    status = error.httpStatus;
    grpc = error.grpcStatusName;
  }
  return {
    status,
    body: { error: { code: status, status: grpc, message: error.message, details: errorDetails(error) } },
  };
}

const CODE_BY_A2A_NUMBER = new Map<number, A2AErrorReason>(
  (Object.entries(A2A_ERRORS) as [A2AErrorReason, number][]).map(([reason, code]) => [code, reason]),
);

function codeForJsonRpc(code: number): ErrorCode | undefined {
  for (const [name, value] of Object.entries(JSON_RPC_OVERRIDES) as [ErrorCode, number][]) {
    if (value === code) return name;
  }
  const match = (Object.keys(ERROR_CODES) as ErrorCode[]).find(
    (name) => ERROR_CODES[name].jsonRpcCode === code,
  );
  return match;
}

function findErrorInfo(details: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(details)) return undefined;
  return details.find(
    (detail): detail is Record<string, unknown> =>
      isRecord(detail) && (detail['@type'] === ERROR_INFO_TYPE || typeof detail.reason === 'string'),
  );
}

function build(code: ErrorCode, message: string | undefined, data: Record<string, unknown>): AgentError {
  const ErrorClass = errorClassFor(code);
  const options: AgentErrorOptions = Object.keys(data).length > 0 ? { data } : {};
  return ErrorClass === AgentError
    ? new AgentError(code, message, options)
    : new ErrorClass(message, options);
}

/** Client side: a JSON-RPC error object or REST error body -> a typed AgentError (TaskNotFoundError, ...). */
export function fromA2AError(json: unknown, httpStatus?: number): AgentError {
  let record = isRecord(json) ? json : {};
  // A whole JSON-RPC response or a REST body: the error object sits under `error`.
  if (isRecord(record.error)) record = record.error;
  const message = typeof record.message === 'string' && record.message !== '' ? record.message : undefined;
  const details = Array.isArray(record.data) ? record.data : record.details;
  const info = findErrorInfo(details);
  const data: Record<string, unknown> = {};
  if (isRecord(info?.metadata)) Object.assign(data, info.metadata);
  const isJsonRpc = typeof record.code === 'number' && record.code < 0;
  if (isJsonRpc) data.a2a_code = record.code;
  const reason = typeof info?.reason === 'string' ? info.reason : undefined;

  if (reason && isA2AReason(reason)) return a2aError(reason, message, data);
  if (reason && isErrorCode(reason)) return build(reason, message, data);
  if (isJsonRpc) {
    const a2a = CODE_BY_A2A_NUMBER.get(record.code as number);
    if (a2a) return a2aError(a2a, message, data);
    const code = codeForJsonRpc(record.code as number);
    if (code) return build(code, message, data);
    return build('INTERNAL', message, data);
  }
  const status = typeof record.code === 'number' && record.code >= 400 ? record.code : httpStatus;
  if (status !== undefined) {
    // The only A2A resource a 404 can name is a task.
    if (status === 404) return build('TASK_NOT_FOUND', message, data);
    if (status === 415) return a2aError('CONTENT_TYPE_NOT_SUPPORTED', message, data);
    return build(errorCodeForHttpStatus(status), message, data);
  }
  return build('INTERNAL', message, data);
}
