/**
 * The A2A routes in the OpenAPI document of the HTTPTransport that serves them (`A2AServer.openapi`):
 * the public card, the JSON-RPC binding and the HTTP+JSON binding (each route also below
 * `/{tenant}`), with A2A's own ProtoJSON schemas and its two error forms, the JSON-RPC error object
 * and the `google.rpc.Status` body. Error statuses, JSON-RPC codes, method names and task states are
 * taken from the tables the bindings answer with, not written out again.
 */
import { AgentError, ERROR_CODES, TASK_STATES, type ErrorCode, errorClassFor } from '@agent/core';
import type {
  JsonSchema,
  OpenApiContext,
  OpenApiContribution,
  OpenApiMediaType,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiPaths,
  OpenApiReference,
  OpenApiResponse,
} from '@agent/transport-http';
import { AGENT_CARD_PATH } from '../agent-card.js';
import { A2A_ERRORS, jsonRpcCodeOf, toRestError } from '../a2a-errors.js';
import { A2A_AGENT_CARD_SCHEMA } from '../card-schema.js';
import { A2A_PROTOCOL_VERSION, toA2AState } from '../protojson.js';
import { A2A_VERSION_QUERY } from '../version.js';
import { JSON_RPC_METHODS } from './json-rpc-binding.js';

export interface A2AOpenApiPaths {
  jsonRpcPath: string;
  restPath: string;
  cardMaxAgeSeconds: number;
}

const TAGS = ['a2a'];

/** What every authenticated call can be refused with before its operation runs. */
const CALL_ERRORS: readonly ErrorCode[] = [
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'INVALID_REQUEST',
  'VERSION_NOT_SUPPORTED',
  'UNAVAILABLE',
  'INTERNAL',
];
/** Reading a JSON body: too large, compressed or malformed, not JSON, not a valid request. */
const BODY_ERRORS: readonly ErrorCode[] = [
  'PAYLOAD_TOO_LARGE',
  'INVALID_REQUEST',
  'CONTENT_TYPE_NOT_SUPPORTED',
  'VALIDATION_FAILED',
];

const VERSION_PARAMETERS: OpenApiParameter[] = [
  {
    name: 'A2A-Version',
    in: 'header',
    description: `The A2A version of the request: only ${A2A_PROTOCOL_VERSION} is served. Absent: ${A2A_PROTOCOL_VERSION}.`,
    schema: { type: 'string', enum: [A2A_PROTOCOL_VERSION] },
  },
  {
    name: A2A_VERSION_QUERY,
    in: 'query',
    description: 'The same, for a client that cannot set headers; the header wins.',
    schema: { type: 'string', enum: [A2A_PROTOCOL_VERSION] },
  },
];

const TENANT_PATH: OpenApiParameter = {
  name: 'tenant',
  in: 'path',
  required: true,
  description: 'The tenant the call acts in; it wins over an X-Tenant header.',
  schema: { type: 'string', minLength: 1 },
};

const CHALLENGE = {
  'WWW-Authenticate': {
    description: "The authenticator's scheme: ApiKey, Bearer or Basic.",
    schema: { type: 'string' },
  },
};

// ---------------------------------------------------------------------------------------------
// Error answers

function instanceOf(code: ErrorCode): AgentError {
  const ErrorClass = errorClassFor(code);
  return ErrorClass === AgentError ? new AgentError(code) : new ErrorClass();
}

/**
 * The HTTP+JSON error answers of these codes: one response per HTTP status the binding gives them
 * (`toRestError`, the function that writes them), and a `default` for any other code.
 */
