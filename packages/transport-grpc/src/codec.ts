/**
 * The only converter between the snake_case JSON wire types of `@agent/core` and the proto messages
 * of `agent.v1` (`proto/agent/v1/agent.proto`). Encoders take values that already passed validation; decoders check
 * what the proto cannot (enum values, oneof cases) and throw ValidationError with a JSON pointer.
 */
import {
  InvalidRequestError,
  TASK_STATES,
  ValidationError,
  type AgentCard,
  type Artifact,
  type GetTaskRequest,
  type JsonObject,
  type ListTasksRequest,
  type Message,
  type MessageRole,
  type Part,
  type SecuritySchemeDict,
  type SubscribeTaskRequest,
  type Task,
  type TaskEvent,
  type TaskList,
  type TaskState,
} from '@agent/core';
import { parseCancelRequest } from '@agent/core/internal';
import { readMessage } from './codec-reader.js';
import * as pb from './gen/agent/v1/agent.js';
import { toJsonObject, toJsonValue } from './json-value.js';

/**
 * JSON depths (1 = the Task object) of what a Task carries, counted as the JSON wires count them:
 * `metadata` is 2; a message's or artifact's part content 6; an artifact's metadata 4.
 */
const TASK_METADATA_DEPTH = 2;
const PART_CONTENT_DEPTH = 6;
const ARTIFACT_METADATA_DEPTH = 4;

const STATE_TO_PROTO: Record<TaskState, pb.TaskState> = {
  submitted: pb.TaskState.TASK_STATE_SUBMITTED,
  working: pb.TaskState.TASK_STATE_WORKING,
  completed: pb.TaskState.TASK_STATE_COMPLETED,
  canceled: pb.TaskState.TASK_STATE_CANCELED,
  failed: pb.TaskState.TASK_STATE_FAILED,
  'input-required': pb.TaskState.TASK_STATE_INPUT_REQUIRED,
  rejected: pb.TaskState.TASK_STATE_REJECTED,
  'auth-required': pb.TaskState.TASK_STATE_AUTH_REQUIRED,
};
const STATE_FROM_PROTO = invert(STATE_TO_PROTO);

const ROLE_TO_PROTO: Record<MessageRole, pb.Role> = {
  user: pb.Role.ROLE_USER,
  agent: pb.Role.ROLE_AGENT,
  system: pb.Role.ROLE_SYSTEM,
};
const ROLE_FROM_PROTO = invert(ROLE_TO_PROTO);

function invert<K extends string>(table: Record<K, number>): Map<number, K> {
  return new Map((Object.entries(table) as [K, number][]).map(([key, value]) => [value, key]));
}

function invalid(pointer: string, message: string): ValidationError {
  return new ValidationError(`Invalid message: ${pointer} ${message}`, {
    data: { errors: [{ pointer, message }] },
  });
}

function decodeEnum<T>(table: Map<number, T>, value: number, pointer: string): T {
  const decoded = table.get(value);
  if (decoded === undefined) throw invalid(pointer, `has unknown enum value ${value}`);
  return decoded;
}

function encodeEnum<K extends string>(table: Record<K, number>, value: K, pointer: string): number {
  const encoded = Object.prototype.hasOwnProperty.call(table, value) ? table[value] : undefined;
  if (encoded === undefined) throw invalid(pointer, `must be one of ${Object.keys(table).join(', ')}`);
  return encoded;
}

/** Keys of `source` that are not in `known`, JSON-normalized; undefined when there are none. */
function extraFields(source: object, known: readonly string[]): JsonObject | undefined {
  const rest: JsonObject = {};
  let any = false;
  for (const [key, value] of Object.entries(source)) {
    if (known.includes(key) || value === undefined) continue;
    rest[key] = value;
    any = true;
  }
  return any ? toJsonObject(rest) : undefined;
}

// ---- Part, Message, Artifact, Task ----

export function encodePart(part: Part): pb.Part {
  const content = toJsonValue(part.content, '/content', PART_CONTENT_DEPTH);
  return content === undefined ? { type: part.type } : { type: part.type, content };
}

export function decodePart(part: pb.Part): Part {
  return part.content === undefined
    ? { type: part.type }
    : { type: part.type, content: part.content as unknown };
}

