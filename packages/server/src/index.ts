// Public API of @agent/server: the server pipeline every transport calls, and the facade pieces they share.
export {
  ServerPipeline,
  ServerCall,
  SHUTDOWN_REASON,
  DEFAULT_STREAM_STALL_MS,
  resolveTenant,
  type CallOwner,
  settlesWithin,
  type ServerPipelineOptions,
  type OpenOptions,
  type ServerState,
} from './pipeline.js';
export {
  TENANT_HEADER,
  requestedTenant,
  type RequestInfo,
  type HeaderBag,
  type OperationName,
} from './request.js';
export { MAX_TENANT_LENGTH, TENANT_NAME_PATTERN, TENANT_RULE, isTenantName } from './tenant.js';
export { LIVE_TAIL, STREAM_WINDOW } from './task-ledger.js';
export { EventFeed, type FeedSource, type FeedHooks, type FeedOutcome } from './event-feed.js';
export { RateLimiter, type RateLimitOptions } from './rate-limit.js';
export {
  PipelineMetrics,
  DEFAULT_DURATION_BUCKETS,
  type PipelineMetricsOptions,
  type RequestSample,
  type QueueSource,
} from './metrics/pipeline-metrics.js';
export { PROMETHEUS_CONTENT_TYPE } from './metrics/exposition.js';
export type { MeterLike, InstrumentOptions, MetricAttributes } from './metrics/otel.js';
export { REQUEST_LOG_MESSAGE } from './request-log.js';
export { TASKS_LIMIT_NAME, concurrencyLimitOption, rateLimiterOption } from './limits.js';
export {
  CALLER_TASKS_LIMIT_NAME,
  CallerTaskLimit,
  callerLimitOption,
  type CallerTaskLimitOptions,
} from './caller-limit.js';
// The outbound and task limit primitive lives in @agent/core (the runtime uses it too); re-exported here.
export { ConcurrencyLimit, retryAfterMsOf, type ConcurrencyLimitOptions } from '@agent/core';
export { TaskLedger, LiveTask, ledgerFor, type TaskLookup } from './task-ledger.js';
export { MAX_PAGE_SIZE } from './task-queries.js';
export { TaskEventStream, failedEnding, MISSING_FINAL_MESSAGE, type StreamRuleHooks } from './stream-rule.js';
export { withSecuritySchemes } from './card.js';
// The logger and the error policy live in @agent/core (the runtime uses them too); re-exported for adapters.
export {
  ANONYMOUS_PRINCIPAL,
  createJsonLogger,
  getDefaultLogger,
  silentLogger,
  type Logger,
  type LogLevel,
} from '@agent/core';
export { toWireError, INTERNAL_MESSAGE, type ErrorSite } from '@agent/core/internal';
export {
  checkOptionNames,
  lifecycleSettings,
  tenantHeaders,
  tenantOption,
  TRANSPORT_OPTION_NAMES,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_STOP_GRACE_MS,
  DEFAULT_MAX_BODY_BYTES,
  type TransportOptions,
  type LifecycleSettings,
} from './transport-options.js';
export { TransportBase, type TransportDefinition, type Listening } from './transport-base.js';
export {
  clientCredentialsFrom,
  authenticateClient,
  describeClientAuth,
  type ClientAuthOptions,
} from './client-auth.js';
export { isLocalHost, isValidPort, formatHostPort, withPort } from './local-url.js';
