import type { ApprovalRequestData } from './run-data.js';

/**
 * The one error table. Every transport looks statuses up here; none hard-codes one.
 */

/** gRPC status codes by name (the numbers grpc-js uses on the wire). */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatusName = keyof typeof GRPC_STATUS;

export interface ErrorCodeInfo {
  /** HTTP status of a response that reports this error. */
  httpStatus: number;
  /** JSON-RPC 2.0 error code. */
  jsonRpcCode: number;
  /** gRPC status name. */
  grpcStatus: GrpcStatusName;
  /** Default message when none is given. */
  message: string;
}

export const ERROR_CODES = {
  UNAUTHENTICATED: {
    httpStatus: 401,
    jsonRpcCode: -32010,
    grpcStatus: 'UNAUTHENTICATED',
    message: 'Authentication required',
  },
  PERMISSION_DENIED: {
    httpStatus: 403,
    jsonRpcCode: -32011,
    grpcStatus: 'PERMISSION_DENIED',
    message: 'Permission denied',
  },
  INVALID_REQUEST: {
    httpStatus: 400,
    jsonRpcCode: -32600,
    grpcStatus: 'INVALID_ARGUMENT',
    message: 'Invalid request',
  },
  PARSE_ERROR: {
    httpStatus: 400,
    jsonRpcCode: -32700,
    grpcStatus: 'INVALID_ARGUMENT',
    message: 'Malformed JSON',
  },
  VALIDATION_FAILED: {
    httpStatus: 422,
    jsonRpcCode: -32602,
    grpcStatus: 'INVALID_ARGUMENT',
    message: 'Validation failed',
  },
  VALUE_ERROR: {
    httpStatus: 400,
    jsonRpcCode: -32602,
    grpcStatus: 'INVALID_ARGUMENT',
    message: 'Invalid value',
  },
  NOT_FOUND: { httpStatus: 404, jsonRpcCode: -32601, grpcStatus: 'NOT_FOUND', message: 'Not found' },
  METHOD_NOT_FOUND: {
    httpStatus: 404,
    jsonRpcCode: -32601,
    grpcStatus: 'UNIMPLEMENTED',
    message: 'Method not found',
  },
  METHOD_NOT_ALLOWED: {
    httpStatus: 405,
    jsonRpcCode: -32601,
    grpcStatus: 'UNIMPLEMENTED',
    message: 'Method not allowed',
  },
  UNSUPPORTED_OPERATION: {
    httpStatus: 501,
    jsonRpcCode: -32004,
    grpcStatus: 'UNIMPLEMENTED',
    message: 'Operation not supported',
  },
  TASK_NOT_FOUND: {
    httpStatus: 404,
    jsonRpcCode: -32001,
    grpcStatus: 'NOT_FOUND',
    message: 'Task not found',
  },
  TASK_NOT_CANCELABLE: {
    httpStatus: 409,
    jsonRpcCode: -32002,
    grpcStatus: 'FAILED_PRECONDITION',
    message: 'Task is not cancelable',
  },
  TASK_ALREADY_RUNNING: {
    httpStatus: 409,
    jsonRpcCode: -32018,
    grpcStatus: 'ALREADY_EXISTS',
    message: 'Task is already running',
  },
  TASK_CANCELED: {
    httpStatus: 409,
    jsonRpcCode: -32015,
    grpcStatus: 'CANCELLED',
    message: 'Task was canceled',
  },
  PAYLOAD_TOO_LARGE: {
    httpStatus: 413,
    jsonRpcCode: -32600,
    grpcStatus: 'RESOURCE_EXHAUSTED',
    message: 'Payload too large',
  },
  BUDGET_EXCEEDED: {
    httpStatus: 429,
    jsonRpcCode: -32012,
    grpcStatus: 'RESOURCE_EXHAUSTED',
    message: 'Budget exceeded',
  },
  ACTION_DENIED: {
    httpStatus: 403,
    jsonRpcCode: -32013,
    grpcStatus: 'PERMISSION_DENIED',
    message: 'Action denied',
  },
  APPROVAL_REQUIRED: {
    httpStatus: 403,
    jsonRpcCode: -32014,
    grpcStatus: 'FAILED_PRECONDITION',
    message: 'Approval required',
  },
  DEADLINE_EXCEEDED: {
    httpStatus: 504,
    jsonRpcCode: -32017,
    grpcStatus: 'DEADLINE_EXCEEDED',
    message: 'Deadline exceeded',
  },
  ALREADY_EXISTS: {
    httpStatus: 409,
    jsonRpcCode: -32019,
    grpcStatus: 'ALREADY_EXISTS',
    message: 'Already exists',
  },
  RESOURCE_EXHAUSTED: {
    httpStatus: 429,
    jsonRpcCode: -32020,
    grpcStatus: 'RESOURCE_EXHAUSTED',
    message: 'Resource exhausted',
  },
  UNAVAILABLE: {
    httpStatus: 503,
    jsonRpcCode: -32016,
    grpcStatus: 'UNAVAILABLE',
    message: 'Service unavailable',
  },
  // Durable approvals: a pending request decided once, for the action it was asked for.
  APPROVAL_NOT_FOUND: {
    httpStatus: 404,
    jsonRpcCode: -32021,
    grpcStatus: 'NOT_FOUND',
    message: 'Approval request not found',
  },
  APPROVAL_ALREADY_DECIDED: {
    httpStatus: 409,
    jsonRpcCode: -32022,
    grpcStatus: 'FAILED_PRECONDITION',
    message: 'Approval request already decided',
  },
  APPROVAL_ACTION_MISMATCH: {
    httpStatus: 409,
    jsonRpcCode: -32023,
    grpcStatus: 'FAILED_PRECONDITION',
    message: 'The decision is for another action',
  },
  // Why a task ended that its own run could not finish: the process or replica running it went away.
  REPLICA_LOST: {
    httpStatus: 503,
    jsonRpcCode: -32024,
    grpcStatus: 'UNAVAILABLE',
    message: 'The replica running the task was lost',
  },
  PROCESS_RESTARTED: {
    httpStatus: 503,
    jsonRpcCode: -32025,
    grpcStatus: 'UNAVAILABLE',
    message: 'The process running the task restarted',
  },
  // A2A 1.0's own conditions, with its JSON-RPC codes (the A2A bindings and the A2A client use them).
  PUSH_NOTIFICATION_NOT_SUPPORTED: {
    httpStatus: 400,
    jsonRpcCode: -32003,
    grpcStatus: 'FAILED_PRECONDITION',
    message: 'Push notifications are not supported',
  },
  CONTENT_TYPE_NOT_SUPPORTED: {
    httpStatus: 415,
    jsonRpcCode: -32005,
    grpcStatus: 'INVALID_ARGUMENT',
    message: 'Content type not supported',
  },
  INVALID_AGENT_RESPONSE: {
    httpStatus: 502,
    jsonRpcCode: -32006,
    grpcStatus: 'INTERNAL',
    message: 'Invalid agent response',
  },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: {
    httpStatus: 400,
    jsonRpcCode: -32007,
    grpcStatus: 'FAILED_PRECONDITION',
    message: 'Extended agent card not configured',
  },
  EXTENSION_SUPPORT_REQUIRED: {
    httpStatus: 400,
    jsonRpcCode: -32008,
    grpcStatus: 'FAILED_PRECONDITION',
    message: 'Extension support required',
  },
  VERSION_NOT_SUPPORTED: {
    httpStatus: 400,
    jsonRpcCode: -32009,
    grpcStatus: 'FAILED_PRECONDITION',
    message: 'Protocol version not supported',
  },
  INTERNAL: { httpStatus: 500, jsonRpcCode: -32603, grpcStatus: 'INTERNAL', message: 'Internal error' },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * A2A's own conditions are told by their JSON-RPC code or error body, never guessed from a bare
 * status: a 502 from a proxy is not an A2A agent's invalid response.
 */
const A2A_ONLY_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'PUSH_NOTIFICATION_NOT_SUPPORTED',
  'CONTENT_TYPE_NOT_SUPPORTED',
  'INVALID_AGENT_RESPONSE',
  'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  'EXTENSION_SUPPORT_REQUIRED',
  'VERSION_NOT_SUPPORTED',
]);
const INFERABLE_CODES = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((code) => !A2A_ONLY_CODES.has(code));
/**
 * A bare HTTP 429 (a proxy's, a gateway's) is a rate limit: the generic code comes before the
 * specific one that shares its status, so it is not read as a spent budget. (A bare gRPC
 * RESOURCE_EXHAUSTED is most often grpc-js's own message-size limit, so it keeps PAYLOAD_TOO_LARGE.)
 */
