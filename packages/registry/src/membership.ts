import { AgentError, ValueError, getDefaultLogger, type AgentCard } from '@agent/core';
import { checkOptionNames, isRecord, numberOption, optionNames } from '@agent/core/internal';
import type { RegistryEntryView } from './entry-view.js';
import type { RegistryClient } from './registry-client.js';

export interface RegistryMembershipOptions {
  client: RegistryClient;
  /** The card to register, read at every (re-)registration: a port-0 server knows its URL after start. */
  card: () => AgentCard;
  /**
   * Time between heartbeats in ms. Default: a third of the entry's lifetime as the registry
   * reports it (`expires_at - heartbeat_at`), 10000 when it reports none.
   */
  heartbeatMs?: number;
  /** Every failure after `start()` (heartbeat, re-registration, deregistration). Default: a warn log line. */
  onError?: (error: unknown) => void;
}

const OPTION_NAMES = optionNames<RegistryMembershipOptions>({
  client: true,
  card: true,
  heartbeatMs: true,
  onError: true,
});

/** The heartbeat interval when neither the option nor the registry's answer gives one. */
export const DEFAULT_HEARTBEAT_MS = 10_000;

type State = 'idle' | 'starting' | 'running' | 'stopping';

/**
 * Keeps one agent registered: `start()` registers its card (replacing the agent's own entry when
 * one is still live from an earlier run), then heartbeats every `heartbeatMs`; a heartbeat the
 * registry answers with NOT_FOUND (it restarted, or the entry expired while it was unreachable)
 * registers the card again. `stop()` deregisters. Nothing the timer does throws: failures go to
 * `onError`, and the timer never keeps the process alive.
 */
