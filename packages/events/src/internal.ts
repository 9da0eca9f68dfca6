/**
 * `@agent/events/internal`: plumbing shared by the store backends (the SQLite and in-memory stores
 * here, the PostgreSQL stores of `@agent/store-postgres`): argument checks, row building, page
 * tokens and approval waiters, so every backend applies the same rules and messages; and the live
 * task tracing `@agent/runtime` drives, the check of the recorder option it passes on, the way it
 * records its own events and the queue its task registry forgets finished tasks by. Not part of
 * the public API and not semver-stable: it may change in any release.
 */
export {
  checkId,
  clockOf,
  eventQueryOf,
  eventTextsOf,
  isTerminal,
  normalizeTimestamp,
  ownerOf,
  pageQueryOf,
  pageTokenOf,
  reportQueryOf,
  reportTextRowOf,
  retentionOf,
  taskQueryOf,
  taskNotFound,
  taskRowOf,
  taskWriteRowsOf,
  type NormalizedEventQuery,
  type NormalizedPageQuery,
  type NormalizedReportQuery,
  type NormalizedTaskQuery,
  type PageCursor,
  type ReportTextRow,
  type TaskColumns,
  type TaskRow,
  type TaskWriteRow,
} from './store/records.js';
export {
  createOptionsOf,
  entryOf,
  isoAt,
  nameOf,
  pageOf,
  registrantOf,
  registryQueryOf,
  renewalAt,
  storedCardOf,
  tenantOf,
  ttlOf,
  type EntryFields,
  type NormalizedRegistryQuery,
} from './registry/entries.js';
export {
  approvalNotFound,
  approvalQueryOf,
  approvalRecordOf,
  approverOf,
  checkDecidable,
  decisionOf,
  newApprovalOf,
  requestIdOf,
  storedApprovalOf,
  withdrawReasonOf,
  type NormalizedApprovalQuery,
  type StoredApproval,
} from './approvals/approval-records.js';
export { DecisionWaiters, type WaitedRequest } from './approvals/decision-waiters.js';
export { InsertionQueue } from './store/insertion-queue.js';
export { reportOfStoredText } from './store/stored-report.js';
export {
  TaskTrace,
  TaskTracing,
  type DelegationTrace,
  type ModelCallResult,
  type ModelCallTrace,
  type OutgoingTrace,
  type TaskTraceStart,
  type TaskTracingOptions,
  type WorkTrace,
} from './telemetry/task-tracing.js';
export { DEFAULT_MAX_STREAMED_EVENTS, maxStreamedEventsOf, recordTaskEventOnly } from './run-recorder.js';
