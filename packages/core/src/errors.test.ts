import {
  AgentError,
  ERROR_CODES,
  GRPC_STATUS,
  TaskCanceledError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  ValidationError,
  errorClassFor,
  errorCodeForGrpcStatus,
  errorCodeForHttpStatus,
  type ErrorCode,
} from './index.js';

describe('error table', () => {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];

  it.each(codes)('%s maps to the table row', (code) => {
    const ErrorClass = errorClassFor(code);
    const error = new ErrorClass();
    const row = ERROR_CODES[code];
    expect(error).toBeInstanceOf(AgentError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe(code);
    expect(error.httpStatus).toBe(row.httpStatus);
    expect(error.jsonRpcCode).toBe(row.jsonRpcCode);
    expect(error.grpcStatus).toBe(GRPC_STATUS[row.grpcStatus]);
    expect(error.grpcStatusName).toBe(row.grpcStatus);
    expect(error.message).toBe(row.message);
    expect(error.name).toBe(ErrorClass.name);
  });

  it('keeps the fixed statuses of the authentication and task errors', () => {
    expect(new UnauthenticatedError()).toMatchObject({
      httpStatus: 401,
      jsonRpcCode: -32010,
      grpcStatus: 16,
    });
    expect(new TaskNotFoundError()).toMatchObject({ httpStatus: 404, jsonRpcCode: -32001, grpcStatus: 5 });
    expect(new TaskNotCancelableError()).toMatchObject({
      httpStatus: 409,
      jsonRpcCode: -32002,
      grpcStatus: 9,
    });
    expect(new ValidationError()).toMatchObject({ httpStatus: 422, jsonRpcCode: -32602, grpcStatus: 3 });
    expect(new AgentError('INTERNAL')).toMatchObject({
      httpStatus: 500,
      jsonRpcCode: -32603,
      grpcStatus: 13,
    });
    expect(new AgentError('PAYLOAD_TOO_LARGE')).toMatchObject({ httpStatus: 413, grpcStatus: 8 });
    expect(new AgentError('INVALID_REQUEST')).toMatchObject({
      httpStatus: 400,
      jsonRpcCode: -32600,
      grpcStatus: 3,
    });
  });

  it('serializes to the wire body and back to the same class', () => {
    const error = new TaskNotFoundError('no task t1', { data: { task_id: 't1' } });
    expect(error.toJSON()).toEqual({
      code: 'TASK_NOT_FOUND',
      message: 'no task t1',
      data: { task_id: 't1' },
    });
    const back = AgentError.fromJSON(JSON.parse(JSON.stringify(error)));
    expect(back).toBeInstanceOf(TaskNotFoundError);
    expect(back.message).toBe('no task t1');
    expect(back.data).toEqual({ task_id: 't1' });
    expect(AgentError.fromJSON({ code: 'NOPE', message: 'x' }).code).toBe('INTERNAL');
    expect(AgentError.fromJSON('garbage').code).toBe('INTERNAL');
  });

  it('looks codes up by wire status', () => {
    expect(errorCodeForGrpcStatus(16)).toBe('UNAUTHENTICATED');
    expect(errorCodeForGrpcStatus(999)).toBe('INTERNAL');
    expect(errorCodeForHttpStatus(401)).toBe('UNAUTHENTICATED');
    // A bare 429 is a rate limit, not a spent budget; a bare gRPC 8 is most often a size limit.
    expect(errorCodeForHttpStatus(429)).toBe('RESOURCE_EXHAUSTED');
    expect(errorCodeForGrpcStatus(8)).toBe('PAYLOAD_TOO_LARGE');
    expect(errorCodeForHttpStatus(502)).toBe('INTERNAL');
    // A2A's own codes are never guessed from a bare status.
    expect(errorCodeForHttpStatus(415)).toBe('INVALID_REQUEST');
    expect(errorCodeForGrpcStatus(13)).toBe('INTERNAL');
  });

  it('carries A2A 1.0 conditions with their JSON-RPC codes', () => {
    const rows = {
      PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
      CONTENT_TYPE_NOT_SUPPORTED: -32005,
      INVALID_AGENT_RESPONSE: -32006,
      EXTENDED_AGENT_CARD_NOT_CONFIGURED: -32007,
      EXTENSION_SUPPORT_REQUIRED: -32008,
      VERSION_NOT_SUPPORTED: -32009,
    } as const;
    for (const [code, jsonRpc] of Object.entries(rows) as [keyof typeof rows, number][]) {
      expect(ERROR_CODES[code].jsonRpcCode).toBe(jsonRpc);
      const error = AgentError.fromJSON({ code, message: 'm' });
      expect(error).toBeInstanceOf(errorClassFor(code));
      expect(error.code).toBe(code);
    }
  });
});

describe('AgentError.from', () => {
  it('keeps an AgentError', () => {
    const error = new TaskNotFoundError();
    expect(AgentError.from(error)).toBe(error);
  });
  it('wraps anything else as INTERNAL with cause', () => {
    const cause = new RangeError('boom');
    const wrapped = AgentError.from(cause);
    expect(wrapped.code).toBe('INTERNAL');
    expect(wrapped.message).toBe('boom');
    expect(wrapped.cause).toBe(cause);
    const fromString = AgentError.from('text');
    expect(fromString).toMatchObject({ code: 'INTERNAL', message: 'text', cause: 'text' });
    const fromObject = AgentError.from({ weird: true });
    expect(fromObject).toMatchObject({ code: 'INTERNAL', message: 'Internal error' });
    expect(fromObject.cause).toEqual({ weird: true });
  });
  it('maps aborts to TASK_CANCELED and timeouts to DEADLINE_EXCEEDED', () => {
    const controller = new AbortController();
    controller.abort();
    expect(AgentError.from(controller.signal.reason)).toBeInstanceOf(TaskCanceledError);
    expect(
      AgentError.from(AbortSignal.timeout(0).reason ?? new DOMException('t', 'TimeoutError')).code,
    ).toMatch(/DEADLINE_EXCEEDED|TASK_CANCELED/);
    expect(AgentError.from(new DOMException('late', 'TimeoutError')).code).toBe('DEADLINE_EXCEEDED');
  });
});
