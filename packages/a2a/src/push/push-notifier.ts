import { randomUUID } from 'node:crypto';
import { ConcurrencyLimit, ValueError, type Logger, type ReleaseSlot } from '@agent/core';
import { checkOptionNames, numberOption, optionNames } from '@agent/core/internal';
import type { A2AStreamResponse } from '../protojson.js';
import { parsePushConfig, redactUrl, urlPointerOf, type PushConfig } from './push-config.js';
import { PushConfigStore, type PushOwner } from './push-config-store.js';
import { checkWebhookUrl, resolveWithDns, type ResolveHost } from './ssrf.js';
import { WebhookSender, type SendResult } from './webhook-sender.js';

/** One delivery attempt (or one dropped event), as `onAttempt` receives it. */
export interface PushAttempt {
  owner: PushOwner;
  taskId: string;
  configId: string;
  /** The webhook URL without its query string or fragment (those may carry secrets). */
  url: string;
  /** 1-based attempt number for this event; 0 for an event dropped before any attempt. */
  attempt: number;
  ok: boolean;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** What went wrong, in a few words; never a token or credential. */
  error?: string;
  /** No further attempt follows for this event (delivered, given up, refused or dropped). */
  final: boolean;
  /** The event was dropped unsent because too many events were waiting for this config. */
  dropped?: boolean;
}

export interface PushOptions {
  /**
   * Webhook URLs whose host is, or resolves to, a loopback, private, shared (CGNAT), link-local,
   * unique-local, multicast or reserved address are refused unless true. Default false.
   */
  allowPrivateNetworks?: boolean;
  /** Delivery attempts per event, the first try included. Default 5. */
  maxAttempts?: number;
  /** Ceiling of the first retry delay in ms; it doubles per retry (full jitter), up to maxBackoffMs. Default 250. */
  initialBackoffMs?: number;
  /** Longest delay between two attempts in ms, a receiver's Retry-After included. Default 5000. */
  maxBackoffMs?: number;
  /** Deadline of one attempt (connect, send, answer headers) in ms. Default 5000. */
  timeoutMs?: number;
  /** Most configs one task can have. Default 10. */
  maxConfigsPerTask?: number;
  /** Most configs held in all. Default 10000. */
  maxConfigs?: number;
  /** Most events waiting for one config; beyond it the oldest waiting event is dropped and reported. Default 1000. */
  maxPendingPerConfig?: number;
  /** Called once per attempt (and per dropped event). Exceptions it throws are logged and ignored. */
  onAttempt?: (attempt: PushAttempt) => void;
  /**
   * Most delivery attempts in flight at once, over all configs: a number, or a ConcurrencyLimit
   * shared with other notifiers. A config whose turn comes while all are taken waits for a free
   * one (no attempt is used up); deliveries run apart from requests, so waiting holds up no caller,
   * and what waits is bounded: one config lane each, `maxPendingPerConfig` events per lane. Default 64.
   */
  outboundLimit?: ConcurrencyLimit | number;
}

export interface PushNotifierDeps {
  logger: Logger;
  /** Host-name resolution for the address rule. Default: `dns.lookup` with all addresses. */
  resolve?: ResolveHost;
}

const PUSH_OPTION_NAMES = optionNames<PushOptions>({
  allowPrivateNetworks: true,
  maxAttempts: true,
  initialBackoffMs: true,
  maxBackoffMs: true,
  timeoutMs: true,
  maxConfigsPerTask: true,
  maxConfigs: true,
  maxPendingPerConfig: true,
  onAttempt: true,
  outboundLimit: true,
});

/** Delivery attempts in flight at once per notifier when `outboundLimit` is not given. */
export const DEFAULT_PUSH_DELIVERY_LIMIT = 64;
/** The name of the notifier's own `outboundLimit` (`data.limit` of its overload error). */
export const PUSH_DELIVERY_LIMIT_NAME = 'push deliveries';
/** Shortest pause before a waiting lane looks at a limit shared with others again, in ms. */
const MIN_SLOT_RECHECK_MS = 10;

/** The events still to deliver to one config, in order, and whether a worker is delivering them. */
interface Lane {
  readonly key: string;
  readonly owner: PushOwner;
  readonly taskId: string;
  readonly configId: string;
  readonly queue: string[];
  running: boolean;
}

