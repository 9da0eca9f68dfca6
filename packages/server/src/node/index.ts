// @agent/server/node: the one node:http(s) host and the HTTP helpers every node-hosted wire adapter uses.
export {
  NodeHost,
  CLIENT_GONE,
  type NodeHostOptions,
  type ConnectionLimits,
  DEFAULT_CONNECTION_LIMITS,
  type RequestListener,
  type UpgradeListener,
} from './node-host.js';
export { RequestScope, AbortWatch, ABORTED, type AbortListener } from '../request-scope.js';
export { NodeRequest } from './node-request.js';
export {
  readJsonBody,
  parseJsonBody,
  MalformedJsonError,
  answerAfterDrain,
  unsupportedEncoding,
  payloadTooLarge,
  type BodyCallback,
} from './json-body.js';
export { writeJson, writeError, errorAnswer, type ErrorAnswer } from './write-json.js';
export {
  RouteTable,
  routeKey,
  isRouteMiss,
  requestPath,
  type Routed,
  type RouteMiss,
} from './route-table.js';
export {
  corkForTurn,
  drained,
  encodeSseFrame,
  SSE_CONTENT_TYPE,
  StreamPacer,
  FRAMES_PER_TURN,
  writeFrame,
} from './sse-frame.js';
export { EventStreamParser, type SseFrame } from './sse-parser.js';
export { CorsPolicy, DEFAULT_EXPOSED_HEADERS, type CorsOptions } from './cors.js';