function restErrors(context: OpenApiContext, codes: readonly ErrorCode[]): Record<string, OpenApiResponse> {
  const byStatus = new Map<number, { codes: ErrorCode[]; grpc: Set<string> }>();
  for (const code of codes) {
    const { status, body } = toRestError(instanceOf(code));
    const entry = byStatus.get(status) ?? { codes: [], grpc: new Set<string>() };
    if (!entry.codes.includes(code)) entry.codes.push(code);
    entry.grpc.add((body as { error: { status: string } }).error.status);
    byStatus.set(status, entry);
  }
  const responses: Record<string, OpenApiResponse> = {};
  for (const [status, entry] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `${entry.codes.join(', ')} (the ErrorInfo reason).`,
      ...(status === 401 ? { headers: CHALLENGE } : {}),
      content: {
        'application/json': {
          schema: {
            allOf: [
              context.schema('A2AErrorStatus'),
              {
                properties: {
                  error: { properties: { code: { const: status }, status: { enum: [...entry.grpc] } } },
                },
              },
            ],
          },
        },
      },
    };
  }
  responses.default = {
    description: 'Any other error, with the HTTP status of its code.',
    content: { 'application/json': { schema: context.schema('A2AErrorStatus') } },
  };
  return responses;
}

// ---------------------------------------------------------------------------------------------
// HTTP+JSON routes

function json(schema: JsonSchema): Record<string, OpenApiMediaType> {
  return { 'application/json': { schema } };
}

/** A request body: `application/json`, or `application/a2a+json`, the same schema. */
function body(schema: JsonSchema, required = true): OpenApiOperation['requestBody'] {
  return { required, content: { 'application/json': { schema }, 'application/a2a+json': { schema } } };
}

function restStream(context: OpenApiContext): OpenApiMediaType {
  return {
    schema: {
      type: 'string',
      description:
        'Frames of one `data:` line each: a StreamResponse; the Task first, then status and artifact updates, until the task is terminal or interrupted. A failure after the first frame is one google.rpc.Status frame, then the end.',
    },
    'x-event-data': { oneOf: [context.schema('A2AStreamResponse'), context.schema('A2AErrorStatus')] },
  };
}

const query = (name: string, schema: JsonSchema, description?: string): OpenApiParameter => ({
  name,
  in: 'query',
  schema,
  ...(description ? { description } : {}),
});
const path = (name: string, description: string): OpenApiParameter => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string', minLength: 1 },
});

const HISTORY_LENGTH = query(
  'historyLength',
  { type: 'integer', minimum: 0 },
  'Keep the newest N messages of `history`; 0: none; absent: all.',
);
const TASK_ID = path('taskId', 'The task id.');
const CONFIG_ID = path('configId', 'The push notification config id.');

interface RestOperation {
  method: 'get' | 'post' | 'delete';
  /** Below the binding's path (and below `/{tenant}`), as the binding's route table names it. */
  path: string;
  operationId: string;
  describe: (context: OpenApiContext) => Omit<OpenApiOperation, 'operationId' | 'tags'>;
}

const PUSH_ERRORS: readonly ErrorCode[] = ['TASK_NOT_FOUND', 'PUSH_NOTIFICATION_NOT_SUPPORTED'];

