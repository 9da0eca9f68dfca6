import { AgentError, errorCodeForGrpcStatus, isErrorCode, retryAfterMsOf } from '@agent/core';
import { Metadata, status as grpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';

/** Trailing metadata key that carries the error table code. */
export const ERROR_CODE_METADATA = 'agent-error-code';
/** Trailing metadata key that carries `error.data` as JSON, when it is small enough. */
export const ERROR_DATA_METADATA = 'agent-error-data';
/** Trailing metadata key that tells a refused caller how long to wait (an overload, a rate limit), in ms. */
export const RETRY_AFTER_METADATA = 'retry-after-ms';
// Trailers share the peer's header-size limit (8 KiB by default); larger data is dropped, not truncated.
const MAX_ERROR_DATA_BYTES = 4096;

/**
 * The status a server call ends with for an error the pipeline's error policy has passed: the table's
 * gRPC status, the code and `data` (e.g. `error_id`) as trailers.
 */
export function toStatusObject(
  agentError: AgentError,
): Partial<StatusObject> & { code: number; details: string; metadata: Metadata } {
  const metadata = new Metadata();
  metadata.set(ERROR_CODE_METADATA, agentError.code);
  const retryAfterMs = retryAfterMsOf(agentError);
  if (retryAfterMs !== undefined) metadata.set(RETRY_AFTER_METADATA, String(retryAfterMs));
  if (agentError.data !== undefined) {
    try {
      const json = JSON.stringify(agentError.data);
      if (json !== undefined && Buffer.byteLength(json) <= MAX_ERROR_DATA_BYTES)
        metadata.set(ERROR_DATA_METADATA, json);
    } catch {
      // Data that cannot be serialized stays on the server; code and message still travel.
    }
  }
  // grpc-message is a single header line.
  const details = agentError.message.replace(/[\r\n]+/g, ' ');
  return { code: agentError.grpcStatus, details, metadata };
}

function firstString(metadata: Metadata | undefined, key: string): string | undefined {
  const value = metadata?.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === 'number';
}

/**
 * Rebuilds the typed error a server sent: the `agent-error-code` trailer when present (our servers),
 * otherwise the table entry for the gRPC status (any other server, or a failure below the RPC layer).
 */
export function fromServiceError(error: unknown): AgentError {
  if (error instanceof AgentError || !isServiceError(error)) return AgentError.from(error);
  const trailerCode = firstString(error.metadata, ERROR_CODE_METADATA);
  const code = isErrorCode(trailerCode) ? trailerCode : errorCodeForGrpcStatus(error.code);
  let data: unknown;
  const rawData = firstString(error.metadata, ERROR_DATA_METADATA);
  if (rawData !== undefined) {
    try {
      data = JSON.parse(rawData);
    } catch {
      data = undefined;
    }
  }
  const message = error.details || `gRPC call failed with status ${grpcStatus[error.code] ?? error.code}`;
  const rebuilt = AgentError.fromJSON(data === undefined ? { code, message } : { code, message, data });
  // Keep the transport-level error reachable for debugging without exposing it in the message.
  Object.defineProperty(rebuilt, 'cause', {
    value: error,
    enumerable: false,
    configurable: true,
    writable: true,
  });
  return rebuilt;
}
