import path from 'node:path';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';

/** The `.proto` sources shipped with the package (reflection needs them; ts-proto code cannot serve it). */
export const PROTO_DIR = path.resolve(__dirname, '..', 'proto');
export const AGENT_PROTO = 'agent/v1/agent.proto';
export const AGENT_SERVICE_NAME = 'agent.v1.AgentService';

/** A proto-loader package definition of the served services, for @grpc/reflection. */
export function reflectionPackageDefinition(includeHealth: boolean): PackageDefinition {
  const files = includeHealth ? [AGENT_PROTO, healthProtoPath] : [AGENT_PROTO];
  return loadSync(files, { includeDirs: [PROTO_DIR, path.dirname(healthProtoPath)] });
}
