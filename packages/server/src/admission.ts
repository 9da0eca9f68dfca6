import type { ConcurrencyLimit, ReleaseSlot, TransportKind } from '@agent/core';
import type { CallerTaskLimit } from './caller-limit.js';
import type { PipelineMetrics } from './metrics/pipeline-metrics.js';
import type { RateLimiter } from './rate-limit.js';
import type { ServerCall } from './pipeline.js';
import type { LiveTask } from './task-ledger.js';

/** A task run a pipeline started: its slot of `maxConcurrentTasks`, given back when it ends. */
export interface RunTicket {
  release: ReleaseSlot | undefined;
  /** Its slot of the caller's share (`maxConcurrentTasksPerCaller`). */
  releaseCaller: ReleaseSlot | undefined;
}

/**
 * Who a limit counts a call against: its principal, or, for an anonymous caller, its address (so
 * one anonymous caller cannot use up what every anonymous caller shares). The tenant is left out
 * on purpose: a caller could otherwise multiply its share by naming other tenants.
 */
export function callerKeyOf(call: ServerCall): string {
  const principal = call.security?.principalId;
  return principal === undefined ? `anonymous@${call.request.remoteAddress ?? ''}` : `principal:${principal}`;
}

/**
 * What a call and a run must pass before the pipeline does any work for them: the caller's rate
 * limit, a slot of the caller's share of runs, and a slot of the concurrent-task limit. All refuse
 * at once (no queue that could grow).
 */
export class Admission {
  constructor(
    private readonly transport: TransportKind,
    private readonly taskLimit: ConcurrencyLimit | undefined,
    private readonly rateLimiter: RateLimiter | undefined,
    private readonly metrics: PipelineMetrics | undefined,
    private readonly callerLimit: CallerTaskLimit | undefined,
  ) {}

  /**
   * The rate limit: one token of the caller's principal. Anonymous callers are told apart by their
   * address, so one of them cannot use up everybody's tokens.
   */
  admit(call: ServerCall): void {
    this.rateLimiter?.admit(callerKeyOf(call));
  }

  /**
   * Refuses a new task at once when every slot is taken, before its id is even looked up: an
   * overloaded server answers without touching the store. (A resubmission is refused too; its
   * caller retries like any other.)
   */
  refuseWhenFull(call: ServerCall): void {
    const callers = this.callerLimit;
    if (callers?.full(callerKeyOf(call))) throw callers.overloaded();
    const limit = this.taskLimit;
    if (limit && limit.available === 0) throw limit.overloaded();
  }

  /**
   * Takes the slots for a run the pipeline is about to start for `call`'s caller: of its share,
   * then of the shared limit (the overload error when either has none; nothing is kept then).
   */
  startRun(call: ServerCall): RunTicket {
    const releaseCaller = this.callerLimit?.acquire(callerKeyOf(call));
    try {
      return { release: this.taskLimit?.acquire(), releaseCaller };
    } catch (error) {
      releaseCaller?.();
      throw error;
    }
  }

  /** Slots taken for a run that did not start (the task was running already). */
  dropRun(ticket: RunTicket): void {
    ticket.release?.();
    ticket.releaseCaller?.();
  }

  /** A started run ended: its slots go back, its final state is counted. */
  endRun(ticket: RunTicket, live: LiveTask): void {
    this.dropRun(ticket);
    this.metrics?.taskFinished(this.transport, live.task.state);
  }
}
