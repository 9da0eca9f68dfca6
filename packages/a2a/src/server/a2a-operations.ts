/**
 * The A2A operations over the server pipeline, shared by the JSON-RPC and HTTP+JSON bindings. Every
 * operation acts for `call.owner` (principal + tenant): another owner's task answers exactly what an
 * unknown id answers, because every lookup goes through the pipeline's owner-scoped ledger.
 */
import {
  AgentError,
  InternalError,
  type Message,
  type Task,
  type TaskEvent,
  ValidationError,
  isFinalEvent,
  isTerminalState,
  newTimeOrderedId,
  nowIso,
  parseIsoTimestamp,
} from '@agent/core';
import { ownerKey, ReleasingMap } from '@agent/core/internal';
import type { EventFeed, ServerCall, ServerPipeline } from '@agent/server';
import { a2aError } from '../a2a-errors.js';
import type { PushNotifier } from '../push/push-notifier.js';
import { toA2APushConfig } from '../push/push-config.js';
import {
  type A2AMessage,
  type A2ATask,
  contextIdOf,
  fromA2AMessage,
  fromA2AState,
  readRequestObject,
  toA2AMessage,
  toA2ATask,
} from '../protojson.js';
import { A2AStreamEncoder } from '../stream-codec.js';
import { FrameStream } from './frame-stream.js';

type Params = Record<string, unknown>;

export interface A2AOperationsOptions {
  push: PushNotifier | undefined;
  extendedCard:
    ((call: ServerCall) => Promise<Record<string, unknown>> | Record<string, unknown>) | undefined;
  /** The public A2A card for this request (the base the extended card's fields go on). */
  publicCard: (call: ServerCall) => Promise<Record<string, unknown>>;
  /** New tasks answered with their last agent message instead of the Task. */
  replyAsMessage: ((task: Task) => boolean) | undefined;
}

function invalid(pointer: string, message: string): ValidationError {
  return new ValidationError(`Invalid request: ${pointer} ${message}`, {
    data: { errors: [{ pointer, message }] },
  });
}

function taskIdParam(params: Params, key = 'id'): string {
  const value = params[key];
  if (typeof value !== 'string' || value === '') throw invalid(`/${key}`, 'is required');
  return value;
}

