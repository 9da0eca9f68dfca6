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
}

const OPTION_NAMES = optionNames<AgentClientOptions>({ transport: true, baseUrl: true, syncTimeoutMs: true });

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the transport's own timeout for this call, in milliseconds (a stream: all of it). */
  timeoutMs?: number;
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

const GET_OPTIONS = optionNames<GetTaskOptions>({ historyLength: true, signal: true, timeoutMs: true });
const LIST_OPTIONS = optionNames<ListTasksOptions>({
  sessionId: true,
  state: true,
  pageSize: true,
  pageToken: true,
  signal: true,
  timeoutMs: true,
});
const SUBSCRIBE_OPTIONS = optionNames<SubscribeTaskOptions>({ after: true, signal: true, timeoutMs: true });

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

  constructor(options: AgentClientOptions) {
    if (!isRecord(options)) throw new ValueError('AgentClient needs an options object');
    checkOptionNames('AgentClient', options, OPTION_NAMES);
    if (!isRecord(options.transport) || typeof options.transport.send !== 'function') {
      throw new ValueError('AgentClient needs a transport');
    }
    if (typeof options.baseUrl !== 'string') throw new ValueError('AgentClient needs a baseUrl string');
    this.transport = options.transport;
    this.baseUrl = options.baseUrl;
    this.sync = new SyncAgentClient(this.transport, this.baseUrl, { timeoutMs: options.syncTimeoutMs });
  }

  /** Submits a task; resolves with the finished Task (failed and canceled tasks resolve too). */
  async sendTask(task: Task, options: CallOptions = {}): Promise<Task> {
    if (!isRecord(task)) throw new ValueError('sendTask needs a Task object');
    const result = await this.transport.send(
      CLIENT_OPERATIONS.send_task,
      this.baseUrl,
      task,
      undefined,
      callOptions(options),
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

  /** Cancels an active task; rejects with TaskNotFoundError or TaskNotCancelableError. */
  async cancelTask(taskId: string, reason?: string, options: CallOptions = {}): Promise<Task> {
    const id = taskIdOf('cancelTask', taskId);
    const body = reason === undefined ? { task_id: id } : { task_id: id, reason };
    const result = await this.transport.send(
      CLIENT_OPERATIONS.cancel_task,
      this.baseUrl,
      body,
      undefined,
      callOptions(options),
    );
    return validateTask(result);
  }

  /** Runs the task, yielding its events; the last one is the single final `task.status`. */
  streamTask(task: Task, options: CallOptions = {}): AsyncIterable<TaskEvent> {
    if (!isRecord(task)) throw new ValueError('streamTask needs a Task object');
    return this.transport.subscribe(this.baseUrl, task, callOptions(options));
  }

  /**
   * One of the caller's tasks, running or finished, as the agent knows it now. Another caller's task
   * is TaskNotFoundError, exactly like an unknown id.
   */
  async getTask(taskId: string, options: GetTaskOptions = {}): Promise<Task> {
    const request = getTaskRequest(taskId, options);
    const result = await this.transport.send(
      CLIENT_OPERATIONS.get_task,
      this.baseUrl,
      request,
      undefined,
      callOptions(options),
    );
    return validateTask(result);
  }

  /**
   * One page of the caller's tasks, most recently updated first. Pass `next_page_token` back as
   * `pageToken` (with the same filters) for the next page; it is `""` on the last one.
   */
  async listTasks(options: ListTasksOptions = {}): Promise<TaskList> {
    const request = listTasksRequest(options);
    const result = await this.transport.send(
      CLIENT_OPERATIONS.list_tasks,
      this.baseUrl,
      request,
      undefined,
      callOptions(options),
    );
    return validateTaskList(result);
  }

  /**
   * Follows one of the caller's tasks without running it again: its recorded events after sequence
   * `after` (default 0: all), then live ones, ending after the final status (at once for a finished
   * task that has nothing after `after`). To resume a stream that broke, pass the `sequence` of the
   * last event received.
   */
  subscribeTask(taskId: string, options: SubscribeTaskOptions = {}): AsyncIterable<TaskEvent> {
    const id = taskIdOf('subscribeTask', taskId);
    optionsOf('subscribeTask', options, SUBSCRIBE_OPTIONS);
    const sent: SubscribeTaskOptions = callOptions(options);
    if (options.after !== undefined) sent.after = numberOption('after', options.after, 0, { integer: true });
    if (typeof this.transport.subscribeTask !== 'function') {
      throw new UnsupportedOperationError(
        `subscribeTask needs a transport with subscribeTask(); ${this.transport.constructor.name} has none`,
      );
    }
    return this.transport.subscribeTask(this.baseUrl, id, sent);
  }

  /** The agent's native card (`/.well-known/agent.json` on HTTP). */
  async getAgentCard(options: CallOptions = {}): Promise<AgentCard> {
    const result = await this.transport.send(
      CLIENT_OPERATIONS.get_card,
      this.baseUrl,
      undefined,
      undefined,
      callOptions(options),
    );
    return validateAgentCard(result);
  }

  /** Ends the `client.sync` worker thread, if one was started. The transport stays yours to stop. */
  async close(): Promise<void> {
    await this.sync.close();
  }
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

/** What the transport takes of a call's options; `timeoutMs` is checked here, its meaning is the transport's. */
function callOptions(options: CallOptions): SendOptions {
  const sent: SendOptions = {};
  if (options.signal) sent.signal = options.signal;
  if (options.timeoutMs !== undefined) sent.timeoutMs = numberOption('timeoutMs', options.timeoutMs, 0);
  return sent;
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