export function encodeMessage(message: Message): pb.Message {
  return {
    id: message.id,
    role: encodeEnum(ROLE_TO_PROTO, message.role, '/role'),
    parts: message.parts.map(encodePart),
    timestamp: message.timestamp,
  };
}

export function decodeMessage(message: pb.Message, pointer = ''): Message {
  return {
    id: message.id,
    role: decodeEnum(ROLE_FROM_PROTO, message.role, `${pointer}/role`),
    parts: message.parts.map(decodePart),
    timestamp: message.timestamp,
  };
}

const ARTIFACT_OPTIONALS = ['kind', 'name', 'uri', 'media_type', 'action_id'] as const;
const ARTIFACT_PROTO_NAMES = {
  kind: 'kind',
  name: 'name',
  uri: 'uri',
  media_type: 'mediaType',
  action_id: 'actionId',
} as const;

export function encodeArtifact(artifact: Artifact): pb.Artifact {
  const encoded: pb.Artifact = {
    id: artifact.id,
    parts: artifact.parts.map(encodePart),
    metadata: toJsonObject(artifact.metadata, '/metadata', ARTIFACT_METADATA_DEPTH),
    createdAt: artifact.created_at,
  };
  for (const key of ARTIFACT_OPTIONALS) {
    const value = artifact[key];
    if (typeof value === 'string') encoded[ARTIFACT_PROTO_NAMES[key]] = value;
  }
  return encoded;
}

export function decodeArtifact(artifact: pb.Artifact): Artifact {
  const decoded: Artifact = {
    id: artifact.id,
    parts: artifact.parts.map(decodePart),
    metadata: (artifact.metadata ?? {}) as JsonObject,
    created_at: artifact.createdAt,
  };
  for (const key of ARTIFACT_OPTIONALS) {
    const value = artifact[ARTIFACT_PROTO_NAMES[key]];
    if (value !== undefined) decoded[key] = value;
  }
  return decoded;
}

export function encodeTask(task: Task): pb.Task {
  return {
    id: task.id,
    state: encodeEnum(STATE_TO_PROTO, task.state, '/state'),
    messages: task.messages.map(encodeMessage),
    artifacts: task.artifacts.map(encodeArtifact),
    metadata: toJsonObject(task.metadata, '/metadata', TASK_METADATA_DEPTH),
    createdAt: task.created_at,
  };
}

/**
 * `submitted`: a Task whose `state` is unset (`TASK_STATE_UNSPECIFIED`, the proto3 default) is a new
 * submission, as a JSON Task without `state` is. Only a submitted task gets this default: a Task a
 * server answers with always names its state.
 */
export function decodeTask(task: pb.Task, pointer = '', submitted = false): Task {
  return {
    id: task.id,
    state:
      submitted && task.state === pb.TaskState.TASK_STATE_UNSPECIFIED
        ? 'submitted'
        : decodeEnum(STATE_FROM_PROTO, task.state, `${pointer}/state`),
    messages: task.messages.map((message, index) => decodeMessage(message, `${pointer}/messages/${index}`)),
    artifacts: task.artifacts.map(decodeArtifact),
    metadata: (task.metadata ?? {}) as JsonObject,
    created_at: task.createdAt,
  };
}

// ---- AgentCard ----

const CARD_TYPED = ['name', 'description', 'url', 'securitySchemes'] as const;

export function encodeAgentCard(card: AgentCard): pb.AgentCard {
  const encoded: pb.AgentCard = { name: card.name, description: card.description, url: card.url };
  if (card.securitySchemes !== undefined) {
    const entries: Record<string, pb.SecurityScheme> = {};
    for (const [key, scheme] of Object.entries(card.securitySchemes)) {
      entries[key] = {
        type: scheme.type,
        ...(scheme.scheme === null || scheme.scheme === undefined ? {} : { scheme: scheme.scheme }),
        description: scheme.description ?? '',
        metadata: toJsonObject(scheme.metadata, `/securitySchemes/${key}/metadata`),
      };
    }
    encoded.securitySchemes = { entries };
  }
  const extra = extraFields(card, CARD_TYPED);
  if (extra) encoded.extra = extra;
  return encoded;
}

