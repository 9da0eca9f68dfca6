// Public API of @agent/transport-ws: anything exported here is public.
export { WebSocketTransport, type SendTaskStreamOptions } from './websocket-transport.js';
export type { WebSocketTransportOptions } from './options.js';
export { SlowConsumerError } from './client-stream.js';
// The frame shapes, for peers (browsers, other languages) that speak the protocol directly.
export type {
  TaskSendFrame,
  AgentCardFrame,
  TaskCancelFrame,
  TaskGetFrame,
  TaskListFrame,
  TaskSubscribeFrame,
  CallAbortFrame,
  RequestFrame,
  EventFrame,
  ResultFrame,
  ErrorFrame,
  ResponseFrame,
} from './codec.js';
