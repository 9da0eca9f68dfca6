// Public API of @agent/transport-sse: anything exported here is public.
export { SSETransport } from './sse-transport.js';
export { DEFAULTS as SSE_DEFAULTS, type SSETransportOptions } from './options.js';
// The `cors` option's shape lives with the host that applies it (the HTTP transport takes the same).
export type { CorsOptions } from '@agent/server/node';
export {
  JSON_RPC_VERSION,
  UNARY_METHODS,
  STREAM_METHOD,
  RESUBSCRIBE_METHOD,
  STREAMING_METHODS,
  OPERATION_METHODS,
  ERROR_EVENT,
  HEARTBEAT_FRAME,
  fromJsonRpcError,
  toJsonRpcError,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcErrorObject,
  type JsonRpcErrorData,
  type JsonRpcSuccess,
  type JsonRpcFailure,
  type JsonRpcResponse,
} from './codec.js';