/**
 * Push notifications: the configs of each owner's tasks, and the delivery of a task's
 * StreamResponses to them. Each config has its own ordered lane, so one slow webhook neither
 * reorders nor delays another. Delivery is at least once within `maxAttempts`.
 */
export class PushNotifier {
  /** Receives every attempt; starts as `options.onAttempt`. */
  onAttempt?: (attempt: PushAttempt) => void;

  private readonly store: PushConfigStore;
  private readonly sender: WebhookSender;
  private readonly logger: Logger;
  private readonly resolve: ResolveHost;
  private readonly allowPrivateNetworks: boolean;
  private readonly maxAttempts: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly timeoutMs: number;
  private readonly maxPendingPerConfig: number;
  /** Bounds the delivery attempts in flight (the `outboundLimit` option). */
  readonly outboundLimit: ConcurrencyLimit;
  private readonly lanes = new Map<string, Lane>();
  /** Lanes waiting for a slot of `outboundLimit`, first come first woken. */
  private readonly slotWaiters = new Set<() => void>();
  private readonly workers = new Set<Promise<void>>();
  private readonly sleepers = new Set<() => void>();
  private readonly closing = new AbortController();
  private closed = false;
  private closedPromise: Promise<void> | undefined;

  constructor(options: PushOptions | undefined, deps: PushNotifierDeps) {
    const opts = options ?? {};
    checkOptionNames('PushNotifier', opts, PUSH_OPTION_NAMES);
    if (opts.allowPrivateNetworks !== undefined && typeof opts.allowPrivateNetworks !== 'boolean')
      throw new ValueError('allowPrivateNetworks must be a boolean');
    if (opts.onAttempt !== undefined && typeof opts.onAttempt !== 'function')
      throw new ValueError('onAttempt must be a function');
    this.allowPrivateNetworks = opts.allowPrivateNetworks === true;
    this.maxAttempts = numberOption('maxAttempts', opts.maxAttempts, 5, { min: 1, integer: true });
    this.initialBackoffMs = numberOption('initialBackoffMs', opts.initialBackoffMs, 250);
    this.maxBackoffMs = numberOption('maxBackoffMs', opts.maxBackoffMs, 5000);
    this.timeoutMs = numberOption('timeoutMs', opts.timeoutMs, 5000, { exclusive: true });
    this.maxPendingPerConfig = numberOption('maxPendingPerConfig', opts.maxPendingPerConfig, 1000, {
      min: 1,
      integer: true,
    });
    const perTask = numberOption('maxConfigsPerTask', opts.maxConfigsPerTask, 10, { min: 1, integer: true });
    const total = numberOption('maxConfigs', opts.maxConfigs, 10_000, { min: 1, integer: true });
    this.store = new PushConfigStore(perTask, total);
    this.logger = deps.logger;
    this.resolve = deps.resolve ?? resolveWithDns;
    this.sender = new WebhookSender({
      timeoutMs: this.timeoutMs,
      guard: !this.allowPrivateNetworks,
      resolve: this.resolve,
    });
    this.onAttempt = opts.onAttempt;
    this.outboundLimit = outboundLimitOption(opts.outboundLimit);
  }

  /**
   * Registers (or, for an id the task already has, replaces) a config from A2A
   * `TaskPushNotificationConfig` JSON, read tolerantly. The id is minted when the request has none.
   * `pointer` prefixes the JSON pointers of a ValidationError (the config's place in the request).
   * Throws ValidationError (bad field, refused URL) or ResourceExhaustedError (a limit).
   */
  async create(owner: PushOwner, taskId: string, config: unknown, pointer = ''): Promise<PushConfig> {
    const request = parsePushConfig(config, taskId, pointer);
    await checkWebhookUrl(request.url, {
      allowPrivateNetworks: this.allowPrivateNetworks,
      resolve: this.resolve,
      pointer: urlPointerOf(config, pointer),
    });
    const stored: PushConfig = { id: request.id ?? randomUUID(), taskId, url: request.url };
    if (request.token !== undefined) stored.token = request.token;
    if (request.authentication) stored.authentication = { ...request.authentication };
    this.store.put({ tenant: owner.tenant, principal_id: owner.principal_id }, stored);
    return copy(stored);
  }

