/**
 * The A2A JSON-RPC 2.0 binding: one POST endpoint, the 1.0 method names, errors with HTTP 200 (a
 * failed authentication is HTTP 401 with a challenge, a stopping server 503), streams as SSE frames
 * that are each a JSON-RPC response carrying the request's id.
 */
import type { ServerResponse } from 'node:http';
import {
  type AgentError,
  InvalidRequestError,
  MethodNotFoundError,
  ParseError,
  ValidationError,
} from '@agent/core';
import type { ServerCall, ServerPipeline } from '@agent/server';
import { MalformedJsonError, answerAfterDrain } from '@agent/server/node';
import type { ExchangeInput } from '@agent/transport-http';
import { a2aError, toJsonRpcError, toRestError } from '../a2a-errors.js';
import { readRequestObject } from '../protojson.js';
import { checkVersion, requestedVersion } from '../version.js';
import type { A2AOperations } from './a2a-operations.js';
import type { FrameStream } from './frame-stream.js';
import { acceptsContentType, writeJsonBody, writeSse } from './http.js';

type RpcId = string | number | null;
type Params = Record<string, unknown>;

type Method =
  | {
      kind: 'unary';
      operation: string;
      run: (ops: A2AOperations, call: ServerCall, params: Params) => Promise<unknown>;
    }
  | {
      kind: 'stream';
      operation: string;
      run: (ops: A2AOperations, call: ServerCall, params: Params) => Promise<FrameStream>;
    };

/** The 1.0 methods and the operation names the error policy logs them under. */
export const JSON_RPC_METHODS: Readonly<Record<string, Method>> = {
  SendMessage: { kind: 'unary', operation: 'send_message', run: (ops, call, p) => ops.sendMessage(call, p) },
  SendStreamingMessage: {
    kind: 'stream',
    operation: 'send_streaming_message',
    run: (ops, call, p) => ops.sendStreamingMessage(call, p),
  },
  GetTask: { kind: 'unary', operation: 'get_task', run: (ops, call, p) => ops.getTask(call, p) },
  ListTasks: { kind: 'unary', operation: 'list_tasks', run: (ops, call, p) => ops.listTasks(call, p) },
  CancelTask: { kind: 'unary', operation: 'cancel_task', run: (ops, call, p) => ops.cancelTask(call, p) },
  SubscribeToTask: {
    kind: 'stream',
    operation: 'subscribe_to_task',
    run: (ops, call, p) => ops.subscribeToTask(call, p),
  },
  CreateTaskPushNotificationConfig: {
    kind: 'unary',
    operation: 'create_push_config',
    run: (ops, call, p) => ops.createPushConfig(call, p),
  },
  GetTaskPushNotificationConfig: {
    kind: 'unary',
    operation: 'get_push_config',
    run: (ops, call, p) => ops.getPushConfig(call, p),
  },
  ListTaskPushNotificationConfigs: {
    kind: 'unary',
    operation: 'list_push_configs',
    run: (ops, call, p) => ops.listPushConfigs(call, p),
  },
  DeleteTaskPushNotificationConfig: {
    kind: 'unary',
    operation: 'delete_push_config',
    run: (ops, call, p) => ops.deletePushConfig(call, p),
  },
  GetExtendedAgentCard: {
    kind: 'unary',
    operation: 'get_extended_agent_card',
    run: (ops, call) => ops.getExtendedAgentCard(call),
  },
};

/** HTTP status of a JSON-RPC error answer: 200, except a failed authentication (401) and a stopping server (503). */
function httpStatusOf(error: AgentError): number {
  if (error.code === 'UNAUTHENTICATED') return 401;
  if (error.code === 'UNAVAILABLE') return 503;
  return 200;
}

export function writeRpcError(res: ServerResponse, error: AgentError, id: RpcId, challenge: string): void {
  const status = httpStatusOf(error);
  if (status === 401) {
    // A refused credential is the HTTP layer's answer, not a JSON-RPC one: a JSON-RPC envelope
    // here would hide the 401 from clients that read the envelope first (the official SDK's).
    const { body } = toRestError(error);
    writeJsonBody(res, 401, body, { 'www-authenticate': challenge });
    return;
  }
  writeJsonBody(res, status, { jsonrpc: '2.0', id, error: toJsonRpcError(error) });
}

