/**
 * The A2A HTTP+JSON binding: the 1.0 REST paths (each also below a `/{tenant}` prefix), bodies and
 * answers as `application/json`, errors as `google.rpc.Status` bodies with the A2A HTTP statuses,
 * streams as SSE frames that are each a bare StreamResponse.
 *
 * `/tasks/{id}:cancel` is one path segment, and the router matches a parameter on a whole segment:
 * the task routes take `/tasks/{idAction}` and split the action off at the last `:` themselves.
 */
import type { ServerResponse } from 'node:http';
import { type AgentError, MethodNotFoundError } from '@agent/core';
import type { ServerCall, ServerPipeline } from '@agent/server';
import { answerAfterDrain } from '@agent/server/node';
import type { ExchangeInput } from '@agent/transport-http';
import { a2aError, toRestError } from '../a2a-errors.js';
import { readRequestObject } from '../protojson.js';
import { checkVersion, requestedVersion } from '../version.js';
import type { A2AOperations } from './a2a-operations.js';
import type { FrameStream } from './frame-stream.js';
import { acceptsContentType, readOptionalJsonBody, writeJsonBody, writeSse } from './http.js';

type Params = Record<string, unknown>;

type Action =
  | { kind: 'unary'; operation: string; run: (call: ServerCall, params: Params) => Promise<unknown> }
  | { kind: 'stream'; operation: string; run: (call: ServerCall, params: Params) => Promise<FrameStream> };

/** One REST route: its method and path below the binding's path (and below `/{tenant}`). */
export interface RestRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** `'none'`: no body; `'optional'`: `{}` when absent; `'required'`: a JSON body. */
  body: 'none' | 'optional' | 'required';
  /** The action for a request: its operation and what runs it, built from the path, query and body. */
  resolve(params: Record<string, string>): { action: Action; params: Params } | AgentError;
}

export function writeRestError(res: ServerResponse, error: AgentError, challenge: string): void {
  const { status, body } = toRestError(error);
  writeJsonBody(res, status, body, status === 401 ? { 'www-authenticate': challenge } : {});
}

/** `abc:cancel` -> ['abc', 'cancel']; an id without a known action stays whole. */
function splitAction(value: string, actions: readonly string[]): [string, string | undefined] {
  const at = value.lastIndexOf(':');
  if (at > 0) {
    const action = value.slice(at + 1);
    if (actions.includes(action)) return [value.slice(0, at), action];
  }
  return [value, undefined];
}

export function restRoutes(ops: A2AOperations): RestRoute[] {
  const unary = (operation: string, run: (call: ServerCall, params: Params) => Promise<unknown>): Action => ({
    kind: 'unary',
    operation,
    run,
  });
  const stream = (
    operation: string,
    run: (call: ServerCall, params: Params) => Promise<FrameStream>,
  ): Action => ({
    kind: 'stream',
    operation,
    run,
  });
  const send = unary('send_message', (call, p) => ops.sendMessage(call, p));
  const sendStream = stream('send_streaming_message', (call, p) => ops.sendStreamingMessage(call, p));
  const subscribe = stream('subscribe_to_task', (call, p) => ops.subscribeToTask(call, p));
  const notFound = (what: string): AgentError => new MethodNotFoundError(`No A2A route for ${what}`);
  return [
    {
      method: 'POST',
      path: '/message:send',
      body: 'required',
      resolve: () => ({ action: send, params: {} }),
    },
    {
      method: 'POST',
      path: '/message:stream',
      body: 'required',
      resolve: () => ({ action: sendStream, params: {} }),
    },
    {
      method: 'GET',
      path: '/tasks',
      body: 'none',
      resolve: () => ({ action: unary('list_tasks', (call, p) => ops.listTasks(call, p)), params: {} }),
    },
    {
      method: 'GET',
      path: '/tasks/{idAction}',
      body: 'none',
      resolve: ({ idAction }) => {
        const [id, action] = splitAction(idAction!, ['subscribe']);
        if (action === 'subscribe') return { action: subscribe, params: { id } };
        return { action: unary('get_task', (call, p) => ops.getTask(call, p)), params: { id } };
      },
    },
    {
      method: 'POST',
      path: '/tasks/{idAction}',
      body: 'optional',
      resolve: ({ idAction }) => {
        const [id, action] = splitAction(idAction!, ['cancel', 'subscribe']);
        if (action === 'cancel') {
          return { action: unary('cancel_task', (call, p) => ops.cancelTask(call, p)), params: { id } };
        }
        if (action === 'subscribe') return { action: subscribe, params: { id } };
        return notFound(`POST /tasks/${idAction}`);
      },
    },
    {
      method: 'POST',
      path: '/tasks/{taskId}/pushNotificationConfigs',
      body: 'required',
      resolve: ({ taskId }) => ({
        action: unary('create_push_config', (call, p) => ops.createPushConfig(call, p)),
        params: { taskId },
      }),
    },
    {
      method: 'GET',
      path: '/tasks/{taskId}/pushNotificationConfigs',
      body: 'none',
      resolve: ({ taskId }) => ({
        action: unary('list_push_configs', (call, p) => ops.listPushConfigs(call, p)),
        params: { taskId },
      }),
    },
    {
      method: 'GET',
      path: '/tasks/{taskId}/pushNotificationConfigs/{configId}',
      body: 'none',
      resolve: ({ taskId, configId }) => ({
        action: unary('get_push_config', (call, p) => ops.getPushConfig(call, p)),
        params: { taskId, id: configId },
      }),
    },
    {
      method: 'DELETE',
      path: '/tasks/{taskId}/pushNotificationConfigs/{configId}',
      body: 'none',
      resolve: ({ taskId, configId }) => ({
        action: unary('delete_push_config', (call, p) => ops.deletePushConfig(call, p)),
        params: { taskId, id: configId },
      }),
    },
    {
      method: 'GET',
      path: '/extendedAgentCard',
      body: 'none',
      resolve: () => ({
        action: unary('get_extended_agent_card', (call) => ops.getExtendedAgentCard(call)),
        params: {},
      }),
    },
  ];
}