export class RegistryMembership {
  readonly client: RegistryClient;
  private readonly card: () => AgentCard;
  private readonly configuredHeartbeatMs: number | undefined;
  private readonly onError: (error: unknown) => void;
  private state: State = 'idle';
  private name: string | undefined;
  private intervalMs = DEFAULT_HEARTBEAT_MS;
  private timer: NodeJS.Timeout | undefined;
  /** Aborts the calls of the current run, so that stop() does not wait out a hanging heartbeat. */
  private controller: AbortController | undefined;
  private tick: Promise<void> | undefined;
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: RegistryMembershipOptions) {
    if (!isRecord(options)) throw new ValueError('RegistryMembership needs an options object');
    checkOptionNames('RegistryMembership', options, OPTION_NAMES);
    if (!isRecord(options.client) || typeof options.client.register !== 'function') {
      throw new ValueError('RegistryMembership needs a RegistryClient as client');
    }
    if (typeof options.card !== 'function')
      throw new ValueError('RegistryMembership needs card: () => AgentCard');
    if (options.onError !== undefined && typeof options.onError !== 'function') {
      throw new ValueError('RegistryMembership: onError must be a function');
    }
    this.client = options.client;
    this.card = options.card;
    this.configuredHeartbeatMs =
      options.heartbeatMs === undefined
        ? undefined
        : numberOption('heartbeatMs', options.heartbeatMs, DEFAULT_HEARTBEAT_MS, { exclusive: true });
    this.onError = options.onError ?? defaultOnError;
  }

  /** True between a successful `start()` and `stop()`. */
  get running(): boolean {
    return this.state === 'running';
  }

  /** The name the agent is registered under, once started. */
  get registeredName(): string | undefined {
    return this.name;
  }

  /** The heartbeat interval in use (known once started when it comes from the registry). */
  get heartbeatMs(): number {
    return this.configuredHeartbeatMs ?? this.intervalMs;
  }

  /** Registers the card and starts heartbeating; rejects (and stays stopped) when registration fails. */
  start(): Promise<void> {
    if (this.state === 'starting' && this.starting) return this.starting;
    if (this.state === 'running') return Promise.resolve();
    if (this.state === 'stopping') {
      return Promise.reject(new ValueError('RegistryMembership cannot start while it is stopping'));
    }
    this.state = 'starting';
    const controller = new AbortController();
    this.controller = controller;
    this.starting = this.join(controller.signal).then(
      () => {
        this.starting = undefined;
        // stop() may have come first; it then owns the cleanup.
        if (this.state !== 'starting') return;
        this.state = 'running';
        this.schedule();
      },
      (error: unknown) => {
        this.starting = undefined;
        if (this.state === 'starting') {
          this.state = 'idle';
          this.controller = undefined;
        }
        throw error;
      },
    );
    return this.starting;
  }

  /** Stops heartbeating and deregisters, best effort (failures go to `onError`). Idempotent; never rejects. */
  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (this.state === 'idle') return Promise.resolve();
    this.state = 'stopping';
    clearTimeout(this.timer);
    this.timer = undefined;
    const controller = this.controller;
    this.stopping = this.leave(controller).finally(() => {
      this.stopping = undefined;
      this.controller = undefined;
      this.name = undefined;
      this.state = 'idle';
    });
    return this.stopping;
  }

  private async leave(controller: AbortController | undefined): Promise<void> {
    // An unfinished start or heartbeat is abandoned first: its outcome no longer matters.
    controller?.abort();
    await Promise.allSettled([this.starting, this.tick].filter((p) => p !== undefined));
    const name = this.name;
    if (name === undefined) return;
    try {
      await this.client.deregister(name);
    } catch (error) {
      // Already gone (expired, or the registry restarted) is what deregistering wanted.
      if (!(error instanceof AgentError && error.code === 'NOT_FOUND')) this.report(error);
    }
  }

  /**
   * Registers the current card. An entry of that name still live is most likely ours from before
   * a restart of this agent: it is replaced. A replace that finds nothing of ours means the entry
   * expired meanwhile (register once more) or belongs to someone else (the 409 stands).
   */
  private async join(signal: AbortSignal): Promise<void> {
    const card = this.card();
    let entry: RegistryEntryView;
    try {
      entry = await this.client.register(card, { signal });
    } catch (error) {
      if (!isCode(error, 'ALREADY_EXISTS')) throw error;
      try {
        entry = await this.client.replace(card, { signal });
      } catch (replaceError) {
        if (!isCode(replaceError, 'NOT_FOUND')) throw replaceError;
        try {
          entry = await this.client.register(card, { signal });
        } catch (retryError) {
          throw isCode(retryError, 'ALREADY_EXISTS') ? error : retryError;
        }
      }
    }
    this.name = entry.name;
    this.intervalMs = intervalFor(entry);
  }

  private schedule(): void {
    if (this.state !== 'running') return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.tick = this.beat().finally(() => {
        this.tick = undefined;
        this.schedule();
      });
    }, this.heartbeatMs);
    // A registration must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  /** One heartbeat; never rejects. */
  private async beat(): Promise<void> {
    const signal = this.controller?.signal;
    const name = this.name;
    if (!signal || signal.aborted || name === undefined) return;
    try {
      await this.client.heartbeat(name, { signal });
      return;
    } catch (error) {
      if (signal.aborted) return;
      if (!isCode(error, 'NOT_FOUND')) {
        this.report(error);
        return;
      }
    }
    try {
      await this.join(signal);
    } catch (error) {
      if (!signal.aborted) this.report(error);
    }
  }

  private report(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // A throwing onError must not become an unhandled rejection of the timer.
    }
  }
}

function isCode(error: unknown, code: string): boolean {
  return error instanceof AgentError && error.code === code;
}

/** A third of the lifetime the registry gave the entry, so two heartbeats may fail before it expires. */
function intervalFor(entry: RegistryEntryView): number {
  const ttl = Date.parse(entry.expires_at) - Date.parse(entry.heartbeat_at);
  if (!Number.isFinite(ttl) || ttl <= 0) return DEFAULT_HEARTBEAT_MS;
  return Math.max(1, Math.floor(ttl / 3));
}

function defaultOnError(error: unknown): void {
  getDefaultLogger().warn({ err: error }, 'registry membership: a call to the registry failed');
}
