import {
  AgentError,
  InternalError,
  PermissionDeniedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  ValidationError,
} from '@agent/core';
import {
  A2A_ERROR_DOMAIN,
  a2aError,
  a2aReasonOf,
  fromA2AError,
  toJsonRpcError,
  toRestError,
} from './a2a-errors.js';

describe('toJsonRpcError', () => {
  it('uses A2A codes with an ErrorInfo', () => {
    expect(toJsonRpcError(new TaskNotFoundError())).toEqual({
      code: -32001,
      message: 'Task not found',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'TASK_NOT_FOUND',
          domain: A2A_ERROR_DOMAIN,
        },
      ],
    });
    expect(toJsonRpcError(new TaskNotCancelableError()).code).toBe(-32002);
    expect(toJsonRpcError(a2aError('VERSION_NOT_SUPPORTED', 'no')).code).toBe(-32009);
    expect(toJsonRpcError(a2aError('PUSH_NOTIFICATION_NOT_SUPPORTED')).code).toBe(-32003);
    expect(toJsonRpcError(a2aError('EXTENDED_AGENT_CARD_NOT_CONFIGURED')).code).toBe(-32007);
    expect(toJsonRpcError(new InternalError('Internal error', { data: { error_id: 'e1' } }))).toMatchObject({
      code: -32603,
      data: [{ reason: 'INTERNAL', metadata: { error_id: 'e1' } }],
    });
    expect(toJsonRpcError(new UnauthenticatedError()).code).toBe(-32010);
  });

  it('names A2A reasons without leaking the interim marker', () => {
    const error = a2aError('VERSION_NOT_SUPPORTED', 'x', { requested: '2.0' });
    expect(a2aReasonOf(error)).toBe('VERSION_NOT_SUPPORTED');
    expect(toJsonRpcError(error).data).toEqual([
      expect.objectContaining({ reason: 'VERSION_NOT_SUPPORTED', metadata: { requested: '2.0' } }),
    ]);
  });

  it('adds BadRequest field violations for validation failures', () => {
    const error = new ValidationError('bad', {
      data: { errors: [{ pointer: '/message/parts/0/text', message: 'must be a string' }] },
    });
    expect(toJsonRpcError(error)).toEqual({
      code: -32602,
      message: 'bad',
      data: [
        expect.objectContaining({ reason: 'VALIDATION_FAILED' }),
        {
          '@type': 'type.googleapis.com/google.rpc.BadRequest',
          fieldViolations: [{ field: 'message.parts[0].text', description: 'must be a string' }],
        },
      ],
    });
  });
});

describe('toRestError', () => {
  it('uses google.rpc.Status bodies', () => {
    expect(toRestError(new TaskNotFoundError())).toEqual({
      status: 404,
      body: {
        error: {
          code: 404,
          status: 'NOT_FOUND',
          message: 'Task not found',
          details: [expect.objectContaining({ reason: 'TASK_NOT_FOUND' })],
        },
      },
    });
    expect(toRestError(new TaskNotCancelableError()).status).toBe(409);
    expect(toRestError(a2aError('UNSUPPORTED_OPERATION')).status).toBe(400);
    expect(toRestError(a2aError('CONTENT_TYPE_NOT_SUPPORTED')).status).toBe(415);
    expect(toRestError(new ValidationError('v')).status).toBe(400);
    expect(toRestError(new PermissionDeniedError()).body).toMatchObject({
      error: { status: 'PERMISSION_DENIED', code: 403 },
    });
  });
});

describe('fromA2AError', () => {
  it('round-trips JSON-RPC and REST bodies into typed errors', () => {
    for (const error of [
      new TaskNotFoundError(),
      new TaskNotCancelableError(),
      new ValidationError('v'),
      a2aError('VERSION_NOT_SUPPORTED'),
      a2aError('UNSUPPORTED_OPERATION'),
    ]) {
      const viaRpc = fromA2AError(toJsonRpcError(error));
      expect([viaRpc.code, viaRpc.message, a2aReasonOf(viaRpc)]).toEqual([
        error.code,
        error.message,
        a2aReasonOf(error),
      ]);
      const rest = toRestError(error);
      const viaRest = fromA2AError(rest.body, rest.status);
      expect([viaRest.code, a2aReasonOf(viaRest)]).toEqual([error.code, a2aReasonOf(error)]);
    }
  });

  it('reads bare codes from other servers', () => {
    expect(fromA2AError({ code: -32001, message: 'gone' })).toBeInstanceOf(TaskNotFoundError);
    expect(fromA2AError({ jsonrpc: '2.0', id: 1, error: { code: -32002, message: 'no' } })).toBeInstanceOf(
      TaskNotCancelableError,
    );
    expect(fromA2AError({ code: -32602, message: 'bad' }).code).toBe('VALIDATION_FAILED');
    expect(fromA2AError({ code: -32700, message: 'bad' }).code).toBe('PARSE_ERROR');
    const unknown = fromA2AError({ code: -31999, message: 'odd' });
    expect(unknown).toBeInstanceOf(AgentError);
    expect(unknown.code).toBe('INTERNAL');
    expect(unknown.data).toEqual({ a2a_code: -31999 });
    expect(fromA2AError('nonsense', 401).code).toBe('UNAUTHENTICATED');
    expect(fromA2AError({ error: { code: 404, status: 'NOT_FOUND', message: 'x' } }).code).toBe(
      'TASK_NOT_FOUND',
    );
  });
});
