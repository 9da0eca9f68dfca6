import {
  CLIENT_OPERATIONS,
  ValueError,
  createMessage,
  createTask,
  validateAgentCard,
  validateTask,
  type AgentCard,
  type Message,
  type Task,
  type TaskEvent,
  type Transport,
} from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
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
}

export interface SendMessageOptions extends CallOptions {
  /** Continue this task instead of starting a new one. */
  taskId?: string;
}

/**
 * Typed client operations over one transport and one agent address. Every call goes through
 * `transport.send` / `transport.subscribe`, so it behaves the same over every transport.
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
      signalOnly(options),
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
    if (typeof taskId !== 'string' || taskId === '') throw new ValueError('cancelTask needs a task id');
    const body = reason === undefined ? { task_id: taskId } : { task_id: taskId, reason };
    const result = await this.transport.send(
      CLIENT_OPERATIONS.cancel_task,
      this.baseUrl,
      body,
      undefined,
      signalOnly(options),
    );
    return validateTask(result);
  }

  /** Runs the task, yielding its events; the last one is the single final `task.status`. */
  streamTask(task: Task, options: CallOptions = {}): AsyncIterable<TaskEvent> {
    if (!isRecord(task)) throw new ValueError('streamTask needs a Task object');
    return this.transport.subscribe(this.baseUrl, task, signalOnly(options));
  }

  /** The agent's native card (`/.well-known/agent.json` on HTTP). */
  async getAgentCard(options: CallOptions = {}): Promise<AgentCard> {
    const result = await this.transport.send(
      CLIENT_OPERATIONS.get_card,
      this.baseUrl,
      undefined,
      undefined,
      signalOnly(options),
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

function signalOnly(options: CallOptions): { signal?: AbortSignal } {
  return options.signal ? { signal: options.signal } : {};
}
