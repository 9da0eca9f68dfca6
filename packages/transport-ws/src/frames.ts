/**
 * The WebSocket wire (DESIGN.md §3): JSON text frames on two connections. `/ws` carries task
 * traffic, `/ws/control` carries cancellation so a cancel never queues behind the stream it stops.
 */
import {
  AgentError,
  InvalidRequestError,
  isRecord,
  ParseError,
  type AgentCard,
  type ErrorBody,
  type Task,
  type TaskEvent,
} from '@agent/core';

export const DATA_PATH = '/ws';
export const CONTROL_PATH = '/ws/control';

export type ConnectionKind = 'data' | 'control';

/** Client → server on `/ws`: run a task; `stream` asks for `event` frames before the `result`. */
export interface TaskSendFrame {
  op: 'task.send';
  id: string;
  task: unknown;
  stream?: boolean;
}

/** Client → server on `/ws` or `/ws/control`: read the agent card (the `get_card` operation). */
export interface AgentCardFrame {
  op: 'agent.card';
  id: string;
}

/** Client → server on `/ws/control`: cancel a running task. */
export interface TaskCancelFrame {
  op: 'task.cancel';
  id: string;
  task_id: unknown;
  reason?: unknown;
}

/**
 * Client → server on `/ws`: stop answering request `id` (the caller went away). Aborts that call's
 * `CallContext.signal`; it is not a task cancel and gets no answer.
 */
export interface CallAbortFrame {
  op: 'call.abort';
  id: string;
}

export type RequestFrame = TaskSendFrame | AgentCardFrame | TaskCancelFrame | CallAbortFrame;

export interface EventFrame {
  op: 'event';
  id: string;
  event: TaskEvent;
}

export interface ResultFrame {
  op: 'result';
  id: string;
  task?: Task;
  card?: AgentCard;
}

/** `id` is null when the request frame was too broken to carry one. */
export interface ErrorFrame {
  op: 'error';
  id: string | null;
  error: ErrorBody;
}

export type ResponseFrame = EventFrame | ResultFrame | ErrorFrame;

const REQUEST_OPS = new Set<string>(['task.send', 'agent.card', 'task.cancel', 'call.abort']);

/** The request id of a frame, when it has a usable one (so an error can still be matched). */
export function frameId(value: unknown): string | null {
  return isRecord(value) && typeof value.id === 'string' && value.id !== '' ? value.id : null;
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
  return value as unknown as RequestFrame;
}

const MAX_ECHOED_CHARS = 64;

/** A peer's value for an error message, cut short: a reply must not echo a huge op back. */
function quoted(value: unknown): string {
  const text = JSON.stringify(value ?? null) ?? 'null';
  return text.length > MAX_ECHOED_CHARS ? `${text.slice(0, MAX_ECHOED_CHARS)}…` : text;
}

/** Decodes frame text; throws ParseError for malformed JSON. */
export function decodeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ParseError('Malformed JSON frame');
  }
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

export function errorFrame(id: string | null, error: unknown): ErrorFrame {
  return { op: 'error', id, error: AgentError.from(error).toJSON() };
}
