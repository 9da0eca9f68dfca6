import {
  ANONYMOUS_PRINCIPAL,
  AgentError,
  InvalidRequestError,
  TaskAlreadyRunningError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  isTerminalState,
  nowIso,
  validateMessage,
  type Message,
  type TaskList,
  type TaskStatusEvent,
  MethodNotFoundError,
  PermissionDeniedError,
  ResourceExhaustedError,
  UnavailableError,
  ValidationError,
  type AgentCard,
  type CallContext,
  type SecurityContextLike,
  type Task,
  type TaskEvent,
  type TaskHandler,
  type TransportKind,
  getDefaultLogger,
  type ConcurrencyLimit,
  type Logger,
} from '@agent/core';
import {
  finalStatusEvent,
  normalizeHeaders,
  parseCancelRequest,
  readTaskPayload,
  toWireError,
  numberOption,
  ownerKey,
  ReleasingMap,
} from '@agent/core/internal';
import { authenticateRequest, type Authenticator } from '@agent/auth';
import type { RunStore, TaskOwner } from '@agent/events';
import { HandlerContext } from './handler-context.js';
import { withSecuritySchemes } from './card.js';
import { EventFeed, type FeedSource } from './event-feed.js';
import { requestedTenant, type OperationName, type RequestInfo } from './request.js';
import { isTenantName, TENANT_RULE } from './tenant.js';
import { failedEnding, TaskEventStream } from './stream-rule.js';
import { parseGetTask, parseList, parseSubscribe, withHistory } from './task-queries.js';
import { ledgerFor, STREAM_WINDOW, unrecordedRun, type LiveTask, type TaskLedger } from './task-ledger.js';
import { awaitRemoteRun, RemoteFollow } from './remote-task.js';
import { sequencedEvents } from './sequenced-events.js';
import { Admission, type RunTicket } from './admission.js';
import { type CallerTaskLimit, callerLimitOption } from './caller-limit.js';
import { concurrencyLimitOption, rateLimiterOption } from './limits.js';
import type { PipelineMetrics } from './metrics/pipeline-metrics.js';
import type { RateLimiter, RateLimitOptions } from './rate-limit.js';
import { RequestObserver } from './request-observer.js';
import { RequestScope } from './request-scope.js';
import { StreamPacer } from './pacer.js';
import type { FeedOutcome } from './event-feed.js';

export type ServerState = 'starting' | 'ready' | 'unavailable' | 'stopping';

/** The reason recorded on tasks a stop cancels once its grace period is over. */
export const SHUTDOWN_REASON = 'server shutting down';

/** Once a stop has canceled the stragglers, how long they get to answer before giving up on them. */
const ABORT_GRACE_MS = 1000;

const CANCEL_FIELDS = new Set(['task_id', 'id', 'reason', 'metadata']);

/** Whom a call acts for: the tenant it named (`""` by default) and the authenticated principal. */
export interface CallOwner {
  readonly tenant: string;
  readonly principal_id: string;
}

/**
 * The call's tenant, checked: its form first (INVALID_REQUEST), then the principal's restriction
 * (`metadata.tenants`, PERMISSION_DENIED). The messages name neither the value nor the allowed
 * tenants, so a refusal never tells a caller which tenants exist.
 */
export function resolveTenant(request: RequestInfo, security: SecurityContextLike | undefined): string {
  const named = requestedTenant(request);
  if (named !== undefined && !isTenantName(named)) {
    throw new InvalidRequestError(`Invalid tenant: expected ${TENANT_RULE}`);
  }
  const tenant = named ?? '';
  const allowed = security?.metadata?.tenants;
  // A restriction that is not a list (a custom authenticator's mistake) allows nothing: fail closed.
  if (allowed !== undefined && !(Array.isArray(allowed) && allowed.includes(tenant))) {
    throw new PermissionDeniedError('The caller may not act for the tenant named');
  }
  return tenant;
}

export interface OpenOptions {
  /**
   * Authenticate, but leave the tenant to {@link ServerPipeline.scope}: for wires that carry it in the
   * body (read only after authentication). The call acts for `""` until scoped.
   */
  deferTenant?: boolean;
}

