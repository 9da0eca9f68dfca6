/**
 * Native client payloads -> A2A 1.0 requests, and A2A answers -> native results. Pure functions:
 * the transport decides where the requests go.
 */
import {
  ValidationError,
  ValueError,
  type GetTaskRequest,
  type ListTasksRequest,
  type Task,
  type TaskList,
} from '@agent/core';
import { isRecord, parseCancelRequest } from '@agent/core/internal';
import { fromA2AMessage, fromA2ATask, toA2AMessage, toA2AState } from '../protojson.js';

/** The session a native task belongs to (its A2A `contextId`), when it names one. */
export function sessionIdOf(task: Task): string | undefined {
  const runContext = task.metadata.run_context;
  if (isRecord(runContext) && typeof runContext.session_id === 'string' && runContext.session_id !== '') {
    return runContext.session_id;
  }
  const sessionId = task.metadata.session_id;
  return typeof sessionId === 'string' && sessionId !== '' ? sessionId : undefined;
}

/**
 * SendMessage's request for a native task: its last message; `taskId` only for a task the server
 * minted (`continues`), since A2A servers refuse client-chosen ids for new tasks.
 */
export function sendMessageRequest(task: Task, continues: boolean): Record<string, unknown> {
  const message = task.messages[task.messages.length - 1];
  if (!message) {
    throw new ValidationError('An A2A task starts from a message: the task has none', {
      data: { errors: [{ pointer: '/messages', message: 'must not be empty' }] },
    });
  }
  const ids: { taskId?: string; contextId?: string } = {};
  if (continues) ids.taskId = task.id;
  const sessionId = sessionIdOf(task);
  if (sessionId !== undefined) ids.contextId = sessionId;
  return { message: toA2AMessage(message, ids) };
}

/**
 * A SendMessageResponse as a native Task: `{task}` decoded as it is; `{message}` (an agent that
 * answers without a task) becomes the sent task, completed, with the reply appended.
 */
export function sendMessageResult(result: unknown, sent: Task): { task: Task; remoteId?: string } {
  if (isRecord(result) && result.task !== undefined) {
    const task = fromA2ATask(result.task);
    return { task, remoteId: task.id };
  }
  if (isRecord(result) && result.message !== undefined) {
    const reply = fromA2AMessage(result.message, '/message');
    const metadata = { ...sent.metadata };
    if (reply.contextId !== undefined && sessionIdOf(sent) === undefined)
      metadata.session_id = reply.contextId;
    return { task: { ...sent, state: 'completed', messages: [...sent.messages, reply.message], metadata } };
  }
  throw new ValidationError('The A2A agent answered SendMessage with neither a task nor a message', {
    data: { errors: [{ pointer: '/', message: 'must have task or message' }] },
  });
}

export function cancelTaskRequest(data: unknown): Record<string, unknown> {
  const { taskId, reason } = parseCancelRequest(data);
  return reason === undefined ? { id: taskId } : { id: taskId, metadata: { reason } };
}

export function getTaskRequest(data: unknown): Record<string, unknown> {
  const request = (isRecord(data) ? data : {}) as Partial<GetTaskRequest>;
  if (typeof request.task_id !== 'string' || request.task_id === '')
    throw new ValueError('get_task needs a task_id');
  return request.history_length === undefined
    ? { id: request.task_id }
    : { id: request.task_id, historyLength: request.history_length };
}

export function listTasksRequest(data: unknown): Record<string, unknown> {
  const request = (isRecord(data) ? data : {}) as ListTasksRequest;
  const out: Record<string, unknown> = {};
  if (request.session_id !== undefined) out.contextId = request.session_id;
  if (request.state !== undefined) out.status = toA2AState(request.state);
  if (request.page_size !== undefined) out.pageSize = request.page_size;
  if (request.page_token !== undefined && request.page_token !== '') out.pageToken = request.page_token;
  return out;
}

export function taskListResult(result: unknown): TaskList {
  const record = isRecord(result) ? result : {};
  const tasks = Array.isArray(record.tasks) ? record.tasks.map((task) => fromA2ATask(task)) : [];
  const token = record.nextPageToken ?? record.next_page_token;
  return { tasks, next_page_token: typeof token === 'string' ? token : '' };
}
