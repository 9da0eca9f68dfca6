// Public API of @agent/transport-memory: anything exported here is public.
export { RuntimeTransport, DEFAULT_AGENT_NAME } from './runtime-transport.js';
export type { RuntimeTransportOptions } from './options.js';
export type { RegistrableAgent, RegisterAgentOptions, RegisteredAgent } from './agent-registry.js';
export { RUNTIME_SCHEME, runtimeUrl } from './agent-address.js';
