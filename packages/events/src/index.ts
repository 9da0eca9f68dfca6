// Public API of @agent/events: anything exported here is public.
export {
  RunEvent,
  RUN_EVENT_VERSION,
  RUN_EVENT_TYPES,
  PROMOTED_ID_FIELDS,
  isRunEventType,
  severityOf,
  type RunEventType,
  type RunEventOf,
  type RunEventSeverity,
  type RunEventEnvelope,
  type FromTaskEventOptions,
  type PolicyDecisionData,
  type LLMUsageData,
  type BasePayload,
  type TaskStatusPayload,
  type TaskArtifactPayload,
  type LLMStreamPayload,
  type TaskProgressPayload,
  type ErrorPayload,
  type ContextPreparedPayload,
  type LLMCallPayload,
  type BudgetPayload,
  type ActionPayload,
  type ActionPolicyPayload,
  type ApprovalPayload,
  type TaskStatusRunEvent,
  type TaskArtifactRunEvent,
  type TaskProgressRunEvent,
  type TaskErrorRunEvent,
  type LLMStreamRunEvent,
  type ContextPreparedRunEvent,
  type LLMCallStartedRunEvent,
  type LLMCallCompletedRunEvent,
  type BudgetWarningRunEvent,
  type BudgetExceededRunEvent,
  type ActionRequestedRunEvent,
  type ActionPolicyRunEvent,
  type ApprovalRequiredRunEvent,
  type ApprovalDecidedRunEvent,
  type ActionStartedRunEvent,
  type ActionCompletedRunEvent,
  type ActionDeniedRunEvent,
  type ActionFailedRunEvent,
} from './run-event.js';
export { type RunContextInput, type RunIds } from './run-context.js';
export {
  InMemoryEventSink,
  FanOutEventSink,
  SequencedEventSink,
  safeEmit,
  type EventSink,
  type InMemoryEventSinkOptions,
  type FanOutEventSinkOptions,
  type SinkErrorHandler,
} from './event-sink.js';
export {
  ContextManifest,
  type ContextManifestData,
  type ContextManifestInit,
  type ContextItem,
} from './context-manifest.js';
export {
  RunReport,
  type RunReportData,
  type RunReportDictOptions,
  type ActionRecord,
  type ActionStatus,
  type ApprovalCheckpoint,
  type LLMMetrics,
  type ModelMetrics,
  type BudgetRecord,
  type ErrorRecord,
} from './run-report.js';
export { RunRecorder, type RunRecorderOptions, type ToReportOptions } from './run-recorder.js';
export {
  RedactionPolicy,
  REDACTED,
  DEFAULT_SENSITIVE_KEYS,
  normalizeKey,
  type RedactionPolicyOptions,
} from './redaction.js';
export {
  DEFAULT_OWNER,
  type RunStore,
  type TaskRecord,
  type TaskOwner,
  type SaveTaskSnapshotOptions,
  type TaskRecordQuery,
  type TaskPageQuery,
  type TaskPage,
  type TaskEventQuery,
  type StoredTaskEvent,
  type TaskWrite,
  type RunReportQuery,
} from './store/run-store.js';
export {
  coordinationOf,
  type TaskCoordination,
  type CoordinatedStore,
  type CancelRequest,
  type TaskPlacement,
  type TaskWatch,
} from './store/task-coordination.js';
export {
  type ApprovalStore,
  type ApprovalRecord,
  type ApprovalState,
  type ApprovalQuery,
  type ApprovalDecisionInput,
  type CreateApprovalOptions,
} from './approvals/approval-store.js';
export { actionHash, canonicalJson } from './approvals/action-hash.js';
export {
  InMemoryApprovalStore,
  DEFAULT_MAX_APPROVAL_RECORDS,
  type InMemoryApprovalStoreOptions,
} from './approvals/in-memory-approval-store.js';
export {
  SqliteApprovalStore,
  APPROVAL_SCHEMA_VERSION,
  DEFAULT_APPROVAL_POLL_INTERVAL_MS,
  type SqliteApprovalStoreOptions,
} from './approvals/sqlite-approval-store.js';
export {
  InMemoryRunStore,
  type InMemoryRunStoreOptions,
  type RunStoreOptions,
} from './store/in-memory-run-store.js';
export {
  SqliteRunStore,
  SQLITE_SCHEMA_VERSION,
  type SqliteRunStoreOptions,
} from './store/sqlite-run-store.js';
export {
  type RegistryStore,
  type RegistryEntry,
  type RegistrationResult,
  type RegistryEntryQuery,
  type RegistryPage,
  type CreateEntryOptions,
} from './registry/registry-store.js';
export {
  InMemoryRegistryStore,
  type InMemoryRegistryStoreOptions,
} from './registry/in-memory-registry-store.js';
export {
  SqliteRegistryStore,
  REGISTRY_SCHEMA_VERSION,
  type SqliteRegistryStoreOptions,
} from './registry/sqlite-registry-store.js';
export { RunReplay } from './run-replay.js';
export {
  assertRunEvents,
  assertNoDeniedActions,
  assertBudgetUnder,
  type RunEventsMatchMode,
  type RunEventSource,
  type AssertRunEventsOptions,
  type BudgetLimits,
} from './assertions.js';
export {
  LocalTraceTelemetry,
  type LocalTraceTelemetryOptions,
  type TraceExport,
} from './telemetry/local-trace-telemetry.js';
export {
  ATTR as SPAN_ATTRIBUTES,
  OPERATION as GEN_AI_OPERATIONS,
  type SpanData,
  type SpanEventData,
  type SpanListener,
  type SpanAttributes,
  type SpanAttributeValue,
  type SpanKindName,
  type SpanStatusName,
} from './telemetry/span-data.js';
export {
  OpenTelemetryBridge,
  type OpenTelemetryBridgeOptions,
  type OtelSpanLike,
  type OtelTracerLike,
} from './telemetry/opentelemetry-bridge.js';
export { InMemoryStorage, type Storage } from './store/storage.js';
export {
  StreamingEventSink,
  type StreamingEventSinkOptions,
  type SubscribeOptions,
} from './streaming-event-sink.js';
export { JsonlEventSink, readJsonlEvents, type JsonlEventSinkOptions } from './jsonl-event-sink.js';