const HTTP_INFERABLE_CODES: readonly ErrorCode[] = [
  'RESOURCE_EXHAUSTED',
  ...INFERABLE_CODES.filter((code) => code !== 'RESOURCE_EXHAUSTED'),
];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}

export interface AgentErrorOptions {
  /** Structured detail that travels on the wire (`error.data`). */
  data?: unknown;
  cause?: unknown;
}

/** The JSON form of an error on every wire: `{code, message, data?}`. */
export interface ErrorBody {
  code: string;
  message: string;
  data?: unknown;
}

/**
 * Base class of every error the framework raises. `code` is stable and keys the table above.
 * Code that crosses a process boundary checks `code`, not `instanceof`.
 */
export class AgentError extends Error {
  readonly code: ErrorCode;
  readonly data?: unknown;

  constructor(code: ErrorCode, message?: string, options: AgentErrorOptions = {}) {
    super(
      message ?? ERROR_CODES[code].message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = new.target.name;
    this.code = code;
    if (options.data !== undefined) this.data = options.data;
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].httpStatus;
  }

  get jsonRpcCode(): number {
    return ERROR_CODES[this.code].jsonRpcCode;
  }

  /** gRPC status number (see {@link GRPC_STATUS}). */
  get grpcStatus(): number {
    return GRPC_STATUS[ERROR_CODES[this.code].grpcStatus];
  }

