import type { ConcurrencyLimit, ReleaseSlot, TransportKind } from '@agent/core';
import type { PipelineMetrics } from './metrics/pipeline-metrics.js';
import type { RateLimiter } from './rate-limit.js';
import type { ServerCall } from './pipeline.js';
import type { LiveTask } from './task-ledger.js';

/** A task run a pipeline started: its slot of `maxConcurrentTasks`, given back when it ends. */
export interface RunTicket {
  release: ReleaseSlot | undefined;
}

/**
 * What a call and a run must pass before the pipeline does any work for them: the caller's rate
 * limit, and a slot of the concurrent-task limit. Both refuse at once (no queue that could grow).
 */
export class Admission {
  constructor(
    private readonly transport: TransportKind,
    private readonly taskLimit: ConcurrencyLimit | undefined,
    private readonly rateLimiter: RateLimiter | undefined,
    private readonly metrics: PipelineMetrics | undefined,
  ) {}

  /**
   * The rate limit: one token of the caller's principal. Anonymous callers are told apart by their
   * address, so one of them cannot use up everybody's tokens.
   */
  admit(call: ServerCall): void {
    const limiter = this.rateLimiter;
    if (!limiter) return;
    const principal = call.security?.principalId;
    limiter.admit(
      principal === undefined ? `anonymous@${call.request.remoteAddress ?? ''}` : `principal:${principal}`,
    );
  }

  /**
   * Refuses a new task at once when every slot is taken, before its id is even looked up: an
   * overloaded server answers without touching the store. (A resubmission is refused too; its
   * caller retries like any other.)
   */
  refuseWhenFull(): void {
    const limit = this.taskLimit;
    if (limit && limit.available === 0) throw limit.overloaded();
  }

  /** Takes a slot for a run the pipeline is about to start (the overload error when there is none). */
  startRun(): RunTicket {
    return { release: this.taskLimit?.acquire() };
  }

  /** A slot taken for a run that did not start (the task was running already). */
  dropRun(ticket: RunTicket): void {
    ticket.release?.();
  }

  /** A started run ended: its slot goes back, its final state is counted. */
  endRun(ticket: RunTicket, live: LiveTask): void {
    ticket.release?.();
    this.metrics?.taskFinished(this.transport, live.task.state);
  }
}
