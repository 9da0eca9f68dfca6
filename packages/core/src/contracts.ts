/**
 * The contracts that connect agents and transports. A transport never imports the runtime: its server
 * side calls a TaskHandler, whatever implements it (see docs/architecture.md, "Package graph").
 */
import type { ComponentDescriptor } from './descriptor.js';
import type { TaskEvent } from './task-event.js';
import type { AgentCard, JsonObject, Task, TaskState } from './wire.js';

export type TransportKind = 'http' | 'sse' | 'ws' | 'grpc' | 'memory';

/** The principal a call acts as when the server has no authenticator (and the default task owner's). */
export const ANONYMOUS_PRINCIPAL = 'anonymous';

/** What a transport knows of the authenticated caller; `@agent/auth`'s SecurityContext satisfies it. */
export interface SecurityContextLike {
  readonly principalId: string;
  readonly token: string;
  readonly expiresAt?: string | null;
  readonly issuedAt?: string;
  readonly metadata: JsonObject;
}

/** Per-call information a transport hands to the TaskHandler. */
export interface CallContext {
  /** Present when an authenticator accepted the caller's credentials. */
  security?: SecurityContextLike;
  /** Request tenant, when the transport carries one. */
  tenant?: string;
  /**
   * Aborts when the server gives up on the task (a stop whose grace is over). Served tasks belong to
   * the server, not to the connection that started them: a caller that goes away does not abort it.
   */
  signal: AbortSignal;
  /** Request headers (lowercase names). Credentials are in here: never log them. */
  headers: Readonly<Record<string, string>>;
  transport: TransportKind;
  /**
   * The store the server records this task in (its snapshots and numbered events), when it does. A
   * handler that would save the same snapshots to the same store can leave them to the server.
   */
  taskStore?: object;
}

export interface ListTasksQuery {
  sessionId?: string;
  state?: string;
  limit?: number;
}

/** The server-side contract every transport binds to; `Agent` implements it. */
export interface TaskHandler {
  /** Runs a task to its end and resolves with the finished Task (failed and canceled included). */
  handleTask(task: Task, ctx: CallContext): Promise<Task>;
  /**
   * The server-facing entry point, when the handler has one: servers call it instead of
   * `handleTask`, so a subclass that overrides `handleTask` still gets active-task registration.
   */
  runTask?(task: Task, ctx: CallContext): Promise<Task>;
  /** Runs a task, yielding its events; the last one is the single final `task.status`. */
  handleTaskStreaming(task: Task, ctx: CallContext): AsyncIterable<TaskEvent>;
  /** Cancels an active task. Rejects with TaskNotFoundError or TaskNotCancelableError. */
  cancelTask(taskId: string, reason: string | undefined, ctx: CallContext): Promise<Task>;
  getAgentCard(ctx: CallContext): AgentCard | Promise<AgentCard>;
  /** Used by A2A mode and the registry; optional. */
  getTask?(taskId: string, ctx: CallContext): Promise<Task | null>;
  listTasks?(query: ListTasksQuery, ctx: CallContext): Promise<Task[]>;
}

/** A plain `(task) => task` function: the simplest task handler; `handlerFromFunction` wraps it. */
export type TaskFunction = (task: Task, ctx: CallContext) => Promise<Task>;

/** One client operation, mapped to a route (or its equivalent) by every transport. */
export interface ClientRequestSpec {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  streaming?: boolean;
}

/** The client's operation table: every transport maps the same names. */
export const CLIENT_OPERATIONS = {
  send_task: { name: 'send_task', method: 'POST', path: '/tasks/' },
  cancel_task: { name: 'cancel_task', method: 'POST', path: '/tasks/cancel' },
  get_card: { name: 'get_card', method: 'GET', path: '/.well-known/agent.json' },
  stream_task: { name: 'stream_task', method: 'POST', path: '/tasks/stream', streaming: true },
  get_task: { name: 'get_task', method: 'GET', path: '/tasks/{id}' },
  list_tasks: { name: 'list_tasks', method: 'GET', path: '/tasks' },
  subscribe_task: { name: 'subscribe_task', method: 'GET', path: '/tasks/{id}/events', streaming: true },
} as const satisfies Record<string, ClientRequestSpec>;

