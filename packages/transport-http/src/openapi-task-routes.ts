/**
 * The OpenAPI description of the routes the transport serves itself: the task routes (keyed by
 * core's CLIENT_OPERATIONS, the table `buildEndpoints` serves, so every operation must have one),
 * the host's probes and the document's own route.
 */
import { CLIENT_OPERATIONS, TASK_STATES, type ClientOperationName } from '@agent/core';
import { MAX_PAGE_SIZE } from '@agent/server';
import { routeKey } from '@agent/server/node';
import type {
  OpenApiContext,
  OpenApiContribution,
  OpenApiMediaType,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiPaths,
  OpenApiResponse,
} from './openapi-types.js';

/** The path of the document, below the transport URL's path. */
export const OPENAPI_PATH = '/openapi.json';

/** How the document itself is served: behind the authenticator, without credentials, or not at all. */
export type OpenApiServing = 'authenticated' | 'public' | 'off';

const TAG = 'tasks';

const TASK_ID: OpenApiParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: "The task's id, percent-encoded as one path segment.",
  schema: { type: 'string', minLength: 1 },
};

/** Query numbers arrive as strings; the pipeline decodes them, so the schema says integer. */
const nonNegative = { type: 'integer', minimum: 0 };

function json(context: OpenApiContext, name: string): Record<string, OpenApiMediaType> {
  return { 'application/json': { schema: context.schema(name) } };
}

function eventStream(context: OpenApiContext, description: string): OpenApiResponse {
  return {
    description,
    content: {
      'text/event-stream': {
        schema: {
          type: 'string',
          description: 'Frames of `id:` (the sequence), `event:` (the type), `data:` (a TaskEvent).',
        },
        'x-event-data': context.schema('TaskEvent'),
      },
    },
  };
}

type Describe = (context: OpenApiContext) => Omit<OpenApiOperation, 'operationId'>;

const TASK_ROUTES: Record<ClientOperationName, Describe> = {
  send_task: (context) => ({
    summary: 'Run a task to its end',
    description:
      'Answers the finished Task (a canceled or failed task too). Resubmitting an id the caller owns attaches to its run, or answers the stored task once it is over.',
    parameters: [context.tenantHeader],
    requestBody: { required: true, content: json(context, 'Task') },
    responses: {
      '200': { description: 'The finished Task.', content: json(context, 'Task') },
      ...context.errorResponses([...context.callErrors, ...context.bodyErrors, 'VALIDATION_FAILED']),
    },
  }),
  stream_task: (context) => ({
    summary: 'Run a task and stream its events',
    description:
      'The 200 is sent once the first event exists; a failure before it is a plain JSON error. The stream ends with exactly one final task.status, which carries the whole Task.',
    parameters: [context.tenantHeader],
    requestBody: { required: true, content: json(context, 'Task') },
    responses: {
      '200': eventStream(context, "The task's events as they happen."),
      ...context.errorResponses([...context.callErrors, ...context.bodyErrors, 'VALIDATION_FAILED']),
    },
  }),
  cancel_task: (context) => ({
    summary: 'Cancel a running task',
    parameters: [context.tenantHeader],
    requestBody: { required: true, content: json(context, 'CancelRequest') },
    responses: {
      '200': { description: 'The canceled Task.', content: json(context, 'Task') },
      ...context.errorResponses([
        ...context.callErrors,
        ...context.bodyErrors,
        'VALIDATION_FAILED',
        'TASK_NOT_FOUND',
        'TASK_NOT_CANCELABLE',
      ]),
    },
  }),
  get_card: (context) => ({
    summary: "The agent's card",
    description: 'With an authenticator the card names its security schemes.',
    parameters: [context.tenantHeader],
    responses: {
      '200': { description: 'The AgentCard.', content: json(context, 'AgentCard') },
      ...context.errorResponses(context.callErrors),
    },
  }),
  get_task: (context) => ({
    summary: "One of the caller's tasks",
    description: "Another caller's id is answered exactly as an unknown one.",
    parameters: [
      TASK_ID,
      {
        name: 'history_length',
        in: 'query',
        description: 'Keep the newest N messages.',
        schema: nonNegative,
      },
      context.tenantHeader,
    ],
    responses: {
      '200': { description: 'The Task, running or finished.', content: json(context, 'Task') },
      ...context.errorResponses([...context.callErrors, 'VALIDATION_FAILED', 'TASK_NOT_FOUND']),
    },
  }),
  list_tasks: (context) => ({
    summary: "One page of the caller's tasks, newest update first",
    parameters: [
      { name: 'session_id', in: 'query', schema: { type: 'string' } },
      { name: 'state', in: 'query', schema: { enum: [...TASK_STATES] } },
      {
        name: 'page_size',
        in: 'query',
        description: 'Default 50.',
        schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE },
      },
      {
        name: 'page_token',
        in: 'query',
        description: "The previous page's next_page_token.",
        schema: { type: 'string' },
      },
      context.tenantHeader,
    ],
    responses: {
      '200': {
        description: 'A page; next_page_token is "" on the last one.',
        content: json(context, 'TaskList'),
      },
      ...context.errorResponses([...context.callErrors, 'VALIDATION_FAILED']),
    },
  }),
  subscribe_task: (context) => ({
    summary: "Follow one of the caller's tasks",
    description:
      'The events after a sequence, then the live ones, ending after the final status. Last-Event-ID wins over ?after.',
    parameters: [
      TASK_ID,
      { name: 'after', in: 'query', description: 'Only events with a larger sequence.', schema: nonNegative },
      {
        name: 'Last-Event-ID',
        in: 'header',
        description: 'What an EventSource sends when it reconnects; the same as ?after.',
        schema: { type: 'string' },
      },
      context.tenantHeader,
    ],
    responses: {
      '200': eventStream(context, "The task's events."),
      ...context.errorResponses([...context.callErrors, 'VALIDATION_FAILED', 'TASK_NOT_FOUND']),
    },
  }),
};

