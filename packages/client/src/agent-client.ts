import {
  CLIENT_OPERATIONS,
  TASK_STATES,
  UnsupportedOperationError,
  ValidationError,
  ValueError,
  createMessage,
  createTask,
  validateAgentCard,
  validateTask,
  type AgentCard,
  type GetTaskRequest,
  type ListTasksRequest,
  type Message,
  type SendOptions,
  type SubscribeTaskOptions,
  type Task,
  type TaskEvent,
  type TaskList,
  type TaskState,
  type Transport,
} from '@agent/core';
import { checkOptionNames, isRecord, numberOption, optionNames } from '@agent/core/internal';
import { agentReply } from './reply.js';
import { RetryBudget, retryStream, retryUnary, type RetryCall } from './retry.js';
import { DEFAULT_RETRY_POLICY, retryPolicy, type RetryOption, type RetryPolicy } from './retry-options.js';
import { retryDeadlineOf, retryRuntimeOf } from './retry-runtime.js';
import { SyncAgentClient } from './sync-client.js';

export interface AgentClientOptions {
  /** Any transport: HTTP, SSE, WebSocket, gRPC or the in-process RuntimeTransport. */
  transport: Transport;
  /** The agent's address on that transport: a URL (`http://127.0.0.1:8080`) or a runtime name. */
  baseUrl: string;
  /**
   * Longest time one `client.sync` call blocks the calling thread, in milliseconds, on top of the
   * transport's own timeout. Default 120000.
   */
  syncTimeoutMs?: number;
  /**
   * Retries of transient failures (UNAVAILABLE, RESOURCE_EXHAUSTED) for every operation, with
   * exponential backoff and full jitter; `false` turns them off. Default `{ maxAttempts: 3,
   * baseDelayMs: 100, maxDelayMs: 5000 }`. A call's own `retry` overrides it.
   */
  retry?: RetryOption;
}

const OPTION_NAMES = optionNames<AgentClientOptions>({
  transport: true,
  baseUrl: true,
  syncTimeoutMs: true,
  retry: true,
});

export interface CallOptions {
  signal?: AbortSignal;
  /**
   * Overrides the transport's own timeout for this call, in milliseconds (a stream: all of it).
   * Retries included: no attempt runs and no backoff waits past it.
   */
  timeoutMs?: number;
  /** This call's retries: `false` turns them off, an object replaces the client's fields it names. */
  retry?: RetryOption;
  /**
   * W3C `traceparent` of the caller's span, sent with the call (each attempt): it wins over the
   * active OpenTelemetry span, which is sent otherwise. An invalid value is ignored.
   */
  traceparent?: string;
  /** W3C `tracestate` sent beside `traceparent`. */
  tracestate?: string;
}

/** `subscribeTask`'s options: core's SubscribeTaskOptions and this call's retries. */
export interface SubscribeOptions extends SubscribeTaskOptions {
  retry?: RetryOption;
}

export interface SendMessageOptions extends CallOptions {
  /** Continue this task instead of starting a new one. */
  taskId?: string;
}

export interface GetTaskOptions extends CallOptions {
  /** Keep at most this many of the task's messages, the newest. Default: all. */
  historyLength?: number;
}

export interface ListTasksOptions extends CallOptions {
  /** Only tasks of this session (`metadata.run_context.session_id`, or the legacy `metadata.session_id`). */
  sessionId?: string;
  state?: TaskState;
  /** 1..100; the server's default is 50. */
  pageSize?: number;
  /** The previous page's `next_page_token`. */
  pageToken?: string;
}

/** The most tasks one `listTasks` page holds; the server enforces the same bound. */
const MAX_PAGE_SIZE = 100;

const GET_OPTIONS = optionNames<GetTaskOptions>({
  historyLength: true,
  signal: true,
  timeoutMs: true,
  retry: true,
  traceparent: true,
  tracestate: true,
});
const LIST_OPTIONS = optionNames<ListTasksOptions>({
  sessionId: true,
  state: true,
  pageSize: true,
  pageToken: true,
  signal: true,
  timeoutMs: true,
  retry: true,
  traceparent: true,
  tracestate: true,
});
const SUBSCRIBE_OPTIONS = optionNames<SubscribeOptions>({
  after: true,
  signal: true,
  timeoutMs: true,
  retry: true,
});