function isRpcId(value: unknown): value is RpcId {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

export class JsonRpcBinding {
  constructor(
    private readonly pipeline: ServerPipeline,
    private readonly ops: A2AOperations,
    private readonly challenge: string,
  ) {}

  serve(call: ServerCall, input: ExchangeInput): void {
    const { req, res } = input;
    if (!acceptsContentType(req)) {
      const error = a2aError(
        'CONTENT_TYPE_NOT_SUPPORTED',
        `Content-Type ${String(req.headers['content-type']).slice(0, 80)} is not supported; send application/json`,
      );
      answerAfterDrain(req, res, input.maxBodyBytes, () => writeRpcError(res, error, null, this.challenge));
      return;
    }
    input.readBody((error, body) => {
      if (error) {
        const wire =
          error instanceof MalformedJsonError
            ? new ParseError(error.message)
            : this.pipeline.wireError(error, 'a2a_jsonrpc', call);
        answerAfterDrain(req, res, input.maxBodyBytes, () => writeRpcError(res, wire, null, this.challenge));
        return;
      }
      void this.dispatch(call, input, body);
    });
  }

  private async dispatch(call: ServerCall, input: ExchangeInput, body: unknown): Promise<void> {
    const { res } = input;
    const envelope =
      typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Params) : undefined;
    const id: RpcId = envelope && isRpcId(envelope.id) ? envelope.id : null;
    const fail = (error: unknown, operation: string, scoped?: ServerCall): void =>
      writeRpcError(res, this.pipeline.wireError(error, operation, scoped ?? call), id, this.challenge);

    if (
      !envelope ||
      envelope.jsonrpc !== '2.0' ||
      typeof envelope.method !== 'string' ||
      !isRpcId(envelope.id ?? null)
    ) {
      fail(
        new InvalidRequestError(
          'Invalid JSON-RPC request: expected {"jsonrpc": "2.0", "method", "id", "params"}',
        ),
        'a2a_jsonrpc',
      );
      return;
    }
    const methodName = envelope.method;
    const refused = checkVersion(requestedVersion(input.req.headers, input.query), methodName);
    if (refused) {
      fail(refused, 'a2a_jsonrpc');
      return;
    }
    const method = Object.prototype.hasOwnProperty.call(JSON_RPC_METHODS, methodName)
      ? JSON_RPC_METHODS[methodName]
      : undefined;
    if (!method) {
      fail(new MethodNotFoundError(`Method not found: ${methodName.slice(0, 80)}`), 'a2a_jsonrpc');
      return;
    }
    let scoped: ServerCall;
    let params: Params;
    try {
      params = readRequestObject(envelope.params ?? {}, '/params');
      const tenant = params.tenant;
      if (tenant !== undefined && tenant !== null && typeof tenant !== 'string') {
        throw new ValidationError('Invalid request: /tenant must be a string', {
          data: { errors: [{ pointer: '/tenant', message: 'must be a string' }] },
        });
      }
      scoped = this.pipeline.scope(call, typeof tenant === 'string' && tenant !== '' ? tenant : undefined);
    } catch (error) {
      fail(error, method.operation);
      return;
    }
    if (method.kind === 'unary') {
      try {
        const result = await method.run(this.ops, scoped, params);
        writeJsonBody(res, 200, { jsonrpc: '2.0', id, result });
      } catch (error) {
        fail(error, method.operation, scoped);
      }
      return;
    }
    let stream: FrameStream;
    try {
      stream = await method.run(this.ops, scoped, params);
    } catch (error) {
      fail(error, method.operation, scoped);
      return;
    }
    await writeSse(
      res,
      stream,
      (result) => ({ jsonrpc: '2.0', id, result }),
      (error) => ({
        jsonrpc: '2.0',
        id,
        error: toJsonRpcError(this.pipeline.wireError(error, method.operation, scoped)),
      }),
    );
  }
}