export interface ServerPipelineOptions {
  transport: TransportKind;
  handler: TaskHandler;
  /** Checks every operation before anything the handler depends on is decoded. */
  authenticator?: Authenticator | undefined;
  /** Strict schema checks (unknown fields → 422). The Task schema itself is always checked. */
  validateSchema?: boolean;
  /** Receives the one log line per unexpected error. Default: JSON lines on stderr. */
  logger?: Logger | undefined;
  /**
   * Where tasks, their snapshots and their numbered events are recorded. Default: the handler's own
   * `runStore` when it has one (an Agent's), else one in-memory store per handler. Pipelines that
   * share a store share its running tasks too.
   */
  store?: RunStore | undefined;
  /**
   * One `info` line per request through `logger` when it is answered (a stream: when it ends):
   * operation, transport, status, duration, principal, tenant, task and trace ids. Default false:
   * a library does not add a line per request to an application's log unless asked to.
   */
  logRequests?: boolean | undefined;
  /** Where requests, task runs and streams are counted (shared by the pipelines of one server). */
  metrics?: PipelineMetrics | undefined;
  /**
   * Most task runs at once; past it `send_task` and `stream_task` (and continuations) are refused at
   * once with UNAVAILABLE and `data.retry_after_ms`. A ConcurrencyLimit shared by several pipelines
   * bounds them together. Default: no limit.
   */
  maxConcurrentTasks?: number | ConcurrencyLimit | undefined;
  /**
   * Most task runs at once of one caller (its principal, or its address when anonymous); past it
   * its new tasks are refused at once with UNAVAILABLE (`data.limit: "tasks_per_caller"`) while
   * other callers still get slots of `maxConcurrentTasks`. A CallerTaskLimit shared by several
   * pipelines counts a caller across them. Default: no limit.
   */
  maxConcurrentTasksPerCaller?: number | CallerTaskLimit | undefined;
  /**
   * A token bucket per principal over every operation but cancel: past it, RESOURCE_EXHAUSTED with
   * `data.retry_after_ms`. A RateLimiter shared by several pipelines limits a principal across them.
   */
  rateLimit?: RateLimitOptions | RateLimiter | undefined;
  /**
   * How long a streamed run waits for the caller that started it to read, once it is
   * {@link STREAM_WINDOW} events ahead (until that caller has taken half of them), before that
   * caller's stream is ended with
   * RESOURCE_EXHAUSTED (`data.limit: "stream_stall"`); the run then goes on without it (its events
   * are recorded, to be read with a subscription from the last sequence that caller got). In ms;
   * default 30000.
   */
  streamStallMs?: number | undefined;
}

/** The cancel reason of a run stopped because the task store refused its events. */
const UNRECORDED_REASON = 'the task store refused its events';

/** Default of {@link ServerPipelineOptions.streamStallMs}. */
export const DEFAULT_STREAM_STALL_MS = 30_000;

/** Reads {@link ServerPipelineOptions.streamStallMs}: whole ms from 1, the default when absent. */
export function streamStallMsOption(value: number | undefined): number {
  return numberOption('streamStallMs', value, DEFAULT_STREAM_STALL_MS, { min: 1, integer: true });
}

let callSerial = 0;

/**
 * One authenticated request on its way through the pipeline. Built by {@link ServerPipeline.open};
 * a wire adapter passes it back to the operation it decoded.
 */
export class ServerCall {
  /** The task this call works on, once known: a stop cancels it when the grace period is over. */
  taskId: string | undefined;
  /** The tenant the call acts for (`""` when it named none), checked by {@link ServerPipeline.open}. */
  readonly tenant: string;
  /** Whom the call acts for, as the task store keys what it owns. */
  readonly owner: CallOwner;
  /** Set on the call a task runs under: the store the pipeline records it in (`CallContext.taskStore`). */
  taskStore: object | undefined;
  /** When the request arrived (`performance.now()`), for its duration in the request log and the metrics. */
  startedAt: number = performance.now();
  /** The call's number in this process: its key among the pipeline's calls in flight. */
  readonly serial = ++callSerial;
  private headerCopy: Record<string, string> | undefined;

  /**
   * `tenant` omitted: the one the request carries, as open() checked it. That is what an adapter
   * gets when it builds a further call from an opened one over the same request (a batch entry, a
   * detached cancel).
   */
  constructor(
    readonly request: RequestInfo,
    readonly security: SecurityContextLike | undefined,
    readonly transport: TransportKind,
    tenant?: string,
  ) {
    const carried = tenant ?? requestedTenant(request);
    this.tenant = typeof carried === 'string' ? carried : '';
    this.owner = Object.freeze({
      tenant: this.tenant,
      principal_id: security?.principalId ?? ANONYMOUS_PRINCIPAL,
    });
  }

  /** The handler's CallContext (see HandlerContext: signal and headers built on first read). */
  context(): CallContext {
    return new HandlerContext(this);
  }

  /** The request headers with lowercase names, copied on first use. */
  normalizedHeaders(): Record<string, string> {
    this.headerCopy ??= normalizeHeaders(this.request.headers);
    return this.headerCopy;
  }
}

/**
 * The one server pipeline (authenticate → validate → dispatch → stream rule → error policy) that
 * every transport's wire adapter calls. Adapters decode their wire into these calls and encode what
 * comes back; every rule a request goes through lives here, once.
 *
 * Every promise it returns rejects only with an AgentError that is safe to send (the error policy
 * has run); `stream()` follows the stream rule of {@link TaskEventStream}.
 */
export class ServerPipeline {
  readonly transport: TransportKind;
  readonly handler: TaskHandler;
  readonly authenticator: Authenticator | undefined;
  readonly logger: Logger;
  private readonly strict: boolean;
  /** The rate limit and the concurrent-task limit a call and a run pass. */
  private readonly admission: Admission;
  /** The request log line and the metrics of each answered request. */
  private readonly observer: RequestObserver;
  /** Active tasks and streams (the requests themselves are counted by the observer). */
  private readonly metrics: PipelineMetrics | undefined;
  private stateValue: ServerState = 'starting';
  /** Keyed by `ServerCall.serial`: a call's request and task hang off it, and must die young (ReleasingMap). */
  private readonly inFlight = new ReleasingMap<number, ServerCall>();
  private drained: (() => void) | undefined;
  /** The running tasks and the store every task, snapshot and event is recorded in. */
  readonly tasks: TaskLedger;
  private readonly streamStallMs: number;