/**
 * Typed client operations over one transport and one agent address. Every call goes through
 * `transport.send`, `transport.subscribe` or `transport.subscribeTask`, so it behaves the same over
 * every transport.
 */
export class AgentClient {
  readonly transport: Transport;
  readonly baseUrl: string;
  /** The same operations, blocking the calling thread (see SyncAgentClient). */
  readonly sync: SyncAgentClient;
  /** The retries every call starts from; undefined when the client has them off. */
  private readonly retry: RetryPolicy | undefined;

  constructor(options: AgentClientOptions) {
    if (!isRecord(options)) throw new ValueError('AgentClient needs an options object');
    checkOptionNames('AgentClient', options, OPTION_NAMES);
    if (!isRecord(options.transport) || typeof options.transport.send !== 'function') {
      throw new ValueError('AgentClient needs a transport');
    }
    if (typeof options.baseUrl !== 'string') throw new ValueError('AgentClient needs a baseUrl string');
    this.transport = options.transport;
    this.baseUrl = options.baseUrl;
    this.retry = retryPolicy('AgentClient', options.retry, DEFAULT_RETRY_POLICY);
    this.sync = new SyncAgentClient(this.transport, this.baseUrl, {
      timeoutMs: options.syncTimeoutMs,
      retry: this.retry ?? false,
    });
  }

  /**
   * Submits a task; resolves with the finished Task (failed and canceled tasks resolve too).
   * Retried under the task's id: the server answers a resubmitted id from the task it knows.
   */
  async sendTask(task: Task, options: CallOptions = {}): Promise<Task> {
    if (!isRecord(task)) throw new ValueError('sendTask needs a Task object');
    const budget = new RetryBudget(this.retryCall('sendTask', options, this.mayResend(task)));
    const result = await retryUnary(budget, (sent) =>
      this.transport.send(CLIENT_OPERATIONS.send_task, this.baseUrl, task, undefined, sent),
    );
    return validateTask(result);
  }

  /**
   * Wraps the message (a string becomes one user text part) in a task, new or `taskId`, and
   * resolves with the agent's reply: the last agent-role message of the finished task.
   */
  async sendMessage(message: Message | string, options: SendMessageOptions = {}): Promise<Message> {
    const task = messageTask(message, options.taskId);
    return agentReply(await this.sendTask(task, options));
  }

  /**
   * Cancels an active task; rejects with TaskNotFoundError or TaskNotCancelableError. After a
   * retry, a task found canceled resolves as if the first attempt had answered.
   */
  async cancelTask(taskId: string, reason?: string, options: CallOptions = {}): Promise<Task> {
    const id = taskIdOf('cancelTask', taskId);
    const body = reason === undefined ? { task_id: id } : { task_id: id, reason };
    const budget = new RetryBudget(this.retryCall('cancelTask', options));
    try {
      const result = await retryUnary(budget, (sent) =>
        this.transport.send(CLIENT_OPERATIONS.cancel_task, this.baseUrl, body, undefined, sent),
      );
      return validateTask(result);
    } catch (error) {
      if (!budget.retried || !isRecord(error) || error.code !== 'TASK_NOT_CANCELABLE') throw error;
      return this.canceledEarlier(id, error, budget);
    }
  }

  /** Runs the task, yielding its events; the last one is the single final `task.status`. */
  streamTask(task: Task, options: CallOptions = {}): AsyncIterable<TaskEvent> {
    if (!isRecord(task)) throw new ValueError('streamTask needs a Task object');
    const call = this.retryCall('streamTask', options, this.mayResend(task));
    const transport = this.transport;
    const subscribeTask = transport.subscribeTask?.bind(transport);
    return retryStream(call, {
      // Opened again only while nothing was delivered: a resubmitted id replays from event 1.
      open: (sent) => transport.subscribe(this.baseUrl, task, sent),
      // Followed under the id the events carry: an agent that mints its own ids names the task so.
      resume:
        subscribeTask && hasId(task)
          ? (after, sent, event) => subscribeTask(this.baseUrl, event.task_id || task.id, { ...sent, after })
          : undefined,
    });
  }