export function decodeAgentCard(card: pb.AgentCard): AgentCard {
  const decoded: AgentCard = {
    ...(card.extra ?? {}),
    name: card.name,
    description: card.description,
    url: card.url,
  };
  if (card.securitySchemes) {
    const schemes: Record<string, SecuritySchemeDict> = {};
    for (const [key, scheme] of Object.entries(card.securitySchemes.entries)) {
      schemes[key] = {
        type: scheme.type,
        scheme: scheme.scheme ?? null,
        description: scheme.description,
        metadata: (scheme.metadata ?? {}) as JsonObject,
      };
    }
    decoded.securitySchemes = schemes;
  }
  return decoded;
}

// ---- TaskEvent ----

const EVENT_COMMON = ['type', 'task_id', 'timestamp', 'sequence'] as const;
const STATUS_TYPED = [...EVENT_COMMON, 'state', 'final', 'message', 'task'];
const ARTIFACT_TYPED = [...EVENT_COMMON, 'artifact', 'append', 'last_chunk'];
const LLM_TYPED = [...EVENT_COMMON, 'delta'];

export function encodeTaskEvent(event: TaskEvent): pb.TaskEvent {
  const encoded: pb.TaskEvent = {
    type: event.type,
    taskId: event.task_id,
    timestamp: event.timestamp,
    sequence: typeof event.sequence === 'number' ? event.sequence : 0,
  };
  let extra: JsonObject | undefined;
  switch (event.type) {
    case 'task.status': {
      const status: pb.TaskStatusUpdate = {
        state: encodeEnum(STATE_TO_PROTO, event.state, '/state'),
        final: event.final === true,
      };
      if (event.message) status.message = encodeMessage(event.message);
      if (event.task) status.task = encodeTask(event.task);
      encoded.event = { $case: 'status', value: status };
      extra = extraFields(event, STATUS_TYPED);
      break;
    }
    case 'task.artifact':
      encoded.event = {
        $case: 'artifact',
        value: {
          artifact: encodeArtifact(event.artifact),
          append: event.append === true,
          lastChunk: event.last_chunk === true,
        },
      };
      extra = extraFields(event, ARTIFACT_TYPED);
      break;
    case 'llm.stream':
      encoded.event = { $case: 'llmStream', value: { delta: event.delta } };
      extra = extraFields(event, LLM_TYPED);
      break;
    default:
      encoded.event = { $case: 'runtime', value: extraFields(event, EVENT_COMMON) ?? {} };
  }
  if (extra) encoded.extra = extra;
  return encoded;
}

const CASE_FOR_TYPE: Record<string, string> = {
  'task.status': 'status',
  'task.artifact': 'artifact',
  'llm.stream': 'llmStream',
};

export function decodeTaskEvent(event: pb.TaskEvent): TaskEvent {
  const body = event.event;
  const expected = CASE_FOR_TYPE[event.type] ?? 'runtime';
  if (body === undefined || body.$case !== expected) {
    throw invalid('/event', `must be "${expected}" for an event of type "${event.type}"`);
  }
  const common = {
    task_id: event.taskId,
    timestamp: event.timestamp,
    ...(event.sequence > 0 ? { sequence: event.sequence } : {}),
  };
  const extra = (event.extra ?? {}) as JsonObject;
  switch (body.$case) {
    case 'status': {
      const status = body.value;
      return {
        ...extra,
        type: 'task.status',
        ...common,
        state: decodeEnum(STATE_FROM_PROTO, status.state, '/state'),
        final: status.final,
        ...(status.message ? { message: decodeMessage(status.message, '/message') } : {}),
        ...(status.task ? { task: decodeTask(status.task, '/task') } : {}),
      };
    }
    case 'artifact': {
      const update = body.value;
      if (!update.artifact) throw invalid('/artifact', 'is required');
      return {
        ...extra,
        type: 'task.artifact',
        ...common,
        artifact: decodeArtifact(update.artifact),
        append: update.append,
        last_chunk: update.lastChunk,
      };
    }
    case 'llmStream':
      return { ...extra, type: 'llm.stream', ...common, delta: body.value.delta };
    case 'runtime':
      return { ...((body.value ?? {}) as JsonObject), type: event.type, ...common } as TaskEvent;
  }
}

// ---- Invoke requests and responses ----