  constructor(options: ServerPipelineOptions) {
    this.transport = options.transport;
    this.handler = options.handler;
    this.authenticator = options.authenticator ?? undefined;
    this.logger = options.logger ?? getDefaultLogger();
    this.strict = options.validateSchema === true;
    this.tasks = ledgerFor(this.handler, options.store ?? undefined, this.logger);
    const metrics = options.metrics ?? undefined;
    this.metrics = metrics;
    metrics?.watchQueue(this.tasks);
    this.admission = new Admission(
      this.transport,
      concurrencyLimitOption(options.maxConcurrentTasks),
      rateLimiterOption(options.rateLimit),
      metrics,
      callerLimitOption(options.maxConcurrentTasksPerCaller),
    );
    this.streamStallMs = streamStallMsOption(options.streamStallMs);
    this.observer = new RequestObserver(this.transport, this.logger, options.logRequests === true, metrics);
  }

  /**
   * `ready` turns `unavailable` while the task store refuses writes (retries included): a task
   * finished then cannot be acknowledged, so readiness sends new work elsewhere until it recovers.
   */
  get state(): ServerState {
    if (this.stateValue === 'ready' && !this.tasks.storeHealthy) return 'unavailable';
    return this.stateValue;
  }

  /** Calls that have not answered yet. */
  get activeCalls(): number {
    return this.inFlight.size;
  }

  markReady(): void {
    this.stateValue = 'ready';
  }

  /**
   * Step one of every operation, before any body is decoded: refuses while stopping, authenticates,
   * resolves the tenant ({@link resolveTenant}) and returns the call the operation runs under.
   * Rejects with UNAVAILABLE, UNAUTHENTICATED, INVALID_REQUEST or PERMISSION_DENIED.
   */
  open(request: RequestInfo, options: OpenOptions = {}): Promise<ServerCall> {
    const startedAt = performance.now();
    if (this.stateValue === 'stopping') {
      const error = new UnavailableError('The server is stopping');
      this.observer.refusal(request, startedAt, error, undefined);
      return Promise.reject(error);
    }
    const defer = options.deferTenant === true;
    const authenticator = this.authenticator;
    if (!authenticator) return this.callFor(request, undefined, defer, startedAt);
    return authenticateRequest({ authenticator, headers: request.headers, query: request.query }).then(
      (security) => this.callFor(request, security, defer, startedAt),
      (error: unknown) => {
        const wire = this.wireError(error, 'authenticate');
        this.observer.refusal(request, startedAt, wire, undefined);
        return Promise.reject(wire);
      },
    );
  }

  /**
   * The same call acting for `tenant` (undefined: the tenant its request carries, or `""`), checked
   * as {@link open} checks it: for wires that name the tenant inside the body or the path, read after
   * authentication (an A2A request's `params.tenant`). Throws the wire error (INVALID_REQUEST,
   * PERMISSION_DENIED).
   */
  scope(call: ServerCall, tenant: string | undefined): ServerCall {
    // The request itself stays as it is (a transport's own object); only the tenant it names changes.
    const request: RequestInfo =
      tenant === undefined
        ? call.request
        : (Object.create(call.request, { tenant: { value: tenant, enumerable: true } }) as RequestInfo);
    try {
      const scoped = new ServerCall(
        call.request,
        call.security,
        this.transport,
        resolveTenant(request, call.security),
      );
      scoped.startedAt = call.startedAt;
      return scoped;
    } catch (error) {
      throw this.wireError(error, 'tenant', call);
    }
  }

  private callFor(
    request: RequestInfo,
    security: SecurityContextLike | undefined,
    deferTenant: boolean,
    startedAt: number,
  ): Promise<ServerCall> {
    let call: ServerCall;
    try {
      // Authenticated, tenant still to come: the caller names it later through scope().
      const tenant = deferTenant ? '' : resolveTenant(request, security);
      call = new ServerCall(request, security, this.transport, tenant);
    } catch (error) {
      const wire = this.wireError(error, 'tenant');
      this.observer.refusal(request, startedAt, wire, security);
      return Promise.reject(wire);
    }
    call.startedAt = startedAt;
    return Promise.resolve(call);
  }

  /**
   * A further request on a connection whose handshake {@link open} authenticated already (one frame
   * on a WebSocket), run under the connection's security context without authenticating again.
   * While stopping, `send` and `stream` refuse it like any new work; a cancel still passes, so a
   * caller can stop its own task during the drain. It acts for the connection's tenant, checked once
   * at the handshake.
   */
  openOn(connection: ServerCall, request: RequestInfo): ServerCall {
    return new ServerCall(request, connection.security, this.transport, connection.tenant);
  }

  /**
   * `send_task`: runs the task to its end and resolves with the finished Task. A resubmission of one
   * of the caller's ids attaches to the run when it is still going, and answers the stored Task,
   * running nothing, when it is over.
   */
  send(call: ServerCall, payload: unknown): Promise<Task> {
    let task: Task;
    try {
      this.refuseNewWork();
      this.admission.admit(call);
      task = readTaskPayload(payload, { strict: this.strict });
      call.taskId = task.id;
      this.admission.refuseWhenFull(call);
    } catch (error) {
      return Promise.reject(this.refuse(error, 'send_task', call));
    }
    return this.track(call, 'send_task', () => this.submit(call, task));
  }

