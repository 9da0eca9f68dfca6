// Public API of @agent/transport-grpc: anything exported here is public.
export { GRPCTransport } from './grpc-transport.js';
export type { GRPCTransportOptions } from './options.js';
export { checkHealth, type HealthStatus, type HealthCheckOptions } from './health-check.js';
export { ERROR_CODE_METADATA, ERROR_DATA_METADATA } from './grpc-errors.js';
export { AGENT_PROTO, AGENT_SERVICE_NAME, PROTO_DIR } from './proto-files.js';
// The generated service definition and client, for raw grpc-js use (benchmarks, other servers).
export { AgentServiceService, AgentServiceClient, type AgentServiceServer } from './gen/agent/v1/agent.js';