/** A unary operation in the names of core's CLIENT_OPERATIONS. */
export type InvokeOperation = 'send_task' | 'cancel_task' | 'get_card' | 'get_task' | 'list_tasks';

export type DecodedInvokeRequest =
  | { operation: 'send_task'; data: Task }
  | { operation: 'cancel_task'; data: { task_id: string; reason?: string } }
  | { operation: 'get_card'; data: Record<string, never> }
  | { operation: 'get_task'; data: GetTaskRequest }
  | { operation: 'list_tasks'; data: ListTasksRequest };

export type InvokeResult = Task | AgentCard | TaskList;

const UINT32_MAX = 0xffff_ffff;

/**
 * A task API payload's field the proto cannot carry (a negative or fractional number, a state that is
 * no TaskState, a non-string): refused on the client in the words the server would use. Everything
 * the proto can carry travels as is, and the server's pipeline judges it.
 */
function unencodable(what: string, pointer: string, message: string): ValidationError {
  return new ValidationError(`Invalid ${what}: ${pointer} ${message}`, {
    data: { errors: [{ pointer, message }] },
  });
}

function payloadObject(data: unknown, what: string): Record<string, unknown> {
  if (data === undefined || data === null) return {};
  if (typeof data !== 'object' || Array.isArray(data)) throw unencodable(what, '/', 'must be object');
  return data as Record<string, unknown>;
}

/** `task_id` (or `id`); a missing one travels as `""`, which the server refuses as required. */
function taskIdField(body: Record<string, unknown>): string {
  const id = body.task_id ?? body.id;
  return typeof id === 'string' ? id : '';
}

/** A uint32 given as a number or a decimal string (as a query string would carry it); absent → undefined. */
function uint32Field(body: Record<string, unknown>, field: string, what: string): number | undefined {
  const raw = body[field];
  if (raw === undefined || raw === null || raw === '') return undefined;
  const value = typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > UINT32_MAX) {
    throw unencodable(what, `/${field}`, `must be an integer from 0 to ${UINT32_MAX}`);
  }
  return value;
}

function stringField(body: Record<string, unknown>, field: string, what: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw unencodable(what, `/${field}`, 'must be string');
  return value;
}

export function encodeGetTask(data: unknown): pb.GetTask {
  const what = 'get_task request';
  const body = payloadObject(data, what);
  const historyLength = uint32Field(body, 'history_length', what);
  return { taskId: taskIdField(body), ...(historyLength === undefined ? {} : { historyLength }) };
}

export function decodeGetTask(message: pb.GetTask): GetTaskRequest {
  const { taskId, historyLength } = message;
  return historyLength === undefined
    ? { task_id: taskId }
    : { task_id: taskId, history_length: historyLength };
}

export function encodeListTasks(data: unknown): pb.ListTasks {
  const what = 'list_tasks request';
  const body = payloadObject(data, what);
  const encoded: pb.ListTasks = {};
  const sessionId = stringField(body, 'session_id', what);
  if (sessionId !== undefined) encoded.sessionId = sessionId;
  const state = stringField(body, 'state', what);
  if (state !== undefined && state !== '') {
    if (!Object.prototype.hasOwnProperty.call(STATE_TO_PROTO, state)) {
      throw unencodable(what, '/state', `must be one of ${TASK_STATES.join(', ')}`);
    }
    encoded.state = STATE_TO_PROTO[state as TaskState];
  }
  const pageSize = uint32Field(body, 'page_size', what);
  if (pageSize !== undefined) encoded.pageSize = pageSize;
  const pageToken = stringField(body, 'page_token', what);
  if (pageToken !== undefined) encoded.pageToken = pageToken;
  return encoded;
}

export function decodeListTasks(message: pb.ListTasks, pointer = ''): ListTasksRequest {
  const decoded: ListTasksRequest = {};
  if (message.sessionId !== undefined) decoded.session_id = message.sessionId;
  if (message.state !== undefined) {
    decoded.state = decodeEnum(STATE_FROM_PROTO, message.state, `${pointer}/state`);
  }
  if (message.pageSize !== undefined) decoded.page_size = message.pageSize;
  if (message.pageToken !== undefined) decoded.page_token = message.pageToken;
  return decoded;
}

