import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import {
  AgentError,
  DeadlineExceededError,
  InternalError,
  UnsupportedOperationError,
  ValueError,
  type AgentCard,
  type ComponentDescriptor,
  type Message,
  type Task,
  type TaskEvent,
  type TaskList,
  type TaskState,
  type Transport,
} from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import { resolveDescriptorModules } from './component-descriptor.js';
import { DEFAULT_RETRY_POLICY, retryPolicy, type RetryOption, type RetryPolicy } from './retry-options.js';
import type { SyncOperation, SyncRequest, SyncResponse, SyncWorkerData } from './sync-protocol.js';

/** Default for `syncTimeoutMs`: well above a transport's own 30 s default, so that one fires first. */
export const DEFAULT_SYNC_TIMEOUT_MS = 120_000;

export interface SyncCallOptions {
  /** Overrides `syncTimeoutMs` for this call, in milliseconds. Retries included: no backoff waits past it. */
  timeoutMs?: number;
  /** This call's retries, as on the async call: `false` turns them off, an object replaces fields. */
  retry?: RetryOption;
}

export interface SyncSendMessageOptions extends SyncCallOptions {
  taskId?: string;
}

export interface SyncGetTaskOptions extends SyncCallOptions {
  historyLength?: number;
}

export interface SyncListTasksOptions extends SyncCallOptions {
  sessionId?: string;
  state?: TaskState;
  pageSize?: number;
  pageToken?: string;
}

const SYNC_GET_OPTIONS = optionNames<SyncGetTaskOptions>({
  historyLength: true,
  timeoutMs: true,
  retry: true,
});
const SYNC_LIST_OPTIONS = optionNames<SyncListTasksOptions>({
  sessionId: true,
  state: true,
  pageSize: true,
  pageToken: true,
  timeoutMs: true,
  retry: true,
});

interface WorkerHandle {
  worker: Worker;
  port: MessagePort;
  signal: Int32Array;
}

/**
 * `client.sync`: the AgentClient operations as plain blocking calls, for code that cannot await
 * (a synchronous callback, a CLI step, a test helper). Each call is handed to a worker thread that
 * runs the async client on a transport rebuilt from `transport.describe()`, while this thread
 * sleeps in `Atomics.wait`. Errors are rethrown as the same typed AgentErrors.
 *
 * A transport without `describe()` cannot be used: RuntimeTransport's agents live on this very
 * thread, so blocking it would leave nobody to answer (a deadlock). Such calls throw
 * UnsupportedOperationError instead. The worker cannot take an AbortSignal (this thread is
 * asleep, nothing could fire it); `timeoutMs` bounds the wait instead.
 */
export class SyncAgentClient {
  private handle: WorkerHandle | undefined;
  private nextId = 0;
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy | undefined;

  constructor(
    private readonly transport: Transport,
    private readonly baseUrl: string,
    options: { timeoutMs?: number | undefined; retry?: RetryOption | undefined } = {},
  ) {
    checkOptionNames('SyncAgentClient', options, ['timeoutMs', 'retry']);
    this.timeoutMs = checkTimeout(options.timeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS);
    this.retry = retryPolicy('SyncAgentClient', options.retry, DEFAULT_RETRY_POLICY);
  }

  sendTask(task: Task, options: SyncCallOptions = {}): Task {
    return this.call('sendTask', [task], options) as Task;
  }

  sendMessage(message: Message | string, options: SyncSendMessageOptions = {}): Message {
    const forwarded = options.taskId === undefined ? {} : { taskId: options.taskId };
    return this.call('sendMessage', [message, forwarded], options) as Message;
  }

  cancelTask(taskId: string, reason?: string, options: SyncCallOptions = {}): Task {
    return this.call('cancelTask', [taskId, reason], options) as Task;
  }

  getAgentCard(options: SyncCallOptions = {}): AgentCard {
    return this.call('getAgentCard', [], options) as AgentCard;
  }

  getTask(taskId: string, options: SyncGetTaskOptions = {}): Task {
    const { timeoutMs, retry, ...forwarded } = syncOptions('client.sync.getTask', options, SYNC_GET_OPTIONS);
    return this.call('getTask', [taskId, forwarded], { timeoutMs, retry }) as Task;
  }

  listTasks(options: SyncListTasksOptions = {}): TaskList {
    const { timeoutMs, retry, ...forwarded } = syncOptions(
      'client.sync.listTasks',
      options,
      SYNC_LIST_OPTIONS,
    );
    return this.call('listTasks', [forwarded], { timeoutMs, retry }) as TaskList;
  }

