import type { AgentError, Logger, SecurityContextLike, TransportKind } from '@agent/core';
import type { PipelineMetrics } from './metrics/pipeline-metrics.js';
import type { ServerCall } from './pipeline.js';
import type { RequestInfo } from './request.js';
import { logRequest } from './request-log.js';

/** The request log line and the metrics of each request a pipeline answers or refuses. */
export class RequestObserver {
  constructor(
    private readonly transport: TransportKind,
    private readonly logger: Logger,
    private readonly logRequests: boolean,
    private readonly metrics: PipelineMetrics | undefined,
  ) {}

  /** One answered request (a stream: when it ended, with its event count). */
  observe(
    call: ServerCall,
    operation: string,
    error: AgentError | undefined,
    stream?: { events: number; detached: boolean },
  ): void {
    if (!this.logRequests && !this.metrics) return;
    const durationMs = performance.now() - call.startedAt;
    const status = error ? error.code : 'ok';
    this.metrics?.request({
      operation,
      transport: this.transport,
      outcome: status,
      seconds: durationMs / 1000,
    });
    if (!this.logRequests) return;
    logRequest(this.logger, {
      operation,
      transport: this.transport,
      status,
      durationMs,
      request: call.request,
      principalId: call.owner.principal_id,
      tenant: call.tenant,
      taskId: call.taskId,
      ...(stream ? { events: stream.events, detached: stream.detached } : {}),
    });
  }

  /** A request refused while it was opened (stopping, authentication, tenant): no call exists yet. */
  refusal(
    request: RequestInfo,
    startedAt: number,
    error: AgentError,
    security: SecurityContextLike | undefined,
  ): void {
    if (!this.logRequests && !this.metrics) return;
    const durationMs = performance.now() - startedAt;
    this.metrics?.request({
      operation: 'open',
      transport: this.transport,
      outcome: error.code,
      seconds: durationMs / 1000,
    });
    if (!this.logRequests) return;
    logRequest(this.logger, {
      operation: 'open',
      transport: this.transport,
      status: error.code,
      durationMs,
      request,
      principalId: security?.principalId,
    });
  }
}