  /**
   * One of the caller's tasks, running or finished, as the agent knows it now. Another caller's task
   * is TaskNotFoundError, exactly like an unknown id.
   */
  async getTask(taskId: string, options: GetTaskOptions = {}): Promise<Task> {
    const request = getTaskRequest(taskId, options);
    const budget = new RetryBudget(this.retryCall('getTask', options));
    const result = await retryUnary(budget, (sent) =>
      this.transport.send(CLIENT_OPERATIONS.get_task, this.baseUrl, request, undefined, sent),
    );
    return validateTask(result);
  }

  /**
   * One page of the caller's tasks, most recently updated first. Pass `next_page_token` back as
   * `pageToken` (with the same filters) for the next page; it is `""` on the last one.
   */
  async listTasks(options: ListTasksOptions = {}): Promise<TaskList> {
    const request = listTasksRequest(options);
    const budget = new RetryBudget(this.retryCall('listTasks', options));
    const result = await retryUnary(budget, (sent) =>
      this.transport.send(CLIENT_OPERATIONS.list_tasks, this.baseUrl, request, undefined, sent),
    );
    return validateTaskList(result);
  }

  /**
   * Follows one of the caller's tasks without running it again: its recorded events after sequence
   * `after` (default 0: all), then live ones, ending after the final status (at once for a finished
   * task that has nothing after `after`). To resume a stream that broke, pass the `sequence` of the
   * last event received; a retried subscription does that itself.
   */
  subscribeTask(taskId: string, options: SubscribeOptions = {}): AsyncIterable<TaskEvent> {
    const id = taskIdOf('subscribeTask', taskId);
    optionsOf('subscribeTask', options, SUBSCRIBE_OPTIONS);
    const after =
      options.after === undefined ? undefined : numberOption('after', options.after, 0, { integer: true });
    const call = this.retryCall('subscribeTask', options);
    if (typeof this.transport.subscribeTask !== 'function') {
      throw new UnsupportedOperationError(
        `subscribeTask needs a transport with subscribeTask(); ${this.transport.constructor.name} has none`,
      );
    }
    const subscribeTask = this.transport.subscribeTask.bind(this.transport);
    const from = (sent: SendOptions, since: number | undefined): AsyncIterable<TaskEvent> =>
      subscribeTask(this.baseUrl, id, since === undefined ? sent : { ...sent, after: since });
    return retryStream(call, {
      open: (sent) => from(sent, after),
      resume: (last, sent) => from(sent, last),
    });
  }

  /** The agent's native card (`/.well-known/agent.json` on HTTP). */
  async getAgentCard(options: CallOptions = {}): Promise<AgentCard> {
    const budget = new RetryBudget(this.retryCall('getAgentCard', options));
    const result = await retryUnary(budget, (sent) =>
      this.transport.send(CLIENT_OPERATIONS.get_card, this.baseUrl, undefined, undefined, sent),
    );
    return validateAgentCard(result);
  }

  /** Ends the `client.sync` worker thread, if one was started. The transport stays yours to stop. */
  async close(): Promise<void> {
    await this.sync.close();
  }

  /** A call's retry setting, checked before anything is sent. `retried: false` gives one attempt. */
  /**
   * A send may be repeated only when the agent recognizes a resubmitted id: the task carries one and
   * the transport does not say otherwise (an A2A agent mints its own ids).
   */
  private mayResend(task: Record<string, unknown>): boolean {
    return hasId(task) && this.transport.resubmissionIsIdempotent !== false;
  }

  private retryCall(method: string, options: CallOptions, retried = true): RetryCall {
    const policy = retryPolicy(method, options.retry, this.retry);
    return {
      policy: retried ? policy : undefined,
      signal: options.signal,
      timeoutMs:
        options.timeoutMs === undefined ? undefined : numberOption('timeoutMs', options.timeoutMs, 0),
      deadline: retryDeadlineOf(options),
      runtime: retryRuntimeOf(this),
      traceparent: stringOption('traceparent', options.traceparent),
      tracestate: stringOption('tracestate', options.tracestate),
    };
  }