  private async submit(call: ServerCall, task: Task): Promise<Task> {
    const found = await this.tasks.lookup(call.owner, task.id);
    if (found) {
      if ('record' in found) return found.record.task;
      if ('remote' in found) return this.awaitRemote(call, task.id);
      const running = found.live;
      return running.result.then((done) => acknowledged(running, done));
    }
    const ticket = this.admission.startRun(call);
    const { live, attached } = this.tasks.begin(call.owner, task);
    if (attached) {
      this.admission.dropRun(ticket);
      return live.result.then((done) => acknowledged(live, done));
    }
    return this.runToEnd(call, live, task, ticket);
  }

  /**
   * Continues one of the caller's tasks that stopped waiting for the caller (`input-required`,
   * `auth-required`): `message` is added to its messages and the task runs again under the same id,
   * its events numbered after the ones it recorded before; resolves with the finished Task. An id
   * the caller does not own is TASK_NOT_FOUND; a task still running TASK_ALREADY_RUNNING; a finished
   * one (completed, failed, canceled, rejected) UNSUPPORTED_OPERATION.
   */
  continueTask(call: ServerCall, taskId: string, message: Message): Promise<Task> {
    let input: Message;
    try {
      this.refuseNewWork();
      this.admission.admit(call);
      this.admission.refuseWhenFull(call);
      input = readMessage(message, this.strict);
    } catch (error) {
      return Promise.reject(this.refuse(error, 'send_task', call));
    }
    call.taskId = taskId;
    return this.track(call, 'send_task', async () => {
      const { live, task, ticket } = await this.resume(call, taskId, input);
      return this.runToEnd(call, live, task, ticket);
    });
  }

  /** {@link continueTask} as a stream: the continued run's events (numbered after the earlier ones). */
  continueStream(call: ServerCall, taskId: string, message: Message): EventFeed {
    let input: Message;
    try {
      this.refuseNewWork();
      this.admission.admit(call);
      this.admission.refuseWhenFull(call);
      input = readMessage(message, this.strict);
    } catch (error) {
      return this.rejectedFeed(error, 'stream_task', call);
    }
    call.taskId = taskId;
    return this.feed(call, 'stream_task', async () => {
      const { live, task, ticket } = await this.resume(call, taskId, input);
      void this.drive(call, live, task, ticket);
      return { live, after: live.base, starter: true };
    });
  }

  /** Registers the next run of a waiting task of the caller's (see {@link continueTask}). */
  private async resume(
    call: ServerCall,
    taskId: string,
    message: Message,
  ): Promise<{ live: LiveTask; task: Task; ticket: RunTicket }> {
    const found = await this.tasks.lookup(call.owner, taskId);
    if (!found) throw taskNotFound(taskId);
    if (!('record' in found)) throw stillRunning(taskId);
    const stored = found.record.task;
    if (isTerminalState(stored.state)) {
      throw new UnsupportedOperationError(
        `Task ${taskId} is ${stored.state}: a finished task takes no further message`,
        { data: { task_id: taskId, state: stored.state } },
      );
    }
    const base = (await this.tasks.store.listTaskEvents(call.owner, taskId)).length;
    const task: Task = { ...stored, state: 'submitted', messages: [...stored.messages, message] };
    const ticket = this.admission.startRun(call);
    // Two continuations racing: the second finds the first registered.
    const { live, attached } = this.tasks.begin(call.owner, task, base);
    if (attached) {
      this.admission.dropRun(ticket);
      throw stillRunning(taskId);
    }
    return { live, task, ticket };
  }

  /** Runs a registered task to its end as a unary call: records `working`, the final status, the store writes. */
  private async runToEnd(call: ServerCall, live: LiveTask, task: Task, ticket: RunTicket): Promise<Task> {
    this.metrics?.taskStarted(this.transport);
    this.tasks.recordOwn(live, statusEvent(task, 'working'));
    const run = this.runCall(call, task.id);
    this.cancelableFromElsewhere(live, run);
    try {
      let result: Task;
      try {
        result = await this.runTask(task, run.context());
      } catch (error) {
        const wire = this.wireError(error, 'send_task', call);
        await this.fail(live, task, wire);
        throw wire;
      }
      this.tasks.recordOwn(live, finalStatusEvent(result));
      await this.tasks.finish(live);
      return acknowledged(live, result);
    } finally {
      this.admission.endRun(ticket, live);
      this.release(run);
    }
  }

  /**
   * The call a task runs under: the starting caller's identity and headers, but a signal of the
   * run's own. The run belongs to the server, not to its first caller: that caller going away must
   * not abort it (others may be attached), only a stop whose grace is over does. It is an in-flight
   * call of its own until the caller releases it.
   */
  private runCall(call: ServerCall, taskId: string): ServerCall {
    const run = new ServerCall(new RunRequest(call.request), call.security, this.transport, call.tenant);
    run.taskId = taskId;
    run.taskStore = this.tasks.store;
    this.inFlight.set(run.serial, run);
    return run;
  }

  /** Records a run that failed before it produced anything: one `task.error`, the final `failed`. */
  private async fail(live: LiveTask, task: Task, wire: AgentError): Promise<void> {
    live.earlyFailure = wire;
    for (const event of failedEnding(task, wire)) this.tasks.recordOwn(live, event);
    await this.tasks.finish(live);
  }