/** `data` is the operation's JSON payload: a Task (or `{task}`), a cancel body, a task query, nothing for the card. */
export function encodeInvokeRequest(operation: InvokeOperation, data: unknown): pb.InvokeRequest {
  switch (operation) {
    case 'send_task':
      return { operation: { $case: 'sendTask', value: { task: encodeTask(data as Task) } } };
    case 'cancel_task': {
      const { taskId, reason } = parseCancelRequest(data);
      return {
        operation: { $case: 'cancelTask', value: reason === undefined ? { taskId } : { taskId, reason } },
      };
    }
    case 'get_card':
      return { operation: { $case: 'getAgentCard', value: {} } };
    case 'get_task':
      return { operation: { $case: 'getTask', value: encodeGetTask(data) } };
    case 'list_tasks':
      return { operation: { $case: 'listTasks', value: encodeListTasks(data) } };
  }
}

/**
 * The request bytes of an `Invoke` or `Stream` call, decoded (after the authenticator ran) by the
 * bounded reader: core's JSON limits apply to the Task as they do on the JSON wires, and anything
 * malformed is an InvalidRequestError naming what is wrong.
 */
export function decodeInvokeRequestBytes(body: Uint8Array): DecodedInvokeRequest {
  return decodeInvokeRequest(readMessage<pb.InvokeRequest>('InvokeRequest', body));
}

export function decodeInvokeRequest(request: pb.InvokeRequest): DecodedInvokeRequest {
  const operation = request.operation;
  switch (operation?.$case) {
    case 'sendTask':
      if (!operation.value.task) throw invalid('/send_task/task', 'is required');
      return { operation: 'send_task', data: decodeTask(operation.value.task, '/send_task/task', true) };
    case 'cancelTask': {
      const { taskId, reason } = operation.value;
      return {
        operation: 'cancel_task',
        data: reason === undefined ? { task_id: taskId } : { task_id: taskId, reason },
      };
    }
    case 'getAgentCard':
      return { operation: 'get_card', data: {} };
    case 'getTask':
      return { operation: 'get_task', data: decodeGetTask(operation.value) };
    case 'listTasks':
      return { operation: 'list_tasks', data: decodeListTasks(operation.value, '/list_tasks') };
    default:
      throw new InvalidRequestError('InvokeRequest names no operation');
  }
}

export function encodeTaskList(list: TaskList): pb.TaskList {
  return { tasks: list.tasks.map(encodeTask), nextPageToken: list.next_page_token };
}

export function decodeTaskList(list: pb.TaskList): TaskList {
  return {
    tasks: list.tasks.map((task, index) => decodeTask(task, `/tasks/${index}`)),
    next_page_token: list.nextPageToken,
  };
}

export function encodeInvokeResponse(operation: InvokeOperation, result: InvokeResult): pb.InvokeResponse {
  switch (operation) {
    case 'get_card':
      return { result: { $case: 'agentCard', value: encodeAgentCard(result as AgentCard) } };
    case 'list_tasks':
      return { result: { $case: 'taskList', value: encodeTaskList(result as TaskList) } };
    default:
      return { result: { $case: 'task', value: encodeTask(result as Task) } };
  }
}

export function decodeInvokeResponse(response: pb.InvokeResponse): InvokeResult {
  switch (response.result?.$case) {
    case 'task':
      return decodeTask(response.result.value);
    case 'agentCard':
      return decodeAgentCard(response.result.value);
    case 'taskList':
      return decodeTaskList(response.result.value);
    default:
      throw invalid('/result', 'is required');
  }
}

// ---- Subscribe ----

export function encodeSubscribeRequest(data: unknown): pb.SubscribeRequest {
  const what = 'subscribe_task request';
  const body = payloadObject(data, what);
  return { taskId: taskIdField(body), after: uint32Field(body, 'after', what) ?? 0 };
}

export function decodeSubscribeRequest(request: pb.SubscribeRequest): SubscribeTaskRequest {
  return { task_id: request.taskId, after: request.after };
}

/** The request bytes of a `Subscribe` call, decoded (after the authenticator ran). */
export function decodeSubscribeRequestBytes(body: Uint8Array): SubscribeTaskRequest {
  return decodeSubscribeRequest(readMessage<pb.SubscribeRequest>('SubscribeRequest', body));
}