  /**
   * A retried cancel met TASK_NOT_CANCELABLE: an earlier attempt may have canceled the task on the
   * server and lost only its answer. A task canceled by now is what the caller asked for, so it is
   * the answer; anything else keeps the error.
   */
  private async canceledEarlier(taskId: string, error: unknown, budget: RetryBudget): Promise<Task> {
    let task: Task;
    try {
      const found = await this.transport.send(
        CLIENT_OPERATIONS.get_task,
        this.baseUrl,
        { task_id: taskId },
        undefined,
        budget.attemptOptions(),
      );
      task = validateTask(found);
    } catch {
      throw error;
    }
    if (task.state === 'canceled') return task;
    throw error;
  }
}

/** Send and stream are retried only for a task with an id, the one thing a resubmission is known by. */
function hasId(task: Record<string, unknown>): boolean {
  return typeof task.id === 'string' && task.id !== '';
}

/** The task `sendMessage` submits: shared with the sync facade so both wrap messages alike. */
export function messageTask(message: Message | string, taskId: string | undefined): Task {
  if (typeof message !== 'string' && !(isRecord(message) && Array.isArray(message.parts))) {
    throw new ValueError('sendMessage needs a Message or a string');
  }
  const wrapped = typeof message === 'string' ? createMessage(message) : message;
  if (taskId !== undefined && (typeof taskId !== 'string' || taskId === ''))
    throw new ValueError('taskId must be a non-empty string');
  return createTask(taskId === undefined ? { messages: [wrapped] } : { id: taskId, messages: [wrapped] });
}

function taskIdOf(method: string, taskId: unknown): string {
  if (typeof taskId !== 'string' || taskId === '') throw new ValueError(`${method} needs a task id`);
  return taskId;
}

function optionsOf<T extends object>(method: string, options: T, accepted: readonly string[]): T {
  if (!isRecord(options)) throw new ValueError(`${method} options must be an object`);
  checkOptionNames(method, options, accepted);
  return options;
}

function stringOption(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new ValueError(`${name} must be a non-empty string`);
  return value;
}

/** The `get_task` payload: wire names, absent options left out. */
function getTaskRequest(taskId: string, options: GetTaskOptions): GetTaskRequest {
  const request: GetTaskRequest = { task_id: taskIdOf('getTask', taskId) };
  optionsOf('getTask', options, GET_OPTIONS);
  if (options.historyLength !== undefined) {
    request.history_length = numberOption('historyLength', options.historyLength, 0, { integer: true });
  }
  return request;
}

/** The `list_tasks` payload: wire names, absent options left out. */
function listTasksRequest(options: ListTasksOptions): ListTasksRequest {
  optionsOf('listTasks', options, LIST_OPTIONS);
  const request: ListTasksRequest = {};
  const sessionId = stringOption('sessionId', options.sessionId);
  if (sessionId !== undefined) request.session_id = sessionId;
  if (options.state !== undefined) {
    if (!(TASK_STATES as readonly unknown[]).includes(options.state)) {
      throw new ValueError(`state must be one of ${TASK_STATES.join(', ')}, got ${String(options.state)}`);
    }
    request.state = options.state;
  }
  const pageSize = options.pageSize;
  if (pageSize !== undefined) {
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw new ValueError(`pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${String(pageSize)}`);
    }
    request.page_size = pageSize;
  }
  const pageToken = stringOption('pageToken', options.pageToken);
  if (pageToken !== undefined) request.page_token = pageToken;
  return request;
}

/** A `list_tasks` answer checked as thoroughly as a single Task is. */
function validateTaskList(value: unknown): TaskList {
  if (!isRecord(value) || !Array.isArray(value.tasks) || typeof value.next_page_token !== 'string') {
    throw new ValidationError('Invalid task list: expected {"tasks": [...], "next_page_token": "..."}', {
      data: { errors: [{ pointer: '/', message: 'must be a task list' }] },
    });
  }
  return { tasks: value.tasks.map((task) => validateTask(task)), next_page_token: value.next_page_token };
}
