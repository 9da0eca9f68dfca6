/**
 * Server-side request handling shared by every transport: decode an operation's payload, call the
 * TaskHandler, return the result. A transport only maps its wire onto these calls.
 */
import type { CallContext, ClientOperationName, TaskFunction, TaskHandler } from './contracts.js';
import { MethodNotFoundError, TaskNotFoundError, ValidationError, type AgentError } from './errors.js';
import { nowIso } from './ids.js';
import { checkOptionNames } from './option-names.js';
import type { RuntimeTaskEvent, TaskEvent, TaskStatusEvent } from './task-event.js';
import { validateTask, type ValidateOptions } from './validate.js';
import type { AgentCard, JsonObject, Task } from './wire.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface CancelRequest {
  taskId: string;
  reason?: string;
}

/**
 * Reads a cancel body: `{"task_id", "reason"?}`; also `id` (protolink's name) and `metadata.reason`.
 */
export function parseCancelRequest(body: unknown): CancelRequest {
  if (!isRecord(body)) {
    throw new ValidationError('Invalid cancel request: body must be an object', {
      data: { errors: [{ pointer: '/', message: 'must be object' }] },
    });
  }
  const taskId =
    typeof body.task_id === 'string' ? body.task_id : typeof body.id === 'string' ? body.id : undefined;
  if (!taskId) {
    throw new ValidationError('Invalid cancel request: /task_id is required', {
      data: { errors: [{ pointer: '/task_id', message: 'is required' }] },
    });
  }
  const metadata = isRecord(body.metadata) ? body.metadata : {};
  const reason =
    typeof body.reason === 'string'
      ? body.reason
      : typeof metadata.reason === 'string'
        ? metadata.reason
        : undefined;
  return reason === undefined ? { taskId } : { taskId, reason };
}

/** The status event that ends a stream: it carries the whole task. */
export function finalStatusEvent(task: Task): TaskStatusEvent {
  return { type: 'task.status', task_id: task.id, state: task.state, final: true, timestamp: nowIso(), task };
}

/** The events that finish a stream the handler left open: one `task.error`, then the final `failed` status. */
export function failedEnding(task: Task, error: AgentError): [RuntimeTaskEvent, TaskStatusEvent] {
  const detail: JsonObject = { code: error.code, message: error.message };
  if (error.data !== undefined) detail.data = error.data as JsonObject;
  const failed: Task = { ...task, state: 'failed', metadata: { ...task.metadata, error: detail } };
  const timestamp = nowIso();
  return [
    { type: 'task.error', task_id: task.id, timestamp, error: detail } as RuntimeTaskEvent,
    { type: 'task.status', task_id: task.id, state: 'failed', final: true, timestamp, task: failed },
  ];
}

/** Decodes a send_task payload: a Task, or `{task: Task}` as JSON-RPC and WebSocket frames carry it. */
export function readTaskPayload(data: unknown, options: ValidateOptions = {}): Task {
  const candidate = isRecord(data) && isRecord(data.task) && !('id' in data) ? data.task : data;
  return validateTask(candidate, options);
}

/** Runs one unary client operation against a handler. */
export async function dispatchOperation(
  handler: TaskHandler,
  name: ClientOperationName | string,
  data: unknown,
  ctx: CallContext,
  options: ValidateOptions = {},
): Promise<Task | AgentCard> {
  switch (name) {
    case 'send_task':
      return handler.handleTask(readTaskPayload(data, options), ctx);
    case 'cancel_task': {
      const { taskId, reason } = parseCancelRequest(data);
      return handler.cancelTask(taskId, reason, ctx);
    }
    case 'get_card':
      return handler.getAgentCard(ctx);
    default:
      throw new MethodNotFoundError(`Unknown operation: ${name}`);
  }
}

export interface FunctionHandlerOptions {
  card?: AgentCard;
}

/**
 * Wraps a plain `(task) => task` function (a TaskFunction) as a TaskHandler.
 * Streaming yields the one final status; there is no active-task registry, so cancel finds nothing.
 */
export function handlerFromFunction(fn: TaskFunction, options: FunctionHandlerOptions = {}): TaskHandler {
  checkOptionNames('handlerFromFunction', options, ['card']);
  const card: AgentCard = options.card ?? { name: 'agent', description: '', url: '' };
  return {
    handleTask: (task, ctx) => fn(task, ctx),
    async *handleTaskStreaming(task, ctx): AsyncIterable<TaskEvent> {
      yield finalStatusEvent(await fn(task, ctx));
    },
    async cancelTask(taskId) {
      throw new TaskNotFoundError(`Task ${taskId} is not active`);
    },
    getAgentCard: () => card,
  };
}