  /**
   * `cancel_task`: `{task_id, reason?}` (also `id` and `metadata.reason`) → the canceled Task. Only a
   * running task of the caller's reaches the handler; one that is over answers TASK_NOT_CANCELABLE,
   * and an id the caller does not own TASK_NOT_FOUND, whoever else may own it.
   */
  cancel(call: ServerCall, payload: unknown): Promise<Task> {
    let taskId: string;
    let reason: string | undefined;
    try {
      if (this.strict) rejectUnknownCancelFields(payload);
      ({ taskId, reason } = parseCancelRequest(payload));
    } catch (error) {
      return Promise.reject(this.refuse(error, 'cancel_task', call));
    }
    return this.track(call, 'cancel_task', async () => {
      const found = await this.tasks.lookup(call.owner, taskId);
      if (!found) throw taskNotFound(taskId);
      if ('live' in found) return this.cancelLive(found.live, reason, call.context());
      if ('remote' in found) return this.cancelRemote(call, taskId, reason);
      const state = found.record.task.state;
      throw new TaskNotCancelableError(`Task ${taskId} has already finished`, {
        data: { task_id: taskId, state },
      });
    });
  }

  /** `get_task`: one of the caller's tasks, running or retained, with at most `history_length` messages. */
  get(call: ServerCall, payload: unknown): Promise<Task> {
    let query: ReturnType<typeof parseGetTask>;
    try {
      this.admission.admit(call);
      query = parseGetTask(payload, this.strict);
    } catch (error) {
      return Promise.reject(this.refuse(error, 'get_task', call));
    }
    call.taskId = query.taskId;
    return this.track(call, 'get_task', async () => {
      const found = await this.tasks.lookup(call.owner, query.taskId);
      if (!found) throw taskNotFound(query.taskId);
      const task =
        'record' in found
          ? found.record.task
          : 'remote' in found
            ? found.remote.task
            : await this.liveTask(found.live, call);
      return withHistory(task, query.historyLength);
    });
  }

  /** The freshest view of a running task: the handler's, when it keeps one, else the recorded one. */
  private async liveTask(live: LiveTask, call: ServerCall): Promise<Task> {
    if (typeof this.handler.getTask === 'function' && !live.finished) {
      const current = await this.handler.getTask(live.taskId, call.context());
      if (current) return current;
    }
    return structuredClone(live.task);
  }

  /** `list_tasks`: one page of the caller's tasks, newest update first. */
  list(call: ServerCall, payload: unknown): Promise<TaskList> {
    let query: ReturnType<typeof parseList>;
    try {
      this.admission.admit(call);
      query = parseList(payload, this.strict);
    } catch (error) {
      return Promise.reject(this.refuse(error, 'list_tasks', call));
    }
    return this.track(call, 'list_tasks', async () => {
      let page;
      try {
        page = await this.tasks.store.pageTaskRecords({ ...query, owner: call.owner });
      } catch (error) {
        // The store refuses a token it did not issue (or one of another query) with a ValueError.
        if (query.pageToken !== undefined && error instanceof AgentError && error.code === 'VALUE_ERROR') {
          throw new ValidationError('Invalid list_tasks request: /page_token is not a token of this list', {
            data: { errors: [{ pointer: '/page_token', message: 'is not a token of this list' }] },
          });
        }
        throw error;
      }
      return { tasks: page.records.map((record) => record.task), next_page_token: page.next_page_token };
    });
  }

  /**
   * `subscribe_task`: the caller's task's events after sequence `after`, then live ones, ending after
   * the final status. An unknown id (and another owner's) rejects the first `next()`.
   */
  subscribe(call: ServerCall, payload: unknown): EventFeed {
    let query: ReturnType<typeof parseSubscribe>;
    try {
      this.admission.admit(call);
      query = parseSubscribe(payload, this.strict);
    } catch (error) {
      return this.rejectedFeed(error, 'subscribe_task', call);
    }
    call.taskId = query.taskId;
    return this.feed(call, 'subscribe_task', async () => {
      const found = await this.tasks.lookup(call.owner, query.taskId);
      if (!found) throw taskNotFound(query.taskId);
      if ('live' in found) return this.follow(call.owner, found.live, query.after);
      if ('remote' in found) return { remote: this.followRemote(call.owner, query.taskId, query.after) };
      return { stored: await this.storedEvents(call.owner, query.taskId, query.after) };
    });
  }

  /** `get_card`: the handler's card, advertising the configured authenticator's scheme. */
  card(call: ServerCall): Promise<AgentCard> {
    try {
      this.admission.admit(call);
    } catch (error) {
      return Promise.reject(this.refuse(error, 'get_card', call));
    }
    return this.track(call, 'get_card', () =>
      Promise.resolve(this.handler.getAgentCard(call.context())).then((card) =>
        withSecuritySchemes(card, this.authenticator),
      ),
    );
  }