export type ClientOperationName = keyof typeof CLIENT_OPERATIONS;

/** `get_task`'s payload: one of the caller's tasks, with at most `history_length` messages (newest kept). */
export interface GetTaskRequest {
  task_id: string;
  history_length?: number;
}

/** `list_tasks`'s payload: one page of the caller's tasks, newest update first. */
export interface ListTasksRequest {
  session_id?: string;
  state?: TaskState;
  /** 1..100, default 50. */
  page_size?: number;
  /** The previous page's `next_page_token`. */
  page_token?: string;
}

/** `list_tasks`'s answer; `next_page_token` is `""` on the last page. */
export interface TaskList {
  tasks: Task[];
  next_page_token: string;
}

/** `subscribe_task`'s payload: the task's events after sequence `after` (default 0: all of them). */
export interface SubscribeTaskRequest {
  task_id: string;
  after?: number;
}

/**
 * A subscription follows a task that already runs in its own trace: it names no `traceparent` of
 * its own (the active OpenTelemetry span, when there is one, still goes with it).
 */
export interface SubscribeTaskOptions extends CallDeadlineOptions {
  /** Only events whose `sequence` is larger (the last one seen). Default 0. */
  after?: number;
}

/** What every client call takes: its abort signal and deadline. */
export interface CallDeadlineOptions {
  signal?: AbortSignal;
  /** Overrides the transport's default timeout for this call. */
  timeoutMs?: number;
}

export interface SendOptions extends CallDeadlineOptions {
  /**
   * W3C `traceparent` of the caller's span, sent with this call. It wins over the active
   * OpenTelemetry span (which every client sends when `@opentelemetry/api` is installed and a span
   * is active); an invalid value is ignored.
   */
  traceparent?: string;
  /** W3C `tracestate` sent beside `traceparent` (only with it). */
  tracestate?: string;
}

/**
 * A transport: the server side serves a bound TaskHandler, the client side sends requests.
 *
 * Rules every implementation follows (the conformance suite checks them):
 * - `bind` / `onTaskReceived` are called before `start`; `start` resolves once it serves.
 * - `stop` is idempotent; it ends open streams cleanly and releases every socket.
 * - the first `send`/`subscribe` authenticates lazily when `credentials` were configured.
 * - errors surface as `AgentError`s from `@agent/core`'s table.
 */
export interface Transport {
  readonly kind: TransportKind;
  /**
   * `false` when sending the same task again may run it twice: the agent on the other end mints its
   * own task ids (an A2A agent does), so it cannot recognize a resubmission. Absent or `true`: a
   * resubmitted id attaches to its run or answers the stored task, so a client may retry a send.
   */
  readonly resubmissionIsIdempotent?: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  bind(handler: TaskHandler): void;
  onTaskReceived(handler: TaskFunction): void;
  send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    params?: Record<string, string>,
    options?: SendOptions,
  ): Promise<TResult>;
  subscribe(agentUrl: string, task: Task, options?: SendOptions): AsyncIterable<TaskEvent>;
  /**
   * One of the caller's tasks' events: those recorded after `options.after`, then live ones, ending
   * after the final status (at once for a finished task). Rejects with TASK_NOT_FOUND for an id the
   * caller does not own.
   */
  subscribeTask?(agentUrl: string, taskId: string, options?: SubscribeTaskOptions): AsyncIterable<TaskEvent>;
  authenticate(credentials: string): Promise<SecurityContextLike>;
  /** True when the configured URL is local to this transport's host and port. */
  validateUrl(): boolean;
  /** A recipe to rebuild this transport (client side) in a worker thread; absent when impossible. */
  describe?(): ComponentDescriptor;
}
