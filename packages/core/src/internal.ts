/**
 * `@agent/core/internal`: plumbing shared by the sibling `@agent/*` packages (transports, server,
 * runtime, client). Not part of the public API and not semver-stable: it may change in any release.
 */
export {
  isRecord,
  parseCancelRequest,
  finalStatusEvent,
  failedEnding,
  readTaskPayload,
  dispatchOperation,
  type CancelRequest,
} from './operations.js';
export {
  parseTransportUrl,
  normalizeHeaders,
  httpEndpointUrl,
  type TransportAddress,
} from './transport-url.js';
export { isComponentDescriptor, describeComponent } from './descriptor.js';
export { isoOfMs, timeOrderedHex } from './ids.js';
export { raceAbort, sleep, type AbortErrorFactory } from './abort.js';
export { numberOption, type NumberRule } from './option-number.js';
export { parseRetryAfterHeader, withRetryAfterHeader } from './retry-after-header.js';
export { checkOptionNames, optionNames } from './option-names.js';
export { isLogger } from './logger.js';
export { toWireError, INTERNAL_MESSAGE, type ErrorSite } from './error-policy.js';
export { copyPlainData, copyWith, snapshot } from './clone.js';
export { handOverEvents, handsOverEvents } from './handed-over.js';
export { offerPush, pushOf, type AttachReceiver, type EventReceiver } from './event-push.js';
export { ReleasingMap } from './releasing-map.js';
export { ownerKey } from './owner-key.js';
export { retryAfterMsOption } from './concurrency-limit.js';
export { parseTraceparent, formatTraceparent, traceIdOf, type TraceParent } from './trace-context.js';
export {
  outgoingTraceHeaders,
  withTraceHeaders,
  type TraceHeaders,
  type TraceOptions,
} from './trace-propagation.js';
export { buildSchemas, errorBodySchema } from './schemas.js';
export { jsonLimitError, DEFAULT_JSON_LIMITS, type JsonLimits } from './json-limits.js';