  /**
   * `stream_task`: the task's events under the stream rule, each with its `sequence`. Validation and
   * any failure before the first event reject the first `next()` with the wire error, so the adapter
   * can still answer it as a plain error before it commits to a stream. A resubmitted id follows the
   * running task from its first event, or replays the stored one.
   *
   * The run is driven here, not by the caller: a caller that goes away detaches, the task goes on
   * and its events are still recorded for a later subscription.
   */
  stream(call: ServerCall, payload: unknown): EventFeed {
    let task: Task;
    try {
      this.refuseNewWork();
      this.admission.admit(call);
      task = readTaskPayload(payload, { strict: this.strict });
      call.taskId = task.id;
      this.admission.refuseWhenFull(call);
    } catch (error) {
      return this.rejectedFeed(error, 'stream_task', call);
    }
    return this.feed(call, 'stream_task', async () => {
      const found = await this.tasks.lookup(call.owner, task.id);
      if (found && 'record' in found) return { stored: await this.storedEvents(call.owner, task.id, 0) };
      if (found && 'remote' in found) return { remote: this.followRemote(call.owner, task.id, 0) };
      if (found) return this.follow(call.owner, found.live, 0);
      const ticket = this.admission.startRun(call);
      const { live, attached } = this.tasks.begin(call.owner, task);
      if (attached) this.admission.dropRun(ticket);
      else void this.drive(call, live, task, ticket);
      return { live, after: 0, starter: !attached };
    });
  }

  private feed(call: ServerCall, operation: string, open: () => Promise<FeedSource>): EventFeed {
    this.inFlight.set(call.serial, call);
    this.metrics?.stream(this.transport, 1);
    // The feed is built here, so its count is read through this holder once it exists.
    const holder: { feed?: EventFeed } = {};
    const feed = new EventFeed(open, {
      toWire: (error) => this.wireError(error, operation, call),
      onEnd: (outcome) => {
        this.release(call);
        this.metrics?.stream(this.transport, -1);
        this.observer.observe(call, operation, outcome.error, streamFields(holder.feed, outcome));
      },
    });
    holder.feed = feed;
    return feed;
  }

  /** A stream refused before it started: answered as a plain error, logged and counted as a request. */
  private rejectedFeed(error: unknown, operation: string, call: ServerCall): EventFeed {
    return EventFeed.rejected(this.refuse(error, operation, call));
  }

  /**
   * Runs a streamed task to its end under the stream rule, recording every event. It is an in-flight
   * call of its own, so a stop waits for it and cancels it like any other.
   */
  private async drive(call: ServerCall, live: LiveTask, task: Task, ticket: RunTicket): Promise<void> {
    this.metrics?.taskStarted(this.transport);
    const run = this.runCall(call, task.id);
    const ctx = run.context();
    this.cancelableFromElsewhere(live, run);
    this.stopWhenUnrecorded(live, run);
    const events = new TaskEventStream(task, () => this.handler.handleTaskStreaming(task, ctx), {
      toWire: (error) => this.wireError(error, 'stream_task', call),
      onEnd: () => undefined,
    });
    // A handler that yields events without ever waiting for I/O would run its whole stream in one
    // turn of the event loop (every step settles as a microtask): paced, a cancel or a probe gets in.
    const pacer = new StreamPacer();
    // The wait the producer was given, while it lasts: one that pushes may bring more events
    // meanwhile (a cancel ended its wait, or its emits overlap), and they join the same wait, never
    // a second one for the starter (whose read would then end only the last).
    let waiting: Promise<void> | undefined;
    const waited = (): void => {
      waiting = undefined;
    };
    try {
      try {
        await events.deliver((event) => {
          if (events.handsOver) this.tasks.recordOwn(live, event);
          else this.tasks.record(live, event);
          if (waiting !== undefined) return waiting;
          const room = live.room();
          const wait =
            room === undefined ? pacer.pause() : this.keepPace(call, live, room).then(() => pacer.pause());
          return wait === undefined ? undefined : (waiting = wait.then(waited));
        });
      } catch (error) {
        // The stream rule rejects before the first event with the wire error; anything else is ours.
        if (events.count > 0) throw error;
        await this.fail(live, task, error as AgentError);
        return;
      }
      await this.tasks.finish(live);
    } finally {
      this.admission.endRun(ticket, live);
      this.release(run);
    }
  }