export class RestBinding {
  constructor(
    private readonly pipeline: ServerPipeline,
    private readonly challenge: string,
  ) {}

  serve(route: RestRoute, call: ServerCall, input: ExchangeInput): void {
    const { req, res } = input;
    const refuse = (error: AgentError): void =>
      answerAfterDrain(req, res, input.maxBodyBytes, () => writeRestError(res, error, this.challenge));
    const refused = checkVersion(requestedVersion(req.headers, input.query));
    if (refused) return refuse(refused);
    if (route.body !== 'none' && !acceptsContentType(req)) {
      return refuse(
        a2aError(
          'CONTENT_TYPE_NOT_SUPPORTED',
          `Content-Type ${String(req.headers['content-type']).slice(0, 80)} is not supported; send application/json`,
        ),
      );
    }
    const resolved = route.resolve(input.params);
    if (!('action' in resolved)) return refuse(this.pipeline.wireError(resolved, 'a2a_rest', call));
    const { action } = resolved;
    let scoped: ServerCall;
    try {
      // The path's tenant; without one, the request's X-Tenant header (or none).
      scoped = this.pipeline.scope(call, input.params.tenant);
    } catch (error) {
      return refuse(this.pipeline.wireError(error, action.operation, call));
    }
    const query: Params = {};
    for (const [name, value] of input.query) if (name !== 'A2A-Version') query[name] = value;
    const run = (body: unknown): void => {
      let params: Params;
      try {
        const fromBody = body === undefined ? {} : readRequestObject(body);
        params = { ...readRequestObject(query), ...fromBody, ...resolved.params };
      } catch (error) {
        writeRestError(res, this.pipeline.wireError(error, action.operation, scoped), this.challenge);
        return;
      }
      void this.answer(action, scoped, params, res);
    };
    if (route.body === 'none') return run(undefined);
    const done = (error: AgentError | undefined, body?: unknown): void => {
      if (error) refuse(this.pipeline.wireError(error, action.operation, scoped));
      else run(body);
    };
    if (route.body === 'required') input.readBody(done);
    else readOptionalJsonBody(input, done);
  }

  private async answer(action: Action, call: ServerCall, params: Params, res: ServerResponse): Promise<void> {
    const fail = (error: unknown): void =>
      writeRestError(res, this.pipeline.wireError(error, action.operation, call), this.challenge);
    if (action.kind === 'unary') {
      try {
        writeJsonBody(res, 200, await action.run(call, params));
      } catch (error) {
        fail(error);
      }
      return;
    }
    let stream: FrameStream;
    try {
      stream = await action.run(call, params);
    } catch (error) {
      fail(error);
      return;
    }
    await writeSse(
      res,
      stream,
      (frame) => frame,
      (error) => toRestError(this.pipeline.wireError(error, action.operation, call)).body,
    );
  }
}
