// Public API of @agent/a2a: anything exported here is public.
export { A2AServer, type A2AServerOptions } from './server/a2a-server.js';
export { A2ATransport } from './client/a2a-transport.js';
export type { A2ATransportOptions } from './client/options.js';
export type { A2ABinding } from './client/bindings.js';
export {
  PushNotifier,
  DEFAULT_PUSH_DELIVERY_LIMIT,
  PUSH_DELIVERY_LIMIT_NAME,
  type PushAttempt,
  type PushNotifierDeps,
  type PushOptions,
} from './push/push-notifier.js';
export { toA2APushConfig, type A2APushConfig, type PushConfig } from './push/push-config.js';
export type { PushOwner } from './push/push-config-store.js';
export { NOTIFICATION_TOKEN_HEADER, PUSH_CONTENT_TYPE } from './push/webhook-sender.js';
export {
  A2A_PROTOCOL_VERSION,
  contextIdOf,
  endsA2AStream,
  fromA2AArtifact,
  fromA2AMessage,
  fromA2APart,
  fromA2AState,
  fromA2ATask,
  readRequestObject,
  toA2AArtifact,
  toA2AMessage,
  toA2APart,
  toA2AState,
  toA2AStatus,
  toA2ATask,
  type A2AArtifact,
  type A2AArtifactUpdate,
  type A2AMessage,
  type A2APart,
  type A2AStatusUpdate,
  type A2AStreamResponse,
  type A2ATask,
  type A2ATaskState,
  type A2ATaskStatus,
  type DecodedMessage,
  type ToA2ATaskOptions,
} from './protojson.js';
export { A2AStreamDecoder, A2AStreamEncoder } from './stream-codec.js';
export {
  A2A_ERRORS,
  A2A_ERROR_DOMAIN,
  a2aError,
  a2aReasonOf,
  fromA2AError,
  jsonRpcCodeOf,
  toJsonRpcError,
  toRestError,
  type A2AErrorReason,
} from './a2a-errors.js';
export {
  AGENT_CARD_PATH,
  a2aInterfacesOf,
  fromA2AAgentCard,
  toA2AAgentCard,
  type A2AAgentCard,
  type A2AAgentInterface,
  type A2AAgentSkill,
  type A2ACardFields,
  type A2AProtocolBinding,
  type ToA2AAgentCardOptions,
} from './agent-card.js';
export { A2A_AGENT_CARD_SCHEMA, isA2ACard, validateA2ACard } from './card-schema.js';
export { A2A_VERSION_HEADER, checkVersion, requestedVersion } from './version.js';