  /**
   * Waits for the caller that started a streamed run to read, at most `streamStallMs`. A caller that
   * read nothing meanwhile is cut off: its stream ends with RESOURCE_EXHAUSTED (its transport gives
   * up on the request, which also frees a socket nobody drains), and the run goes on without it.
   */
  private async keepPace(call: ServerCall, live: LiveTask, room: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const stalled = await Promise.race([
      room.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.streamStallMs))),
    ]);
    clearTimeout(timer);
    if (!stalled || live.starterCut) return;
    const error = new ResourceExhaustedError(
      `The stream was ended: its reader took fewer than ${STREAM_WINDOW / 2} of the ${STREAM_WINDOW} events waiting for it within ${this.streamStallMs} ms. ` +
        'The task goes on; subscribe to it to read the rest.',
      { data: { task_id: live.taskId, limit: 'stream_stall', window: STREAM_WINDOW } },
    );
    live.starterCut = error;
    live.unpace();
    live.notify();
    call.request.abort?.(error);
  }

  /**
   * A running task followed from `after`: a continued task's earlier runs are in the store, so what
   * of them comes after `after` is read from there and given first.
   */
  private async follow(owner: TaskOwner, live: LiveTask, after: number): Promise<FeedSource> {
    if (after >= live.base) return { live, after, starter: false };
    const earlier = await this.tasks.store.listTaskEvents(owner, live.taskId, {
      after,
      limit: live.base - after,
    });
    const prefix = sequencedEvents(earlier);
    return { live, after: live.base, starter: false, prefix };
  }

  /** A task another replica runs, followed through the shared store from `after`. */
  private followRemote(owner: TaskOwner, taskId: string, after: number): RemoteFollow {
    return new RemoteFollow(this.tasks.store, this.tasks.coordination!, owner, taskId, after);
  }

  /** A resubmission of a task another replica runs: the task once that run is over. */
  private async awaitRemote(call: ServerCall, taskId: string): Promise<Task> {
    const task = await awaitRemoteRun(
      this.tasks.store,
      this.tasks.coordination!,
      call.owner,
      taskId,
      call.request.signal,
    );
    if (!task) throw taskNotFound(taskId);
    return task;
  }

  /**
   * A cancel for a task another replica runs: the request goes through the shared store to that
   * replica, and the answer is the task as its run ended. A run that ended otherwise first (it
   * completed, or stopped for input) was not canceled: TASK_NOT_CANCELABLE, like a finished task.
   */
  private async cancelRemote(call: ServerCall, taskId: string, reason: string | undefined): Promise<Task> {
    const coordination = this.tasks.coordination!;
    await coordination.requestCancel({
      owner: { tenant: call.owner.tenant, principal_id: call.owner.principal_id },
      task_id: taskId,
      ...(reason === undefined ? {} : { reason }),
    });
    const task = await this.awaitRemote(call, taskId);
    if (task.state === 'canceled') return task;
    throw new TaskNotCancelableError(`Task ${taskId} has already finished`, {
      data: { task_id: taskId, state: task.state },
    });
  }

  /**
   * Cancels a task running here through its handler. A run held back by a caller that stopped
   * reading is released first, so it can reach its canceled end.
   */
  private cancelLive(live: LiveTask, reason: string | undefined, ctx: CallContext): Promise<Task> {
    live.unpace();
    return this.handler.cancelTask(live.taskId, reason, ctx);
  }

  /**
   * A streamed run whose events the store refuses for good (a full or failing store) can no longer be
   * acknowledged to anyone: it is canceled rather than left to keep producing events that would
   * pile up in memory with nowhere to go. Its callers get UNAVAILABLE, as for any unrecorded run.
   */
  private stopWhenUnrecorded(live: LiveTask, run: ServerCall): void {
    live.onStoreFailure = () => {
      this.cancelLive(live, UNRECORDED_REASON, run.context()).catch(() => {
        // Finished meanwhile: nothing left to stop.
      });
    };
  }

  /**
   * A cancel that reaches this process from another replica (its caller asked there) goes to the
   * handler under the run's own call, as a cancel by the task's owner.
   */
  private cancelableFromElsewhere(live: LiveTask, run: ServerCall): void {
    if (!this.tasks.coordination) return;
    live.onCancel((reason) => {
      this.cancelLive(live, reason, run.context()).catch(() => {
        // Finished meanwhile: nothing left to cancel.
      });
    });
  }

  /** A finished task's stored events after `after`, each with the sequence the store gave it. */
  private async storedEvents(owner: TaskOwner, taskId: string, after: number): Promise<TaskEvent[]> {
    const stored = await this.tasks.store.listTaskEvents(owner, taskId, { after });
    return sequencedEvents(stored);
  }

  /** A unary operation by name, for wires that carry the name (JSON-RPC methods, WebSocket ops, gRPC oneofs). */
  unary(
    call: ServerCall,
    operation: OperationName | string,
    payload: unknown,
  ): Promise<Task | AgentCard | TaskList> {
    switch (operation) {
      case 'send_task':
        return this.send(call, payload);
      case 'cancel_task':
        return this.cancel(call, payload);
      case 'get_task':
        return this.get(call, payload);
      case 'list_tasks':
        return this.list(call, payload);
      case 'get_card':
        return this.card(call);
      default:
        // Logged and counted as `unknown`: a name the caller chose must not become a metric label.
        return Promise.reject(
          this.refuse(new MethodNotFoundError(`Unknown operation: ${operation}`), 'unknown', call),
        );
    }
  }

  /**
   * A connection opened before the stop (a WebSocket, an HTTP/2 session) may still ask for new work:
   * once stopping, no task starts, whatever the wire. Cancels still pass, so a caller can stop its own.
   */
  private refuseNewWork(): void {
    if (this.stateValue === 'stopping') throw new UnavailableError('The server is stopping');
  }

  /** The error policy for a request refused before it ran, which is then logged and counted. */
  private refuse(error: unknown, operation: string, call: ServerCall): AgentError {
    const wire = this.wireError(error, operation, call);
    this.observer.observe(call, operation, wire);
    return wire;
  }

  /** The error policy: what the caller may see of `error` (logged under an id when it is unexpected). */
  wireError(error: unknown, operation: string, call?: ServerCall): AgentError {
    const site: Parameters<typeof toWireError>[1] = { transport: this.transport, operation };
    if (call?.security) site.principalId = call.security.principalId;
    if (call?.taskId !== undefined) site.taskId = call.taskId;
    return toWireError(error, site, this.logger);
  }

  /** Phase one of a stop: readiness turns `stopping` and new calls are refused with UNAVAILABLE. */
  beginStop(): void {
    this.stateValue = 'stopping';
  }

  /**
   * Phase two: in-flight calls get `graceMs` to finish; what is left then has its task canceled with
   * reason `server shutting down` (so its caller gets the canceled Task or its stream the final
   * `canceled`), and its request is aborted if it still has not answered shortly after.
   */
  async drain(graceMs: number): Promise<void> {
    this.beginStop();
    if (this.inFlight.size === 0) return;
    const allDone = new Promise<void>((resolve) => (this.drained = resolve));
    if (await settlesWithin(allDone, graceMs)) return;
    // A task may have several calls in flight (its run, its caller's feed, subscribers): cancel it once.
    const left = new Map<string, ServerCall>();
    for (const call of this.inFlight.values()) {
      if (call.taskId === undefined) continue;
      left.set(ownerKey(call.owner, call.taskId), call);
    }
    await Promise.all([...left.values()].map((call) => this.cancelForShutdown(call)));
    if (await settlesWithin(allDone, ABORT_GRACE_MS)) return;
    const reason = new UnavailableError('The server stopped before the request finished');
    for (const call of this.inFlight.values()) call.request.abort?.(reason);
    await settlesWithin(allDone, ABORT_GRACE_MS);
  }

  private async cancelForShutdown(call: ServerCall): Promise<void> {
    if (call.taskId === undefined) return;
    this.tasks.live(call.owner, call.taskId)?.unpace();
    const ctx: CallContext = { ...call.context(), signal: new AbortController().signal };
    try {
      await this.handler.cancelTask(call.taskId, SHUTDOWN_REASON, ctx);
    } catch {
      // Finished meanwhile, or a handler without a cancel registry: the abort below covers it.
    }
  }

  private runTask(task: Task, ctx: CallContext): Promise<Task> {
    const handler = this.handler;
    return typeof handler.runTask === 'function' ? handler.runTask(task, ctx) : handler.handleTask(task, ctx);
  }

  /** Runs one operation as an in-flight call; failures leave through the error policy. */
  private track<T>(call: ServerCall, operation: string, work: () => Promise<T> | T): Promise<T> {
    this.inFlight.set(call.serial, call);
    let result: Promise<T>;
    try {
      result = Promise.resolve(work());
    } catch (error) {
      result = Promise.reject(error);
    }
    return result.then(
      (value) => {
        this.release(call);
        this.observer.observe(call, operation, undefined);
        return value;
      },
      (error: unknown) => {
        this.release(call);
        const wire = this.wireError(error, operation, call);
        this.observer.observe(call, operation, wire);
        throw wire;
      },
    );
  }

  private release(call: ServerCall): void {
    this.inFlight.delete(call.serial);
    if (this.drained && this.inFlight.size === 0) this.drained();
  }
}