  get grpcStatusName(): GrpcStatusName {
    return ERROR_CODES[this.code].grpcStatus;
  }

  toJSON(): ErrorBody {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /**
   * Returns an AgentError unchanged; maps an `AbortError` to TASK_CANCELED and a `TimeoutError`
   * to DEADLINE_EXCEEDED; wraps anything else as INTERNAL with the original as `cause`.
   */
  static from(error: unknown): AgentError {
    if (error instanceof AgentError) return error;
    const name = error instanceof Error || isDomException(error) ? (error as Error).name : undefined;
    if (name === 'AbortError') return new TaskCanceledError(undefined, { cause: error });
    if (name === 'TimeoutError') return new DeadlineExceededError(undefined, { cause: error });
    const message = error instanceof Error ? error.message : typeof error === 'string' ? error : undefined;
    return new InternalError(message || undefined, { cause: error });
  }

  /** Rebuilds the typed error from a wire body (`{code, message, data?}`); unknown codes become INTERNAL. */
  static fromJSON(body: unknown): AgentError {
    const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const code = isErrorCode(record.code) ? record.code : 'INTERNAL';
    const message = typeof record.message === 'string' ? record.message : undefined;
    const ErrorClass = errorClassFor(code);
    const options: AgentErrorOptions = record.data === undefined ? {} : { data: record.data };
    return ErrorClass === AgentError
      ? new AgentError(code, message, options)
      : new (ErrorClass as AgentErrorClass)(message, options);
  }
}

function isDomException(value: unknown): boolean {
  return typeof DOMException !== 'undefined' && value instanceof DOMException;
}

/** The constructor of one table entry's class, as `errorClassFor` returns it (e.g. `TaskNotFoundError`). */
export type AgentErrorClass = new (message?: string, options?: AgentErrorOptions) => AgentError;

function coded<TCode extends ErrorCode>(code: TCode) {
  return class extends AgentError {
    declare readonly code: TCode;
    constructor(message?: string, options?: AgentErrorOptions) {
      super(code, message, options);
    }
  };
}

export class UnauthenticatedError extends coded('UNAUTHENTICATED') {}
export class PermissionDeniedError extends coded('PERMISSION_DENIED') {}
export class InvalidRequestError extends coded('INVALID_REQUEST') {}
export class ParseError extends coded('PARSE_ERROR') {}
/** A value failed a JSON Schema; `data.errors` lists `{pointer, message}` for every failure. */
export class ValidationError extends coded('VALIDATION_FAILED') {}
/** An argument has the right type but an unacceptable value (named after Python's `ValueError`). */
export class ValueError extends coded('VALUE_ERROR') {}
export class NotFoundError extends coded('NOT_FOUND') {}
export class MethodNotFoundError extends coded('METHOD_NOT_FOUND') {}
export class MethodNotAllowedError extends coded('METHOD_NOT_ALLOWED') {}
export class UnsupportedOperationError extends coded('UNSUPPORTED_OPERATION') {}
export class TaskNotFoundError extends coded('TASK_NOT_FOUND') {}
export class TaskNotCancelableError extends coded('TASK_NOT_CANCELABLE') {}
/** A task with this id is already running; resubmit after it finished or use a new id. */
export class TaskAlreadyRunningError extends coded('TASK_ALREADY_RUNNING') {}
/** The reason a canceled run stopped; never reported as `failed`. */
export class TaskCanceledError extends coded('TASK_CANCELED') {}
export class PayloadTooLargeError extends coded('PAYLOAD_TOO_LARGE') {}
export class BudgetExceededError extends coded('BUDGET_EXCEEDED') {}
export class ActionDeniedError extends coded('ACTION_DENIED') {}
/**
 * Approval was needed and no handler is configured. The serializable ApprovalRequest travels as
 * `data.request`, so a client that rebuilds this error from the wire has `request` too.
 */
export class ApprovalRequiredError extends coded('APPROVAL_REQUIRED') {
  get request(): ApprovalRequestData | undefined {
    const data = this.data as { request?: ApprovalRequestData } | undefined;
    return data?.request;
  }