  get(owner: PushOwner, taskId: string, id: string): PushConfig | undefined {
    const config = this.store.get(owner, taskId, id);
    return config && copy(config);
  }

  list(owner: PushOwner, taskId: string): PushConfig[] {
    return this.store.list(owner, taskId).map(copy);
  }

  /** Removes one config; events still waiting for it are not sent. False when there was none. */
  delete(owner: PushOwner, taskId: string, id: string): boolean {
    return this.store.delete(owner, taskId, id);
  }

  /** Removes every config of a task (when the task itself is forgotten); the number removed. */
  deleteTask(owner: PushOwner, taskId: string): number {
    return this.store.deleteTask(owner, taskId);
  }

  /** How many configs are held in all. */
  get size(): number {
    return this.store.size;
  }

  /**
   * Queues one StreamResponse for every config the task has, behind the events already waiting for
   * each. Returns at once and never throws; outcomes reach `onAttempt` and the logger.
   */
  notify(owner: PushOwner, taskId: string, payload: A2AStreamResponse): void {
    if (this.closed) return;
    const configs = this.store.list(owner, taskId);
    if (configs.length === 0) return;
    let body: string;
    try {
      body = JSON.stringify(payload);
    } catch (error) {
      this.logger.error({ err: error, taskId }, 'push notification payload is not serializable');
      return;
    }
    for (const config of configs) this.enqueue(owner, config, body);
  }

  /**
   * Stops: waiting events are discarded, pending retries are cancelled, and attempts in flight get
   * up to `timeoutMs` to finish before they are aborted. Kept-alive sockets are closed, so nothing
   * of the notifier holds the process open afterwards. Idempotent.
   */
  close(): Promise<void> {
    this.closed = true;
    this.closedPromise ??= this.shutDown();
    return this.closedPromise;
  }

