// Public API of @agent/transport-memory: anything exported here is public.
export {
  RuntimeTransport,
  DEFAULT_AGENT_NAME,
  type RuntimeTransportOptions,
  type RegistrableAgent,
  type RegisterAgentOptions,
  type RegisteredAgent,
} from './runtime-transport.js';
export { RUNTIME_SCHEME, runtimeUrl } from './agent-address.js';