  // No subscribeTask: a subscription exists to see events while they happen, and a blocking call can
  // only return once the task has ended; by then getTask gives the final task in one call.

  /** Runs the task to its end and returns every event, the final status last. */
  streamTask(task: Task, options: SyncCallOptions = {}): TaskEvent[] {
    return this.call('streamTask', [task], options) as TaskEvent[];
  }

  /** Terminates the worker thread; the next call starts a new one. */
  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    if (handle) {
      handle.port.close();
      await handle.worker.terminate();
    }
  }

  private call(op: SyncOperation, args: unknown[], options: SyncCallOptions): unknown {
    const timeoutMs = options.timeoutMs === undefined ? this.timeoutMs : checkTimeout(options.timeoutMs);
    // Checked here, before the worker is involved; the worker receives the complete setting.
    const retry = retryPolicy(`client.sync.${op}`, options.retry, this.retry) ?? false;
    const handle = this.ensureWorker();
    const id = ++this.nextId;
    // The worker's retries must not wait past the moment this thread stops waiting for them.
    const request: SyncRequest = { id, op, args, retry, deadline: Date.now() + timeoutMs };
    try {
      handle.port.postMessage(request);
    } catch (error) {
      throw new ValueError(`client.sync.${op}: arguments must be structured-clonable`, { cause: error });
    }
    const response = this.waitFor(handle, id, timeoutMs);
    if (!response) {
      // The worker's state is unknown (a hung call): drop it so the next call starts clean.
      void this.close();
      throw new DeadlineExceededError(`client.sync.${op} got no answer within ${timeoutMs} ms`);
    }
    if (!response.ok) throw AgentError.fromJSON(response.error);
    return response.value;
  }

  /**
   * Sleeps until the worker bumps the counter, then drains the port. Reading the counter before
   * the port closes the gap between "no message yet" and going to sleep.
   */
  private waitFor(handle: WorkerHandle, id: number, timeoutMs: number): SyncResponse | undefined {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const seen = Atomics.load(handle.signal, 0);
      const received = receiveMessageOnPort(handle.port);
      if (received) {
        const response = received.message as SyncResponse;
        // Older ids are late answers to calls that already timed out.
        if (response.id === id) return response;
        continue;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) return undefined;
      Atomics.wait(handle.signal, 0, seen, remaining);
    }
  }

  private ensureWorker(): WorkerHandle {
    if (this.handle) return this.handle;
    const descriptor = this.describeTransport();
    const { port1, port2 } = new MessageChannel();
    const signal = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    const workerData: SyncWorkerData = { transport: descriptor, baseUrl: this.baseUrl, signal, port: port2 };
    let worker: Worker;
    try {
      worker = new Worker(workerFile(), { workerData, transferList: [port2] });
    } catch (error) {
      port1.close();
      throw new ValueError('transport.describe() must return structured-clonable options', { cause: error });
    }
    // The worker only serves blocking calls: it must never keep the process alive on its own.
    worker.unref();
    this.handle = { worker, port: port1, signal };
    return this.handle;
  }

  private describeTransport(): ComponentDescriptor {
    if (typeof this.transport.describe !== 'function') {
      throw new UnsupportedOperationError(
        `client.sync needs a transport with describe(); ${this.transport.constructor.name} has none. ` +
          'An in-process transport serves its agents on this thread, which client.sync would block (a deadlock): ' +
          'use the async API, or a network transport.',
      );
    }
    return resolveDescriptorModules(this.transport.describe());
  }
}

/**
 * Checks the option names here: `timeoutMs` is this thread's, and an unknown name (say an
 * AbortSignal) is named plainly instead of failing to clone to the worker.
 */
function syncOptions<T extends SyncCallOptions>(method: string, options: T, accepted: readonly string[]): T {
  if (!isRecord(options)) throw new ValueError(`${method} options must be an object`);
  checkOptionNames(method, options, accepted);
  return options;
}

function checkTimeout(timeoutMs: number): number {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ValueError(`sync timeout must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  }
  return timeoutMs;
}

/**
 * The compiled worker. A worker runs outside any TypeScript loader, so when this module is the
 * TypeScript source (under jest), the package's built `dist` copy is used.
 */
function workerFile(): string {
  const candidates = [join(__dirname, 'sync-worker.js'), join(__dirname, '..', 'dist', 'sync-worker.js')];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found)
    throw new InternalError(
      'client.sync worker not found: build @agent/client (pnpm --filter @agent/client build)',
    );
  return found;
}