const status = (values: string[]): JsonSchema => ({
  type: 'object',
  required: ['status'],
  properties: { status: { enum: values } },
});
type JsonSchema = OpenApiMediaType['schema'];

/** The description of what the transport serves itself, paths below the transport URL's path. */
export function taskRoutesOpenApi(context: OpenApiContext, serving: OpenApiServing): OpenApiContribution {
  const paths: OpenApiPaths = {};
  const add = (method: string, path: string, operation: OpenApiOperation): void => {
    const item = (paths[routeKey(path)] ??= {});
    item[method.toLowerCase() as 'get'] = operation;
  };
  for (const name of Object.keys(TASK_ROUTES) as ClientOperationName[]) {
    const spec = CLIENT_OPERATIONS[name];
    add(spec.method, spec.path, { operationId: name, tags: [TAG], ...TASK_ROUTES[name](context) });
  }
  add('GET', '/healthz', {
    operationId: 'get_health',
    summary: 'Liveness: the process serves',
    tags: ['probes'],
    security: [],
    responses: {
      '200': { description: 'Serving.', content: { 'application/json': { schema: status(['ok']) } } },
    },
  });
  add('GET', '/readyz', {
    operationId: 'get_readiness',
    summary: 'Readiness: started and not stopping',
    tags: ['probes'],
    security: [],
    responses: {
      '200': { description: 'Ready.', content: { 'application/json': { schema: status(['ready']) } } },
      '503': {
        description: 'Starting or stopping.',
        content: { 'application/json': { schema: status(['starting', 'stopping']) } },
      },
    },
  });
  if (serving !== 'off') {
    add('GET', OPENAPI_PATH, {
      operationId: 'get_openapi',
      summary: 'This document',
      tags: ['probes'],
      ...(serving === 'public' ? { security: [] } : { parameters: [context.tenantHeader] }),
      responses: {
        '200': {
          description: 'The OpenAPI 3.1 document of every route this server serves.',
          content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } },
        },
        ...context.errorResponses(serving === 'public' ? ['UNAVAILABLE', 'INTERNAL'] : context.callErrors),
      },
    });
  }
  return { paths };
}
