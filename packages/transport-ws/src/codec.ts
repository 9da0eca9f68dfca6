/**
 * The WebSocket wire: JSON text frames on two connections. The data connection carries task
 * traffic; the control connection carries cancellation, so a cancel never queues behind the stream
 * it stops. Where each connection is served is decided in `socket-url.ts`.
 */
import {
  InvalidRequestError,
  ParseError,
  type AgentCard,
  type AgentError,
  type ErrorBody,
  type Task,
  type TaskEvent,
  type TaskList,
} from '@agent/core';
import { isRecord, jsonLimitError } from '@agent/core/internal';
import type { HeaderBag, OperationName } from '@agent/server';
import type { RawData } from 'ws';

export type ConnectionKind = 'data' | 'control';

/**
 * Every call frame may carry the caller's W3C trace context: one socket serves calls of many
 * traces, so the handshake's headers cannot. The server hands them to that call's handler as its
 * `traceparent` and `tracestate` headers.
 */
export interface TraceFields {
  traceparent?: string;
  tracestate?: string;
}

/** Client → server on the data connection: run a task; `stream` asks for `event` frames before the `result`. */
export interface TaskSendFrame extends TraceFields {
  op: 'task.send';
  id: string;
  task: unknown;
  stream?: boolean;
}

/** Client → server on either connection: read the agent card (the `get_card` operation). */
export interface AgentCardFrame extends TraceFields {
  op: 'agent.card';
  id: string;
}

/** Client → server on the control connection: cancel a running task. */
export interface TaskCancelFrame extends TraceFields {
  op: 'task.cancel';
  id: string;
  task_id: unknown;
  reason?: unknown;
}

/**
 * Client → server on either connection: stop answering request `id` (the caller went away or fell
 * behind). Aborts that call's `CallContext.signal`; it is not a task cancel and gets no answer.
 */
export interface CallAbortFrame {
  op: 'call.abort';
  id: string;
}

/** Client → server on the data connection: read one of the caller's tasks (the `get_task` operation). */
export interface TaskGetFrame extends TraceFields {
  op: 'task.get';
  id: string;
  task_id: unknown;
  history_length?: unknown;
}

/** Client → server on the data connection: one page of the caller's tasks (the `list_tasks` operation). */
export interface TaskListFrame extends TraceFields {
  op: 'task.list';
  id: string;
  session_id?: unknown;
  state?: unknown;
  page_size?: unknown;
  page_token?: unknown;
}

/**
 * Client → server on the data connection: follow one of the caller's tasks (the `subscribe_task`
 * operation), answered like a `task.send` with `stream: true`. Ending it is not a task cancel.
 */
export interface TaskSubscribeFrame extends TraceFields {
  op: 'task.subscribe';
  id: string;
  task_id: unknown;
  after?: unknown;
}

export type RequestFrame =
  | TaskSendFrame
  | AgentCardFrame
  | TaskCancelFrame
  | TaskGetFrame
  | TaskListFrame
  | TaskSubscribeFrame
  | CallAbortFrame;

/** A request frame that asks for an answer. */
export type CallFrame = Exclude<RequestFrame, CallAbortFrame>;

export interface EventFrame {
  op: 'event';
  id: string;
  event: TaskEvent;
}

/** The answer of a call: `task`, `card` (of `agent.card`), or `tasks` and `next_page_token` (of `task.list`). */
export interface ResultFrame {
  op: 'result';
  id: string;
  task?: Task;
  card?: AgentCard;
  tasks?: Task[];
  next_page_token?: string;
}

/** `id` is null when the request frame was too broken to carry one. */
export interface ErrorFrame {
  op: 'error';
  id: string | null;
  /** `{code, message, data?}`: `data` carries details such as `error_id` of a masked failure. */
  error: ErrorBody;
}

export type ResponseFrame = EventFrame | ResultFrame | ErrorFrame;

const REQUEST_OPS = new Set<string>([
  'task.send',
  'agent.card',
  'task.cancel',
  'task.get',
  'task.list',
  'task.subscribe',
  'call.abort',
]);

/** Which ops each connection serves. */
export const OPS_BY_KIND: Record<ConnectionKind, ReadonlySet<string>> = {
  data: new Set(['task.send', 'agent.card', 'task.get', 'task.list', 'task.subscribe', 'call.abort']),
  control: new Set(['task.cancel', 'agent.card', 'call.abort']),
};

/** The pipeline operation a call frame asks for. */
export function operationOf(frame: CallFrame): OperationName {
  switch (frame.op) {
    case 'task.send':
      return frame.stream === true ? 'stream_task' : 'send_task';
    case 'task.cancel':
      return 'cancel_task';
    case 'task.get':
      return 'get_task';
    case 'task.list':
      return 'list_tasks';
    case 'task.subscribe':
      return 'subscribe_task';
    case 'agent.card':
      return 'get_card';
  }
}