  static forRequest(
    request: ApprovalRequestData,
    options: Omit<AgentErrorOptions, 'data'> = {},
  ): ApprovalRequiredError {
    return new ApprovalRequiredError(
      `Approval required for ${request.action.kind} "${request.action.name}"`,
      {
        ...options,
        data: { request },
      },
    );
  }
}
export class DeadlineExceededError extends coded('DEADLINE_EXCEEDED') {}
export class UnavailableError extends coded('UNAVAILABLE') {}
/** Something with that name exists already (a registry entry). */
export class AlreadyExistsError extends coded('ALREADY_EXISTS') {}
/** A bounded resource is full (a registry at `maxEntries`). */
export class ResourceExhaustedError extends coded('RESOURCE_EXHAUSTED') {}
export class PushNotificationNotSupportedError extends coded('PUSH_NOTIFICATION_NOT_SUPPORTED') {}
export class ContentTypeNotSupportedError extends coded('CONTENT_TYPE_NOT_SUPPORTED') {}
/** A peer answered something its protocol does not allow (a malformed A2A result, say). */
export class InvalidAgentResponseError extends coded('INVALID_AGENT_RESPONSE') {}
export class ExtendedAgentCardNotConfiguredError extends coded('EXTENDED_AGENT_CARD_NOT_CONFIGURED') {}
/** A peer requires a protocol extension this side does not support. */
export class ExtensionSupportRequiredError extends coded('EXTENSION_SUPPORT_REQUIRED') {}
export class VersionNotSupportedError extends coded('VERSION_NOT_SUPPORTED') {}
/** No approval request of the caller's has that id (another owner's answers the same). */
export class ApprovalNotFoundError extends coded('APPROVAL_NOT_FOUND') {}
/** The approval request was decided (or withdrawn) before: a decision is taken once. */
export class ApprovalAlreadyDecidedError extends coded('APPROVAL_ALREADY_DECIDED') {}
/** The decision names an action hash other than the one the request was made for. */
export class ApprovalActionMismatchError extends coded('APPROVAL_ACTION_MISMATCH') {}
/** Ends a task whose replica's lease ran out while it was running. */
export class ReplicaLostError extends coded('REPLICA_LOST') {}
/** Ends a task a previous process left running when it stopped without finishing it. */
export class ProcessRestartedError extends coded('PROCESS_RESTARTED') {}
export class InternalError extends coded('INTERNAL') {}

const CLASSES: Record<ErrorCode, AgentErrorClass> = {
  UNAUTHENTICATED: UnauthenticatedError,
  PERMISSION_DENIED: PermissionDeniedError,
  INVALID_REQUEST: InvalidRequestError,
  PARSE_ERROR: ParseError,
  VALIDATION_FAILED: ValidationError,
  VALUE_ERROR: ValueError,
  NOT_FOUND: NotFoundError,
  METHOD_NOT_FOUND: MethodNotFoundError,
  METHOD_NOT_ALLOWED: MethodNotAllowedError,
  UNSUPPORTED_OPERATION: UnsupportedOperationError,
  TASK_NOT_FOUND: TaskNotFoundError,
  TASK_NOT_CANCELABLE: TaskNotCancelableError,
  TASK_ALREADY_RUNNING: TaskAlreadyRunningError,
  TASK_CANCELED: TaskCanceledError,
  PAYLOAD_TOO_LARGE: PayloadTooLargeError,
  BUDGET_EXCEEDED: BudgetExceededError,
  ACTION_DENIED: ActionDeniedError,
  APPROVAL_REQUIRED: ApprovalRequiredError,
  DEADLINE_EXCEEDED: DeadlineExceededError,
  UNAVAILABLE: UnavailableError,
  ALREADY_EXISTS: AlreadyExistsError,
  RESOURCE_EXHAUSTED: ResourceExhaustedError,
  PUSH_NOTIFICATION_NOT_SUPPORTED: PushNotificationNotSupportedError,
  CONTENT_TYPE_NOT_SUPPORTED: ContentTypeNotSupportedError,
  INVALID_AGENT_RESPONSE: InvalidAgentResponseError,
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: ExtendedAgentCardNotConfiguredError,
  EXTENSION_SUPPORT_REQUIRED: ExtensionSupportRequiredError,
  VERSION_NOT_SUPPORTED: VersionNotSupportedError,
  APPROVAL_NOT_FOUND: ApprovalNotFoundError,
  APPROVAL_ALREADY_DECIDED: ApprovalAlreadyDecidedError,
  APPROVAL_ACTION_MISMATCH: ApprovalActionMismatchError,
  REPLICA_LOST: ReplicaLostError,
  PROCESS_RESTARTED: ProcessRestartedError,
  INTERNAL: InternalError,
};

/** The error class registered for a code. */
export function errorClassFor(code: ErrorCode): AgentErrorClass {
  return CLASSES[code];
}

/** Finds the table entry whose gRPC status number matches; used by clients without a code trailer. */
export function errorCodeForGrpcStatus(status: number): ErrorCode {
  const match = INFERABLE_CODES.find((code) => GRPC_STATUS[ERROR_CODES[code].grpcStatus] === status);
  return match ?? 'INTERNAL';
}

/** Finds the most specific table entry for an HTTP status; used by clients reading a non-JSON error. */
export function errorCodeForHttpStatus(status: number): ErrorCode {
  const match = HTTP_INFERABLE_CODES.find((code) => ERROR_CODES[code].httpStatus === status);
  return match ?? (status >= 500 ? 'INTERNAL' : 'INVALID_REQUEST');
}
