/**
 * Decoding of the task API's payloads (get_task, list_tasks, subscribe_task), once for every wire.
 * Numbers may arrive as JSON numbers or as the decimal strings a query string carries.
 */
import { TASK_STATES, ValidationError, type TaskState } from '@agent/core';
import { isRecord } from '@agent/core/internal';

export interface TaskRef {
  taskId: string;
}

export interface GetTaskQuery extends TaskRef {
  /** Keep at most this many messages, the newest. Absent: all. */
  historyLength?: number;
}

export interface SubscribeQuery extends TaskRef {
  after: number;
}

export interface ListQuery {
  sessionId?: string;
  state?: TaskState;
  pageSize?: number;
  pageToken?: string;
}

export const MAX_PAGE_SIZE = 100;

const GET_FIELDS = ['task_id', 'id', 'history_length'];
const SUBSCRIBE_FIELDS = ['task_id', 'id', 'after'];
const LIST_FIELDS = ['session_id', 'state', 'page_size', 'page_token'];

interface FieldError {
  pointer: string;
  message: string;
}

function fail(what: string, errors: FieldError[]): never {
  throw new ValidationError(`Invalid ${what}: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`, {
    data: { errors: errors.map((e) => ({ ...e })) },
  });
}

function objectOf(body: unknown, what: string, allowed: string[], strict: boolean): Record<string, unknown> {
  const value = body === undefined || body === null ? {} : body;
  if (!isRecord(value)) fail(what, [{ pointer: '/', message: 'must be object' }]);
  if (strict) {
    const unknown = Object.keys(value).filter((key) => !allowed.includes(key));
    if (unknown.length > 0)
      fail(
        what,
        unknown.map((key) => ({ pointer: `/${key}`, message: 'is not allowed' })),
      );
  }
  return value;
}

function taskIdOf(body: Record<string, unknown>, what: string): string {
  const id = body.task_id ?? body.id;
  if (typeof id !== 'string' || id === '') fail(what, [{ pointer: '/task_id', message: 'is required' }]);
  return id;
}

/** An integer in [min, max] given as a number or a decimal string; `undefined` when absent. */
function integerOf(
  body: Record<string, unknown>,
  field: string,
  what: string,
  min: number,
  max: number,
): number | undefined {
  const raw = body[field];
  if (raw === undefined || raw === null || raw === '') return undefined;
  const value = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(what, [{ pointer: `/${field}`, message: `must be an integer from ${min} to ${max}` }]);
  }
  return value;
}

function stringOf(body: Record<string, unknown>, field: string, what: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') fail(what, [{ pointer: `/${field}`, message: 'must be string' }]);
  return value;
}

export function parseGetTask(body: unknown, strict: boolean): GetTaskQuery {
  const what = 'get_task request';
  const value = objectOf(body, what, GET_FIELDS, strict);
  const query: GetTaskQuery = { taskId: taskIdOf(value, what) };
  const historyLength = integerOf(value, 'history_length', what, 0, Number.MAX_SAFE_INTEGER);
  if (historyLength !== undefined) query.historyLength = historyLength;
  return query;
}

export function parseSubscribe(body: unknown, strict: boolean): SubscribeQuery {
  const what = 'subscribe_task request';
  const value = objectOf(body, what, SUBSCRIBE_FIELDS, strict);
  return {
    taskId: taskIdOf(value, what),
    after: integerOf(value, 'after', what, 0, Number.MAX_SAFE_INTEGER) ?? 0,
  };
}

export function parseList(body: unknown, strict: boolean): ListQuery {
  const what = 'list_tasks request';
  const value = objectOf(body, what, LIST_FIELDS, strict);
  const query: ListQuery = {};
  const sessionId = stringOf(value, 'session_id', what);
  if (sessionId !== undefined) query.sessionId = sessionId;
  const state = stringOf(value, 'state', what);
  if (state !== undefined) {
    if (!(TASK_STATES as readonly string[]).includes(state)) {
      fail(what, [{ pointer: '/state', message: `must be one of ${TASK_STATES.join(', ')}` }]);
    }
    query.state = state as TaskState;
  }
  const pageSize = integerOf(value, 'page_size', what, 1, MAX_PAGE_SIZE);
  if (pageSize !== undefined) query.pageSize = pageSize;
  const pageToken = stringOf(value, 'page_token', what);
  if (pageToken !== undefined) query.pageToken = pageToken;
  return query;
}

/** The task with at most `historyLength` of its messages, the newest. */
export function withHistory<T extends { messages: unknown[] }>(
  task: T,
  historyLength: number | undefined,
): T {
  if (historyLength === undefined || task.messages.length <= historyLength) return task;
  return { ...task, messages: historyLength === 0 ? [] : task.messages.slice(-historyLength) };
}