  private async shutDown(): Promise<void> {
    for (const wake of [...this.sleepers]) wake();
    let discarded = 0;
    for (const lane of this.lanes.values()) {
      discarded += lane.queue.length;
      lane.queue.length = 0;
    }
    if (discarded > 0)
      this.logger.warn({ discarded }, 'push notifier closed with undelivered events; they were discarded');
    const workers = Promise.allSettled([...this.workers]);
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.timeoutMs);
      timer.unref();
    });
    await Promise.race([workers, bound]);
    clearTimeout(timer);
    this.closing.abort();
    await workers;
    this.sender.close();
  }

  private enqueue(owner: PushOwner, config: PushConfig, body: string): void {
    const key = `${PushConfigStore.taskKey(owner, config.taskId)}\u0000${config.id}`;
    let lane = this.lanes.get(key);
    if (!lane) {
      const laneOwner = { tenant: owner.tenant, principal_id: owner.principal_id };
      lane = { key, owner: laneOwner, taskId: config.taskId, configId: config.id, queue: [], running: false };
      this.lanes.set(key, lane);
    }
    if (lane.queue.length >= this.maxPendingPerConfig) {
      lane.queue.shift();
      const error = `dropped: more than ${this.maxPendingPerConfig} events were waiting for this webhook`;
      this.logger.warn(
        {
          tenant: owner.tenant,
          principal_id: owner.principal_id,
          taskId: lane.taskId,
          configId: lane.configId,
        },
        'push notification dropped: too many events waiting',
      );
      this.report({
        ...laneFields(lane),
        url: redactUrl(config.url),
        attempt: 0,
        ok: false,
        error,
        final: true,
        dropped: true,
      });
    }
    lane.queue.push(body);
    if (!lane.running) this.start(lane);
  }

  private start(lane: Lane): void {
    lane.running = true;
    const worker = this.drain(lane).catch((error: unknown) => {
      this.logger.error(
        { err: error, taskId: lane.taskId, configId: lane.configId },
        'push delivery worker failed',
      );
    });
    this.workers.add(worker);
    void worker.finally(() => this.workers.delete(worker));
  }

  private async drain(lane: Lane): Promise<void> {
    try {
      while (!this.closed && lane.queue.length > 0) {
        const body = lane.queue.shift() as string;
        await this.deliver(lane, body);
      }
    } finally {
      // Runs right after the loop's last check, with no await in between: an event queued later
      // finds the lane idle (or gone) and starts a new worker.
      lane.running = false;
      if (lane.queue.length === 0) this.lanes.delete(lane.key);
    }
  }

  private async deliver(lane: Lane, body: string): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      // A slot of outboundLimit first: over it the lane waits here, using up no attempt.
      const release = await this.slot();
      if (!release) return; // closing
      const config = this.store.get(lane.owner, lane.taskId, lane.configId);
      if (!config) {
        release();
        // Deleted while events waited: the owner no longer wants them.
        lane.queue.length = 0;
        return;
      }
      let result: SendResult;
      try {
        result = await this.sender.send(config, body, this.closing.signal);
      } finally {
        release();
      }
      const final = result.ok || !result.retryable || attempt >= this.maxAttempts || this.closed;
      const report: PushAttempt = {
        ...laneFields(lane),
        url: redactUrl(config.url),
        attempt,
        ok: result.ok,
        final,
      };
      if (result.status !== undefined) report.status = result.status;
      if (result.error !== undefined) report.error = result.error;
      const fields = {
        tenant: lane.owner.tenant,
        principal_id: lane.owner.principal_id,
        taskId: lane.taskId,
        configId: lane.configId,
        url: report.url,
        attempt,
        ok: result.ok,
        status: result.status,
        error: result.error,
      };
      this.logger.debug(fields, 'push notification attempt');
      if (final && !result.ok) this.logger.warn(fields, 'push notification not delivered');
      this.report(report);
      if (final) return;
      await this.sleep(this.backoffMs(attempt, result.retryAfterMs));
      if (this.closed) return;
    }
  }

  /**
   * A slot of `outboundLimit`, waiting while none is free; `undefined` once the notifier closes.
   * Giving a slot back wakes the longest-waiting lane; a limit shared with others (whose releases
   * wake nobody here) is looked at again after its `retryAfterMs`.
   */
  private async slot(): Promise<ReleaseSlot | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      const release = this.outboundLimit.tryAcquire();
      if (release) {
        let done = false;
        return () => {
          if (done) return;
          done = true;
          release();
          const [next] = this.slotWaiters;
          next?.();
        };
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.slotWaiters.delete(wake);
          this.sleepers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.max(MIN_SLOT_RECHECK_MS, this.outboundLimit.retryAfterMs));
        timer.unref();
        this.slotWaiters.add(wake);
        this.sleepers.add(wake);
      });
    }
  }

  /** Full jitter: uniform in [0, min(max, initial·2^(n−1))]; a Retry-After replaces it, capped at max. */
  private backoffMs(attempt: number, retryAfterMs: number | undefined): number {
    if (retryAfterMs !== undefined) return Math.min(retryAfterMs, this.maxBackoffMs);
    const ceiling = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** (attempt - 1));
    return Math.random() * ceiling;
  }

  /** A pause that close() cuts short; its timer never holds the process open. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      this.sleepers.add(wake);
    });
  }

  private report(attempt: PushAttempt): void {
    const listener = this.onAttempt;
    if (!listener) return;
    try {
      listener(attempt);
    } catch (error) {
      this.logger.error({ err: error, taskId: attempt.taskId }, 'push onAttempt listener threw');
    }
  }
}

function outboundLimitOption(value: unknown): ConcurrencyLimit {
  if (value instanceof ConcurrencyLimit) return value;
  const max = numberOption('outboundLimit', value as number | undefined, DEFAULT_PUSH_DELIVERY_LIMIT, {
    min: 1,
    integer: true,
  });
  return new ConcurrencyLimit(max, { name: PUSH_DELIVERY_LIMIT_NAME });
}

function laneFields(lane: Lane): Pick<PushAttempt, 'owner' | 'taskId' | 'configId'> {
  return { owner: lane.owner, taskId: lane.taskId, configId: lane.configId };
}

function copy(config: PushConfig): PushConfig {
  const result: PushConfig = { ...config };
  if (config.authentication) result.authentication = { ...config.authentication };
  return result;
}