const REST_OPERATIONS: readonly RestOperation[] = [
  {
    method: 'post',
    path: '/message:send',
    operationId: 'send_message',
    describe: (context) => ({
      summary: 'SendMessage: start a task, or continue one of the caller’s, and answer when it stops',
      requestBody: body(context.schema('A2ASendMessageRequest')),
      responses: {
        '200': {
          description: 'The task, or a message-only reply.',
          content: json(context.schema('A2ASendMessageResponse')),
        },
        ...restErrors(context, [
          ...CALL_ERRORS,
          ...BODY_ERRORS,
          'TASK_NOT_FOUND',
          'UNSUPPORTED_OPERATION',
          'TASK_ALREADY_RUNNING',
          'PUSH_NOTIFICATION_NOT_SUPPORTED',
        ]),
      },
    }),
  },
  {
    method: 'post',
    path: '/message:stream',
    operationId: 'send_streaming_message',
    describe: (context) => ({
      summary: 'SendStreamingMessage: start or continue a task and stream its updates',
      description: 'A failure before the first frame is a plain error answer with its status.',
      requestBody: body(context.schema('A2ASendMessageRequest')),
      responses: {
        '200': {
          description: "The task's updates as they happen.",
          content: { 'text/event-stream': restStream(context) },
        },
        ...restErrors(context, [
          ...CALL_ERRORS,
          ...BODY_ERRORS,
          'TASK_NOT_FOUND',
          'UNSUPPORTED_OPERATION',
          'TASK_ALREADY_RUNNING',
          'PUSH_NOTIFICATION_NOT_SUPPORTED',
        ]),
      },
    }),
  },
  {
    method: 'get',
    path: '/tasks',
    operationId: 'list_tasks',
    describe: (context) => ({
      summary: "ListTasks: one page of the caller's tasks in the tenant, newest update first",
      parameters: [
        query('contextId', { type: 'string' }),
        query('status', context.schema('A2ATaskState'), 'A state name (or its proto number).'),
        query('pageSize', { type: 'integer', minimum: 0, maximum: 100 }, '1 to 100; absent or 0: 50.'),
        query('pageToken', { type: 'string' }),
        HISTORY_LENGTH,
        query('includeArtifacts', { type: 'boolean' }, 'Default false: no `artifacts`.'),
        query('statusTimestampAfter', { type: 'string', format: 'date-time' }),
      ],
      responses: {
        '200': {
          description: 'A page; nextPageToken is "" on the last one.',
          content: json(context.schema('A2AListTasksResponse')),
        },
        ...restErrors(context, [...CALL_ERRORS, 'VALIDATION_FAILED']),
      },
    }),
  },
  {
    method: 'get',
    path: '/tasks/{idAction}',
    operationId: 'get_task',
    describe: (context) => ({
      summary: 'GetTask (`/tasks/{id}`), or SubscribeToTask (`/tasks/{id}:subscribe`)',
      description:
        'SubscribeToTask answers `text/event-stream`: the task as it stands, then its live updates; a finished task is UNSUPPORTED_OPERATION before any frame.',
      parameters: [path('idAction', 'The task id, or the task id followed by `:subscribe`.'), HISTORY_LENGTH],
      responses: {
        '200': {
          description: 'GetTask: the Task. SubscribeToTask: its updates.',
          content: {
            'application/json': { schema: context.schema('A2ATask') },
            'text/event-stream': restStream(context),
          },
        },
        ...restErrors(context, [
          ...CALL_ERRORS,
          'VALIDATION_FAILED',
          'TASK_NOT_FOUND',
          'UNSUPPORTED_OPERATION',
        ]),
      },
    }),
  },
  {
    method: 'post',
    path: '/tasks/{idAction}',
    operationId: 'cancel_task',
    describe: (context) => ({
      summary: 'CancelTask (`/tasks/{id}:cancel`), or SubscribeToTask (`/tasks/{id}:subscribe`)',
      description:
        'Canceling a canceled task answers it again. Without `:cancel` or `:subscribe` the path names no route (METHOD_NOT_FOUND, 404).',
      parameters: [path('idAction', 'The task id followed by `:cancel` or `:subscribe`.')],
      requestBody: body(context.schema('A2ACancelTaskRequest'), false),
      responses: {
        '200': {
          description: 'CancelTask: the canceled Task. SubscribeToTask: its updates.',
          content: {
            'application/json': { schema: context.schema('A2ATask') },
            'text/event-stream': restStream(context),
          },
        },
        ...restErrors(context, [
          ...CALL_ERRORS,
          ...BODY_ERRORS,
          'METHOD_NOT_FOUND',
          'TASK_NOT_FOUND',
          'TASK_NOT_CANCELABLE',
          'UNSUPPORTED_OPERATION',
        ]),
      },
    }),
  },
  {
    method: 'post',
    path: '/tasks/{taskId}/pushNotificationConfigs',
    operationId: 'create_push_config',
    describe: (context) => ({
      summary: 'CreateTaskPushNotificationConfig: POST the task’s updates to a webhook',
      parameters: [TASK_ID],
      requestBody: body(context.schema('A2ATaskPushNotificationConfig')),
      responses: {
        '200': {
          description: 'The stored config (its credentials included).',
          content: json(context.schema('A2ATaskPushNotificationConfig')),
        },
        ...restErrors(context, [...CALL_ERRORS, ...BODY_ERRORS, ...PUSH_ERRORS]),
      },
    }),
  },
  {
    method: 'get',
    path: '/tasks/{taskId}/pushNotificationConfigs',
    operationId: 'list_push_configs',
    describe: (context) => ({
      summary: "ListTaskPushNotificationConfigs: the task's push configs",
      parameters: [TASK_ID],
      responses: {
        '200': {
          description: 'Every config of the task.',
          content: json(context.schema('A2AListTaskPushNotificationConfigsResponse')),
        },
        ...restErrors(context, [...CALL_ERRORS, 'VALIDATION_FAILED', ...PUSH_ERRORS]),
      },
    }),
  },
  {
    method: 'get',
    path: '/tasks/{taskId}/pushNotificationConfigs/{configId}',
    operationId: 'get_push_config',
    describe: (context) => ({
      summary: 'GetTaskPushNotificationConfig: one push config of the task',
      parameters: [TASK_ID, CONFIG_ID],
      responses: {
        '200': { description: 'The config.', content: json(context.schema('A2ATaskPushNotificationConfig')) },
        ...restErrors(context, [...CALL_ERRORS, 'VALIDATION_FAILED', ...PUSH_ERRORS]),
      },
    }),
  },
  {
    method: 'delete',
    path: '/tasks/{taskId}/pushNotificationConfigs/{configId}',
    operationId: 'delete_push_config',
    describe: (context) => ({
      summary: 'DeleteTaskPushNotificationConfig: stop one webhook of the task',
      parameters: [TASK_ID, CONFIG_ID],
      responses: {
        '200': {
          description: 'Deleted: an empty object.',
          content: json({ type: 'object', maxProperties: 0 }),
        },
        ...restErrors(context, [...CALL_ERRORS, 'VALIDATION_FAILED', ...PUSH_ERRORS]),
      },
    }),
  },
  {
    method: 'get',
    path: '/extendedAgentCard',
    operationId: 'get_extended_agent_card',
    describe: (context) => ({
      summary: 'GetExtendedAgentCard: the card for authenticated callers',
      description: 'UNSUPPORTED_OPERATION when the server has no extended card (its card says so).',
      responses: {
        '200': {
          description: 'The public card with the extended fields over it.',
          content: json(context.schema('A2AAgentCard')),
        },
        ...restErrors(context, [...CALL_ERRORS, 'UNSUPPORTED_OPERATION']),
      },
    }),
  },
];