/** An integer given as a JSON number or a decimal string (a query parameter); undefined when absent. */
function intParam(params: Params, key: string, min: number, max: number): number | undefined {
  const raw = params[key];
  if (raw === undefined || raw === null || raw === '') return undefined;
  const value = typeof raw === 'string' && /^-?\d{1,15}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`/${key}`, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

function boolParam(params: Params, key: string): boolean | undefined {
  const raw = params[key];
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw invalid(`/${key}`, 'must be a boolean');
}

function stringParam(params: Params, key: string): string | undefined {
  const raw = params[key];
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') throw invalid(`/${key}`, 'must be a string');
  return raw;
}

function objectParam(params: Params, key: string): Params | undefined {
  const raw = params[key];
  if (raw === undefined || raw === null) return undefined;
  return readRequestObject(raw, `/${key}`);
}

/**
 * When a task's status last changed, as far as the task itself tells: the latest of its creation,
 * its messages and its artifacts. Native tasks carry no status timestamp of their own.
 */
export function statusTimestampOf(task: Task): string {
  const canonical = latestCanonical(task);
  if (canonical !== null) return canonical;
  let latest = Date.parse(task.created_at) || 0;
  for (const message of task.messages) latest = Math.max(latest, Date.parse(message.timestamp) || 0);
  for (const artifact of task.artifacts) latest = Math.max(latest, Date.parse(artifact.created_at) || 0);
  return latest > 0 ? new Date(latest).toISOString() : nowIso();
}

/**
 * The latest of a task's timestamps when all are `YYYY-MM-DDTHH:mm:ss.sssZ`, as this library writes
 * them, else null. Their text order is their time order, so none is parsed: every answer encodes a
 * task. Anything else (an offset, no milliseconds) takes the parsing path.
 */
function latestCanonical(task: Task): string | null {
  let latest = task.created_at;
  if (typeof latest !== 'string' || !CANONICAL_UTC.test(latest)) return null;
  for (const message of task.messages) {
    if (typeof message.timestamp !== 'string' || !CANONICAL_UTC.test(message.timestamp)) return null;
    if (message.timestamp > latest) latest = message.timestamp;
  }
  for (const artifact of task.artifacts) {
    if (typeof artifact.created_at !== 'string' || !CANONICAL_UTC.test(artifact.created_at)) return null;
    if (artifact.created_at > latest) latest = artifact.created_at;
  }
  return latest;
}

/** `Date.prototype.toISOString`'s own form (four-digit years), its fields in range. */
const CANONICAL_UTC = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

function encodeTask(task: Task, historyLength?: number, includeArtifacts = true): A2ATask {
  const options: Parameters<typeof toA2ATask>[1] = { timestamp: statusTimestampOf(task), includeArtifacts };
  if (historyLength !== undefined) options.historyLength = historyLength;
  return toA2ATask(task, options);
}

interface SendRequest {
  message: Message;
  taskId?: string;
  contextId?: string;
  historyLength?: number;
  returnImmediately: boolean;
  pushConfig?: unknown;
  metadata?: Params;
}

function readSendRequest(params: Params): SendRequest {
  if (params.message === undefined) throw invalid('/message', 'is required');
  const decoded = fromA2AMessage(params.message, '/message');
  const configuration = objectParam(params, 'configuration') ?? {};
  const request: SendRequest = {
    message: decoded.message,
    returnImmediately: boolParam(configuration, 'returnImmediately') === true,
  };
  if (decoded.taskId) request.taskId = decoded.taskId;
  if (decoded.contextId) request.contextId = decoded.contextId;
  const historyLength = intParam(configuration, 'historyLength', 0, Number.MAX_SAFE_INTEGER);
  if (historyLength !== undefined) request.historyLength = historyLength;
  const push = configuration.taskPushNotificationConfig ?? configuration.pushNotificationConfig;
  if (push !== undefined && push !== null) request.pushConfig = push;
  const metadata = objectParam(params, 'metadata');
  if (metadata) request.metadata = metadata;
  return request;
}

/**
 * A message-only reply: the finished task's last agent message, in its context. The task id is left
 * out: to the caller this exchange created no task. A task that failed answers its error instead.
 */
function messageReply(task: Task): A2AMessage {
  if (task.state === 'failed') throw AgentError.fromJSON(task.metadata.error);
  const reply = [...task.messages].reverse().find((message) => message.role === 'agent');
  if (!reply) throw new InternalError(`Task ${task.id} finished without a message to answer with`);
  return toA2AMessage(reply, { contextId: contextIdOf(task) });
}

/** Metadata keys a client may not set on a new task: the server owns them. */
const RESERVED_METADATA = new Set(['run_context', 'session_id', 'cancel_reason', 'error']);

export class A2AOperations {
  /** One push follower per task (owner + id), running while the task does; a ReleasingMap, so a removed feed dies young. */
  private readonly followers = new ReleasingMap<string, EventFeed>();

  constructor(
    private readonly pipeline: ServerPipeline,
    private readonly options: A2AOperationsOptions,
  ) {}

  get pushEnabled(): boolean {
    return this.options.push !== undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // SendMessage / SendStreamingMessage

  async sendMessage(call: ServerCall, params: Params): Promise<{ task: A2ATask } | { message: A2AMessage }> {
    const request = readSendRequest(params);
    const task = await this.prepare(call, request);
    const historyLength = request.historyLength;
    if (task && this.options.replyAsMessage?.(task) === true) {
      return { message: messageReply(await this.pipeline.send(call, task)) };
    }
    if (!request.returnImmediately && request.pushConfig === undefined) {
      const result = request.taskId
        ? await this.pipeline.continueTask(call, request.taskId, request.message)
        : await this.pipeline.send(call, task!);
      return { task: encodeTask(result, historyLength) };
    }
    // Streamed underneath: the answer can come after the first event, and push configs follow it.
    const feed = this.feedFor(call, request, task);
    const first = await feed.next();
    const id = request.taskId ?? task!.id;
    await this.attachPush(call, id, request.pushConfig);
    if (request.returnImmediately || first.done || isFinalEvent(first.value)) {
      const current = await this.current(call, id, task, first);
      await feed.return();
      return { task: encodeTask(current, historyLength) };
    }
    let final: Task | undefined;
    for (;;) {
      const step = await feed.next();
      if (step.done) break;
      if (isFinalEvent(step.value)) {
        final = step.value.task;
        break;
      }
    }
    await feed.return();
    return { task: encodeTask(final ?? (await this.pipeline.get(call, { task_id: id })), historyLength) };
  }

  async sendStreamingMessage(call: ServerCall, params: Params): Promise<FrameStream> {
    const request = readSendRequest(params);
    const task = await this.prepare(call, request);
    if (task && this.options.replyAsMessage?.(task) === true) {
      return FrameStream.of([{ message: messageReply(await this.pipeline.send(call, task)) }]);
    }
    const feed = this.feedFor(call, request, task);
    const id = request.taskId ?? task!.id;
    const start = request.taskId ? await this.pipeline.get(call, { task_id: id }) : task!;
    const stream = await FrameStream.open(feed, new A2AStreamEncoder(start));
    await this.attachPush(call, id, request.pushConfig);
    return stream;
  }

  /**
   * Checks a send before anything runs: a continuation names a task of the caller's whose context
   * matches; a new task gets a server-minted id and its context. Returns the new task (undefined
   * for a continuation).
   */
  private async prepare(call: ServerCall, request: SendRequest): Promise<Task | undefined> {
    if (request.taskId) {
      const existing = await this.pipeline.get(call, { task_id: request.taskId });
      if (request.contextId && request.contextId !== contextIdOf(existing)) {
        throw invalid('/message/contextId', 'does not match the context of the task');
      }
      if (isTerminalState(existing.state)) {
        throw a2aError(
          'UNSUPPORTED_OPERATION',
          `Task ${request.taskId} is ${existing.state}: a finished task takes no further message`,
          { task_id: request.taskId },
        );
      }
      return undefined;
    }
    const metadata: Params = {};
    for (const [key, value] of Object.entries(request.metadata ?? {})) {
      if (!RESERVED_METADATA.has(key)) metadata[key] = value;
    }
    // Ids this server makes are time-ordered: a store's indexes of them grow at their end.
    metadata.session_id = request.contextId ?? newTimeOrderedId();
    return {
      id: newTimeOrderedId(),
      state: 'submitted',
      messages: [request.message],
      artifacts: [],
      metadata,
      created_at: nowIso(),
    };
  }

  private feedFor(call: ServerCall, request: SendRequest, task: Task | undefined): EventFeed {
    return request.taskId
      ? this.pipeline.continueStream(call, request.taskId, request.message)
      : this.pipeline.stream(call, task!);
  }

  private async current(
    call: ServerCall,
    id: string,
    task: Task | undefined,
    first: IteratorResult<TaskEvent>,
  ): Promise<Task> {
    if (!first.done && isFinalEvent(first.value) && first.value.task) return first.value.task;
    const live = this.pipeline.tasks.live(call.owner, id);
    if (live) return structuredClone(live.task);
    return task ?? this.pipeline.get(call, { task_id: id });
  }

  // ---------------------------------------------------------------------------------------------
  // Tasks

  async getTask(call: ServerCall, params: Params): Promise<A2ATask> {
    const id = taskIdParam(params);
    const historyLength = intParam(params, 'historyLength', 0, Number.MAX_SAFE_INTEGER);
    const task = await this.pipeline.get(call, { task_id: id });
    return encodeTask(task, historyLength);
  }

  async listTasks(
    call: ServerCall,
    params: Params,
  ): Promise<{ tasks: A2ATask[]; nextPageToken: string; pageSize: number; totalSize: number }> {
    const query: Params = {};
    const contextId = stringParam(params, 'contextId');
    if (contextId) query.session_id = contextId;
    const status = params.status ?? params.state;
    // 0 and the UNSPECIFIED name are the proto default: no filter.
    if (
      status !== undefined &&
      status !== null &&
      status !== '' &&
      status !== 0 &&
      status !== 'TASK_STATE_UNSPECIFIED'
    ) {
      query.state = fromA2AState(
        typeof status === 'string' && /^\d+$/.test(status) ? Number(status) : status,
        '/status',
      );
    }
    const pageSize = intParam(params, 'pageSize', 0, 100) || 50;
    query.page_size = pageSize;
    const pageToken = stringParam(params, 'pageToken');
    if (pageToken) query.page_token = pageToken;
    const historyLength = intParam(params, 'historyLength', 0, Number.MAX_SAFE_INTEGER);
    const includeArtifacts = boolParam(params, 'includeArtifacts') === true;
    const after = stringParam(params, 'statusTimestampAfter');
    let afterMs: number | undefined;
    if (after !== undefined) {
      const parsed = parseIsoTimestamp(after);
      if (!(parsed instanceof Date))
        throw invalid('/statusTimestampAfter', 'must be an ISO 8601 timestamp with a zone');
      afterMs = parsed.getTime();
    }
    let page;
    try {
      page = await this.pipeline.list(call, query);
    } catch (error) {
      // The pipeline names its own field; the A2A request called it pageToken.
      if (error instanceof AgentError && error.code === 'VALIDATION_FAILED' && pageToken) {
        throw invalid('/pageToken', 'is not a token of this list');
      }
      throw error;
    }
    const tasks = page.tasks
      .filter((task) => afterMs === undefined || Date.parse(statusTimestampOf(task)) > afterMs)
      .map((task) => encodeTask(task, historyLength, includeArtifacts));
    // The store pages by cursor and does not count: totalSize is the size of this page.
    return { tasks, nextPageToken: page.next_page_token, pageSize, totalSize: tasks.length };
  }

  async cancelTask(call: ServerCall, params: Params): Promise<A2ATask> {
    const id = taskIdParam(params);
    const metadata = objectParam(params, 'metadata') ?? {};
    const reasonValue = metadata.reason ?? metadata.cancel_reason ?? metadata.cancelReason;
    const payload: Params = { task_id: id };
    if (typeof reasonValue === 'string' && reasonValue !== '') payload.reason = reasonValue;
    try {
      return encodeTask(await this.pipeline.cancel(call, payload));
    } catch (error) {
      // Canceling is idempotent: a task canceled already answers as itself.
      if (
        error instanceof AgentError &&
        error.code === 'TASK_NOT_CANCELABLE' &&
        (error.data as { state?: unknown } | undefined)?.state === 'canceled'
      ) {
        return encodeTask(await this.pipeline.get(call, { task_id: id }));
      }
      throw error;
    }
  }

  /** The current Task first, then live events; a finished task is UNSUPPORTED_OPERATION before any frame. */
  async subscribeToTask(call: ServerCall, params: Params): Promise<FrameStream> {
    const id = taskIdParam(params);
    const found = await this.pipeline.tasks.lookup(call.owner, id);
    if (!found) {
      // The pipeline's own answer for an unknown id (and so for another owner's).
      await this.pipeline.get(call, { task_id: id });
      throw a2aError('TASK_NOT_FOUND');
    }
    if ('record' in found) {
      const task = found.record.task;
      if (isTerminalState(task.state)) {
        throw a2aError(
          'UNSUPPORTED_OPERATION',
          `Task ${id} is ${task.state}: there is nothing to subscribe to`,
          {
            task_id: id,
          },
        );
      }
      return FrameStream.only(new A2AStreamEncoder(task));
    }
    if ('remote' in found) {
      // Running on another replica: its stored snapshot, then what its log records after the
      // events logged by now.
      const logged = await this.pipeline.tasks.store.listTaskEvents(call.owner, id);
      const after = logged.length === 0 ? 0 : logged[logged.length - 1]!.sequence;
      const feed = this.pipeline.subscribe(call, { task_id: id, after });
      return FrameStream.following(feed, new A2AStreamEncoder(found.remote.task));
    }
    const live = found.live;
    // Snapshot and position taken together: every event after the snapshot follows it, once.
    const snapshot = structuredClone(live.task);
    const after = live.lastSequence;
    const feed = this.pipeline.subscribe(call, { task_id: id, after });
    // The Task frame goes out at once: a quiet task may not record its next event for a while.
    return FrameStream.following(feed, new A2AStreamEncoder(snapshot));
  }

  // ---------------------------------------------------------------------------------------------
  // Push notification configs

  private notifier(): PushNotifier {
    const push = this.options.push;
    if (!push) throw a2aError('PUSH_NOTIFICATION_NOT_SUPPORTED');
    return push;
  }

  async createPushConfig(call: ServerCall, params: Params): Promise<unknown> {
    const push = this.notifier();
    const taskId = taskIdParam(params, 'taskId');
    const task = await this.pipeline.get(call, { task_id: taskId });
    // 1.0 sends the config flat in the request; some clients nest it under `config`.
    const body = params.config !== undefined ? params.config : params;
    const config = await push.create(call.owner, taskId, body, params.config !== undefined ? '/config' : '');
    if (!isTerminalState(task.state)) await this.follow(call, taskId, false);
    return toA2APushConfig(config, this.tenantOf(call));
  }

  async getPushConfig(call: ServerCall, params: Params): Promise<unknown> {
    const push = this.notifier();
    const taskId = taskIdParam(params, 'taskId');
    const id = taskIdParam(params, 'id');
    await this.pipeline.get(call, { task_id: taskId });
    const config = push.get(call.owner, taskId, id);
    if (!config)
      throw a2aError('TASK_NOT_FOUND', `Push notification config ${id} not found`, { task_id: taskId });
    return toA2APushConfig(config, this.tenantOf(call));
  }

  async listPushConfigs(
    call: ServerCall,
    params: Params,
  ): Promise<{ configs: unknown[]; nextPageToken?: string }> {
    const push = this.notifier();
    const taskId = taskIdParam(params, 'taskId');
    await this.pipeline.get(call, { task_id: taskId });
    const configs = push
      .list(call.owner, taskId)
      .map((config) => toA2APushConfig(config, this.tenantOf(call)));
    return { configs };
  }

  async deletePushConfig(call: ServerCall, params: Params): Promise<Record<string, never>> {
    const push = this.notifier();
    const taskId = taskIdParam(params, 'taskId');
    const id = taskIdParam(params, 'id');
    await this.pipeline.get(call, { task_id: taskId });
    if (!push.delete(call.owner, taskId, id)) {
      throw a2aError('TASK_NOT_FOUND', `Push notification config ${id} not found`, { task_id: taskId });
    }
    return {};
  }

  private tenantOf(call: ServerCall): { tenant?: string } {
    return call.tenant ? { tenant: call.tenant } : {};
  }

  private async attachPush(call: ServerCall, taskId: string, config: unknown): Promise<void> {
    if (config === undefined) return;
    const push = this.notifier();
    await push.create(call.owner, taskId, config, '/configuration/taskPushNotificationConfig');
    await this.follow(call, taskId, true);
  }

  /**
   * Follows a running task for its push configs: each event, encoded, goes to every config the task
   * has then. One follower per task; it ends with the task. `fromStart`: replay the task's events
   * so far first (a task that has just started); else only what happens from now on.
   */
  private async follow(call: ServerCall, taskId: string, fromStart: boolean): Promise<void> {
    const push = this.options.push;
    if (!push) return;
    const key = ownerKey(call.owner, taskId);
    if (this.followers.has(key)) return;
    const found = await this.pipeline.tasks.lookup(call.owner, taskId);
    if (!found) return;
    const task =
      'live' in found
        ? structuredClone(found.live.task)
        : 'remote' in found
          ? found.remote.task
          : found.record.task;
    if (isTerminalState(task.state) && 'record' in found) return;
    const follower = this.pipeline.openOn(call, call.request);
    const after = fromStart || !('live' in found) ? 0 : found.live.lastSequence;
    const feed = this.pipeline.subscribe(follower, { task_id: taskId, after });
    this.followers.set(key, feed);
    const encoder = new A2AStreamEncoder(task);
    const owner = { tenant: call.owner.tenant, principal_id: call.owner.principal_id };
    const run = async (): Promise<void> => {
      try {
        for await (const event of feed) {
          for (const frame of encoder.encode(event)) push.notify(owner, taskId, frame);
        }
      } catch (error) {
        this.pipeline.logger.warn({ err: error, task_id: taskId }, 'push follower stopped');
      } finally {
        this.followers.delete(key);
      }
    };
    void run();
  }

  async getExtendedAgentCard(call: ServerCall): Promise<Record<string, unknown>> {
    const extended = this.options.extendedCard;
    // The card declares no extended card then: capability gating answers UnsupportedOperation.
    if (!extended) throw a2aError('UNSUPPORTED_OPERATION', 'This agent serves no extended agent card');
    const base = await this.options.publicCard(call);
    return { ...base, ...(await extended(call)) };
  }

  /** Detaches every push follower (the tasks run on). */
  async close(): Promise<void> {
    const feeds = [...this.followers.values()];
    this.followers.clear();
    await Promise.all(feeds.map((feed) => feed.return()));
  }
}