/**
 * The finished task, once the store holds it: a run the store could not record (retries included)
 * is not acknowledged, so its caller gets UNAVAILABLE rather than an answer nothing backs.
 */
function acknowledged(live: LiveTask, task: Task): Task {
  if (live.storeFailure === undefined) return task;
  throw unrecordedRun(live.taskId);
}

function streamFields(
  feed: EventFeed | undefined,
  outcome: FeedOutcome,
): { events: number; detached: boolean } {
  return { events: feed?.count ?? 0, detached: outcome.detached };
}

/** What an unknown id answers, and so also another owner's id: the same code, message and data. */
function taskNotFound(taskId: string): TaskNotFoundError {
  return new TaskNotFoundError(`Task ${taskId} not found`, { data: { task_id: taskId } });
}

function stillRunning(taskId: string): TaskAlreadyRunningError {
  return new TaskAlreadyRunningError(`Task ${taskId} is still running`, { data: { task_id: taskId } });
}

/** A continuation's message, checked like the messages of a submitted task. */
function readMessage(message: unknown, strict: boolean): Message {
  return validateMessage(message, { strict });
}

function statusEvent(task: Task, state: Task['state']): TaskStatusEvent {
  return { type: 'task.status', task_id: task.id, state, final: false, timestamp: nowIso() };
}

function rejectUnknownCancelFields(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const unknown = Object.keys(body).filter((key) => !CANCEL_FIELDS.has(key));
  if (unknown.length === 0) return;
  const errors = unknown.map((key) => ({ pointer: `/${key}`, message: 'is not allowed' }));
  throw new ValidationError(
    `Invalid cancel request: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`,
    { data: { errors } },
  );
}

/** Resolves true when `promise` settles within `ms`, false otherwise; leaves no timer behind. */
export async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The request a run's call carries: the starting caller's identity and headers, with a signal of the
 * run's own, its AbortController made only when someone reads it (most runs end without anyone
 * listening). A class, so the getter is the prototype's, not a closure per run.
 */
class RunRequest implements RequestInfo {
  readonly headers: RequestInfo['headers'];
  readonly query: RequestInfo['query'];
  readonly remoteAddress: RequestInfo['remoteAddress'];
  readonly tenant: RequestInfo['tenant'];
  // Not a #private field: a view made with Object.create (a scoped call's) reads it through the prototype.
  private readonly scope = new RequestScope();

  constructor(caller: RequestInfo) {
    this.headers = caller.headers;
    this.query = caller.query;
    this.remoteAddress = caller.remoteAddress;
    this.tenant = caller.tenant;
  }

  get signal(): AbortSignal {
    return this.scope.signal;
  }

  abort(reason: unknown): void {
    this.scope.abort(reason);
  }
}