function restPaths(context: OpenApiContext, restPath: string): OpenApiPaths {
  const paths: OpenApiPaths = {};
  for (const [prefix, stem, extra] of [
    ['', 'a2a_rest_', [context.tenantHeader]],
    ['/{tenant}', 'a2a_rest_tenant_', []],
  ] as [string, string, OpenApiReference[]][]) {
    for (const route of REST_OPERATIONS) {
      const described = route.describe(context);
      const own = described.parameters ?? [];
      (paths[`${restPath}${prefix}${route.path}`] ??= {})[route.method] = {
        operationId: `${stem}${route.operationId}`,
        tags: TAGS,
        ...described,
        parameters: [...(prefix ? [TENANT_PATH] : []), ...own, ...VERSION_PARAMETERS, ...extra],
      };
    }
  }
  return paths;
}

// ---------------------------------------------------------------------------------------------
// The card and the JSON-RPC binding

function cardOperation(context: OpenApiContext, maxAge: number): OpenApiOperation {
  const headers = {
    ETag: { description: 'The quoted SHA-256 of the body.', schema: { type: 'string' } },
    'Cache-Control': { description: `\`public, max-age=${maxAge}\`.`, schema: { type: 'string' } },
  };
  return {
    operationId: 'a2a_get_agent_card',
    tags: TAGS,
    summary: 'The public A2A agent card',
    description:
      'Served without credentials. Its interfaces name this server’s JSON-RPC and HTTP+JSON URLs; with an authenticator it names the security schemes.',
    security: [],
    parameters: [
      {
        name: 'If-None-Match',
        in: 'header',
        description: 'An ETag of an earlier answer: 304 while the card is unchanged.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': {
        description: 'The A2A 1.0 AgentCard.',
        headers,
        content: json(context.schema('A2AAgentCard')),
      },
      '304': { description: 'The card is the one If-None-Match names.', headers },
      ...restErrors(context, ['UNAVAILABLE', 'INTERNAL']),
    },
  };
}

function jsonRpcOperation(context: OpenApiContext): OpenApiOperation {
  const streams = Object.entries(JSON_RPC_METHODS)
    .filter(([, method]) => method.kind === 'stream')
    .map(([name]) => name);
  return {
    operationId: 'a2a_jsonrpc',
    tags: TAGS,
    summary: 'The A2A JSON-RPC 2.0 binding',
    description: `One request object per POST; \`params.tenant\` names the tenant (else the X-Tenant header). Errors are answered with HTTP 200 and a JSON-RPC error object, except a refused credential (401, a google.rpc.Status body) and a stopping server (503). ${streams.join(' and ')} answer \`text/event-stream\` once the stream starts: each frame a JSON-RPC response with the request's id.`,
    parameters: [...VERSION_PARAMETERS, context.tenantHeader],
    requestBody: body(context.schema('A2AJsonRpcRequest')),
    responses: {
      '200': {
        description: 'The result or the error of the call.',
        content: {
          'application/json': { schema: context.schema('A2AJsonRpcResponse') },
          'text/event-stream': {
            schema: {
              type: 'string',
              description: `${streams.join(', ')}: frames of one \`data:\` line each; the Task first, then status and artifact updates, until the task is terminal or interrupted. A failure after the first frame is one error frame, then the end.`,
            },
            'x-event-data': context.schema('A2AJsonRpcStreamResponse'),
          },
        },
      },
      '401': {
        description: 'UNAUTHENTICATED, answered before the body is read.',
        headers: CHALLENGE,
        content: json(context.schema('A2AErrorStatus')),
      },
      '503': {
        description: 'UNAVAILABLE: the server is stopping.',
        content: json(context.schema('A2AJsonRpcErrorResponse')),
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Schemas

function schemas(context: OpenApiContext): Record<string, JsonSchema> {
  const ref = (name: string): JsonSchema => context.schema(name);
  const metadata = { type: 'object', additionalProperties: true };
  const rpcId = { type: ['string', 'integer', 'null'] };
  const tenant = { type: 'string', description: 'The tenant the call acts in.' };
  const taskId = { type: 'string', minLength: 1 };
  const rpcCodes = [
    ...new Set((Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => jsonRpcCodeOf(instanceOf(code)))),
  ];
  const a2aCodes = Object.entries(A2A_ERRORS)
    .map(([reason, code]) => `${code} ${reason}`)
    .join(', ');
  const params: Record<string, JsonSchema> = {
    SendMessage: ref('A2ASendMessageRequest'),
    SendStreamingMessage: ref('A2ASendMessageRequest'),
    GetTask: {
      type: 'object',
      required: ['id'],
      properties: { tenant, id: taskId, historyLength: { type: 'integer', minimum: 0 } },
    },
    ListTasks: ref('A2AListTasksRequest'),
    CancelTask: ref('A2ACancelTaskRequest'),
    SubscribeToTask: { type: 'object', required: ['id'], properties: { tenant, id: taskId } },
    CreateTaskPushNotificationConfig: {
      allOf: [ref('A2ATaskPushNotificationConfig'), { required: ['taskId'] }],
    },
    GetTaskPushNotificationConfig: {
      type: 'object',
      required: ['taskId', 'id'],
      properties: { tenant, taskId, id: { type: 'string', minLength: 1 } },
    },
    ListTaskPushNotificationConfigs: { type: 'object', required: ['taskId'], properties: { tenant, taskId } },
    DeleteTaskPushNotificationConfig: {
      type: 'object',
      required: ['taskId', 'id'],
      properties: { tenant, taskId, id: { type: 'string', minLength: 1 } },
    },
    GetExtendedAgentCard: { type: 'object', properties: { tenant } },
  };
  const methods = Object.keys(JSON_RPC_METHODS);
  return {
    // A copy: the document is the caller's, the validator keeps compiling the original.
    A2AAgentCard: structuredClone(A2A_AGENT_CARD_SCHEMA),
    A2ATaskState: { type: 'string', enum: TASK_STATES.map(toA2AState) },
    A2APart: {
      type: 'object',
      description: 'Exactly one of text, raw (base64), url, data.',
      properties: {
        text: { type: 'string' },
        raw: { type: 'string', contentEncoding: 'base64' },
        url: { type: 'string' },
        data: {},
        mediaType: { type: 'string' },
        filename: { type: 'string' },
        metadata,
      },
      oneOf: ['text', 'raw', 'url', 'data'].map((key) => ({ required: [key] })),
      additionalProperties: true,
    },
    A2AMessage: {
      type: 'object',
      description: 'Input is also read with snake_case names and numeric roles (1 user, 2 agent).',
      required: ['messageId', 'role', 'parts'],
      properties: {
        messageId: { type: 'string', minLength: 1 },
        contextId: { type: 'string' },
        taskId: { type: 'string' },
        role: { type: 'string', enum: ['ROLE_USER', 'ROLE_AGENT'] },
        parts: { type: 'array', items: ref('A2APart') },
        metadata,
        extensions: { type: 'array', items: { type: 'string' } },
        referenceTaskIds: { type: 'array', items: { type: 'string' } },
      },
      additionalProperties: true,
    },
    A2AArtifact: {
      type: 'object',
      required: ['artifactId', 'parts'],
      properties: {
        artifactId: { type: 'string' },
        name: { type: 'string' },
        description: { type: 'string' },
        parts: { type: 'array', items: ref('A2APart') },
        metadata,
        extensions: { type: 'array', items: { type: 'string' } },
      },
      additionalProperties: true,
    },
    A2ATaskStatus: {
      type: 'object',
      required: ['state'],
      properties: {
        state: ref('A2ATaskState'),
        message: ref('A2AMessage'),
        timestamp: { type: 'string', format: 'date-time' },
      },
      additionalProperties: true,
    },
    A2ATask: {
      type: 'object',
      description:
        'ProtoJSON: fields at their default are omitted (no empty history, artifacts or metadata).',
      required: ['id', 'contextId', 'status'],
      properties: {
        id: { type: 'string' },
        contextId: { type: 'string' },
        status: ref('A2ATaskStatus'),
        artifacts: { type: 'array', items: ref('A2AArtifact') },
        history: { type: 'array', items: ref('A2AMessage') },
        metadata,
      },
      additionalProperties: true,
    },
    A2AStreamResponse: {
      description: 'One stream frame: exactly one of task, message, statusUpdate, artifactUpdate.',
      oneOf: [
        { type: 'object', required: ['task'], properties: { task: ref('A2ATask') } },
        { type: 'object', required: ['message'], properties: { message: ref('A2AMessage') } },
        {
          type: 'object',
          required: ['statusUpdate'],
          properties: {
            statusUpdate: {
              type: 'object',
              required: ['taskId', 'contextId', 'status'],
              properties: {
                taskId: { type: 'string' },
                contextId: { type: 'string' },
                status: ref('A2ATaskStatus'),
                metadata,
              },
            },
          },
        },
        {
          type: 'object',
          required: ['artifactUpdate'],
          properties: {
            artifactUpdate: {
              type: 'object',
              required: ['taskId', 'contextId', 'artifact'],
              properties: {
                taskId: { type: 'string' },
                contextId: { type: 'string' },
                artifact: ref('A2AArtifact'),
                append: { type: 'boolean' },
                lastChunk: { type: 'boolean' },
                metadata,
              },
            },
          },
        },
      ],
    },
    A2ASendMessageRequest: {
      type: 'object',
      description: 'A message with a taskId continues that task (one of the caller’s, interrupted).',
      required: ['message'],
      properties: {
        tenant,
        message: ref('A2AMessage'),
        configuration: {
          type: 'object',
          properties: {
            historyLength: { type: 'integer', minimum: 0 },
            returnImmediately: { type: 'boolean', description: 'Answer after the first event.' },
            taskPushNotificationConfig: ref('A2ATaskPushNotificationConfig'),
          },
          additionalProperties: true,
        },
        metadata,
      },
      additionalProperties: true,
    },
    A2ASendMessageResponse: {
      oneOf: [
        { type: 'object', required: ['task'], properties: { task: ref('A2ATask') } },
        { type: 'object', required: ['message'], properties: { message: ref('A2AMessage') } },
      ],
    },
    A2AListTasksRequest: {
      type: 'object',
      properties: {
        tenant,
        contextId: { type: 'string' },
        status: ref('A2ATaskState'),
        pageSize: { type: 'integer', minimum: 0, maximum: 100 },
        pageToken: { type: 'string' },
        historyLength: { type: 'integer', minimum: 0 },
        includeArtifacts: { type: 'boolean' },
        statusTimestampAfter: { type: 'string', format: 'date-time' },
      },
      additionalProperties: true,
    },
    A2AListTasksResponse: {
      type: 'object',
      description: 'totalSize is the number of tasks on this page.',
      required: ['tasks', 'nextPageToken', 'pageSize', 'totalSize'],
      properties: {
        tasks: { type: 'array', items: ref('A2ATask') },
        nextPageToken: { type: 'string' },
        pageSize: { type: 'integer' },
        totalSize: { type: 'integer' },
      },
    },
    A2ACancelTaskRequest: {
      type: 'object',
      description: 'JSON-RPC names the task in id; HTTP+JSON in the path.',
      properties: {
        tenant,
        id: taskId,
        metadata: {
          type: 'object',
          properties: { reason: { type: 'string', description: "Kept as the task's cancel_reason." } },
          additionalProperties: true,
        },
      },
      additionalProperties: true,
    },
    A2ATaskPushNotificationConfig: {
      type: 'object',
      description: 'Where the updates of one task are POSTed. The server mints id when it is absent.',
      required: ['url'],
      properties: {
        tenant,
        id: { type: 'string' },
        taskId: { type: 'string' },
        url: { type: 'string', format: 'uri' },
        token: { type: 'string', description: 'Sent back in X-A2A-Notification-Token.' },
        authentication: {
          type: 'object',
          required: ['scheme'],
          properties: { scheme: { type: 'string' }, credentials: { type: 'string' } },
        },
      },
      additionalProperties: true,
    },
    A2AListTaskPushNotificationConfigsResponse: {
      type: 'object',
      required: ['configs'],
      properties: {
        configs: { type: 'array', items: ref('A2ATaskPushNotificationConfig') },
        nextPageToken: { type: 'string' },
      },
    },
    A2AErrorDetail: {
      description:
        'A google.rpc.ErrorInfo (reason: the error code; domain a2a-protocol.org) or a google.rpc.BadRequest.',
      anyOf: [
        {
          type: 'object',
          required: ['@type', 'reason', 'domain'],
          properties: {
            '@type': { const: 'type.googleapis.com/google.rpc.ErrorInfo' },
            reason: { type: 'string' },
            domain: { type: 'string' },
            metadata: { type: 'object', additionalProperties: { type: 'string' } },
          },
        },
        {
          type: 'object',
          required: ['@type', 'fieldViolations'],
          properties: {
            '@type': { const: 'type.googleapis.com/google.rpc.BadRequest' },
            fieldViolations: {
              type: 'array',
              items: {
                type: 'object',
                required: ['field', 'description'],
                properties: { field: { type: 'string' }, description: { type: 'string' } },
              },
            },
          },
        },
      ],
    },
    A2AErrorStatus: {
      type: 'object',
      description:
        'The google.rpc.Status error body of the HTTP+JSON binding (and of the card and a refused credential).',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'status', 'message'],
          properties: {
            code: { type: 'integer', description: 'The HTTP status.' },
            status: {
              type: 'string',
              description: 'The google.rpc.Code name (NOT_FOUND, INVALID_ARGUMENT, …).',
            },
            message: { type: 'string' },
            details: { type: 'array', items: ref('A2AErrorDetail') },
          },
        },
      },
    },
    A2AJsonRpcRequest: {
      type: 'object',
      description: 'params default to {}. A2A 0.3 method names (message/send, …) are refused with -32009.',
      required: ['jsonrpc', 'method'],
      properties: {
        jsonrpc: { const: '2.0' },
        id: rpcId,
        method: { type: 'string', enum: methods },
        params: { type: 'object' },
      },
      oneOf: methods.map((method) => ({
        properties: { method: { const: method }, params: params[method] ?? { type: 'object' } },
      })),
    },
    A2AJsonRpcError: {
      type: 'object',
      description: `The A2A codes: ${a2aCodes}; the JSON-RPC ones: -32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid params, -32603 internal error; the rest from the error table.`,
      required: ['code', 'message'],
      properties: {
        code: { type: 'integer', enum: rpcCodes.sort((a, b) => b - a) },
        message: { type: 'string' },
        data: { type: 'array', items: ref('A2AErrorDetail') },
      },
    },
    A2AJsonRpcErrorResponse: {
      type: 'object',
      required: ['jsonrpc', 'id', 'error'],
      properties: { jsonrpc: { const: '2.0' }, id: rpcId, error: ref('A2AJsonRpcError') },
    },
    A2AJsonRpcResponse: {
      oneOf: [
        {
          type: 'object',
          required: ['jsonrpc', 'id', 'result'],
          properties: {
            jsonrpc: { const: '2.0' },
            id: rpcId,
            result: {
              description:
                "The method's result: a SendMessage response, a Task, a task list, a push config or their list, {} for a deletion, an agent card.",
              anyOf: [
                ref('A2ASendMessageResponse'),
                ref('A2ATask'),
                ref('A2AListTasksResponse'),
                ref('A2ATaskPushNotificationConfig'),
                ref('A2AListTaskPushNotificationConfigsResponse'),
                ref('A2AAgentCard'),
                { type: 'object', maxProperties: 0 },
              ],
            },
          },
        },
        ref('A2AJsonRpcErrorResponse'),
      ],
    },
    A2AJsonRpcStreamResponse: {
      description:
        'One frame of a JSON-RPC stream: a StreamResponse result, or the error that ended the stream.',
      oneOf: [
        {
          type: 'object',
          required: ['jsonrpc', 'id', 'result'],
          properties: { jsonrpc: { const: '2.0' }, id: rpcId, result: ref('A2AStreamResponse') },
        },
        ref('A2AJsonRpcErrorResponse'),
      ],
    },
  };
}

/** Every route A2AServer serves, with the paths it was given, described for the transport's document. */
export function a2aOpenApi(context: OpenApiContext, options: A2AOpenApiPaths): OpenApiContribution {
  return {
    paths: {
      [AGENT_CARD_PATH]: { get: cardOperation(context, options.cardMaxAgeSeconds) },
      [options.jsonRpcPath]: { post: jsonRpcOperation(context) },
      ...restPaths(context, options.restPath),
    },
    schemas: schemas(context),
  };
}