/** The operation's payload: the task, or the request's fields without the frame's own `op` and `id`. */
export function payloadOf(frame: CallFrame): unknown {
  switch (frame.op) {
    case 'task.send':
      return frame.task;
    case 'task.cancel':
    case 'task.get':
    case 'task.list':
    case 'task.subscribe': {
      // The frame's `id` is the request id: it must not be read as the task id. The trace context
      // goes into the call's headers, not the request.
      const { op: _op, id: _id, traceparent: _parent, tracestate: _state, ...request } = frame;
      return request;
    }
    case 'agent.card':
      return undefined;
  }
}

/** The request id of a frame, when it has a usable one (so an error can still be matched). */
export function frameId(value: unknown): string | null {
  return isRecord(value) && typeof value.id === 'string' && value.id !== '' ? value.id : null;
}

/** Text of a received message; binary frames are refused. */
export function frameText(data: RawData, isBinary: boolean): string {
  if (isBinary) throw new InvalidRequestError('Binary frames are not supported; send JSON text frames');
  return Array.isArray(data)
    ? Buffer.concat(data).toString('utf8')
    : Buffer.from(data as ArrayBuffer).toString('utf8');
}

/**
 * Decodes frame text; throws ParseError for malformed JSON, and INVALID_REQUEST for a frame nested
 * deeper or with an array longer than the JSON limits (checked on the text, before parsing).
 */
export function decodeJson(text: string): unknown {
  const limit = jsonLimitError(text);
  if (limit) throw limit;
  try {
    return JSON.parse(text);
  } catch {
    throw new ParseError('Malformed JSON frame');
  }
}

/** Checks one decoded request frame; throws InvalidRequestError with a clear message. */
export function checkRequestFrame(value: unknown): RequestFrame {
  if (!isRecord(value)) throw new InvalidRequestError('A frame must be a JSON object');
  if (frameId(value) === null) throw new InvalidRequestError('A frame needs a non-empty string "id"');
  if (typeof value.op !== 'string' || !REQUEST_OPS.has(value.op)) {
    throw new InvalidRequestError(
      `Unknown op ${quoted(value.op)}; expected one of ${[...REQUEST_OPS].join(', ')}`,
    );
  }
  if (value.op === 'task.send' && value.stream !== undefined && typeof value.stream !== 'boolean') {
    throw new InvalidRequestError('"stream" must be a boolean');
  }
  // A malformed value is ignored as the W3C rules say; a value that is not text is a broken frame.
  for (const field of ['traceparent', 'tracestate'] as const) {
    if (value[field] !== undefined && typeof value[field] !== 'string')
      throw new InvalidRequestError(`"${field}" must be a string`);
  }
  return value as unknown as RequestFrame;
}

const MAX_ECHOED_CHARS = 64;

/** A peer's value for an error message, cut short: a reply must not echo a huge op back. */
function quoted(value: unknown): string {
  const text = JSON.stringify(value ?? null) ?? 'null';
  return text.length > MAX_ECHOED_CHARS ? `${text.slice(0, MAX_ECHOED_CHARS)}…` : text;
}

/** Parses one incoming response frame on the client; anything unexpected is a protocol error. */
export function parseResponseFrame(text: string): ResponseFrame {
  const value = decodeJson(text);
  if (!isRecord(value) || (value.op !== 'event' && value.op !== 'result' && value.op !== 'error')) {
    throw new InvalidRequestError('Unexpected frame from server');
  }
  if (value.op !== 'error' && frameId(value) === null)
    throw new InvalidRequestError('Server frame without an id');
  return value as unknown as ResponseFrame;
}

export function eventFrame(id: string, event: TaskEvent): EventFrame {
  return { op: 'event', id, event };
}

/** The `result` of a unary call or a finished stream: a Task, the card of `agent.card`, or a page of `task.list`. */
export function resultFrame(
  id: string,
  operation: OperationName,
  answer: Task | AgentCard | TaskList | undefined,
): ResultFrame {
  if (answer === undefined) return { op: 'result', id };
  switch (operation) {
    case 'get_card':
      return { op: 'result', id, card: answer as AgentCard };
    case 'list_tasks': {
      const { tasks, next_page_token } = answer as TaskList;
      return { op: 'result', id, tasks, next_page_token };
    }
    default:
      return { op: 'result', id, task: answer as Task };
  }
}

/** An error frame for an error the server's error policy has already passed. */
export function errorFrame(id: string | null, error: AgentError): ErrorFrame {
  return { op: 'error', id, error: error.toJSON() };
}

/**
 * The headers of one call on a socket: the handshake's, with the trace context of the frame in
 * place of any the handshake carried (that one belonged to whoever opened the socket).
 */
export function callHeaders(handshake: HeaderBag, frame: TraceFields): HeaderBag {
  const { traceparent, tracestate } = frame;
  if (traceparent === undefined && handshake.traceparent === undefined && handshake.tracestate === undefined)
    return handshake;
  const { traceparent: _parent, tracestate: _state, ...headers } = handshake;
  if (traceparent === undefined) return headers;
  return tracestate === undefined ? { ...headers, traceparent } : { ...headers, traceparent, tracestate };
}
