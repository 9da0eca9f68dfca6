import { AgentError, InternalError } from '@agent/core';
import type { EndpointResponse } from './backend.js';

/**
 * The JSON error body of every status ≥ 400 (DESIGN.md §3): `{"error": {code, message, data?}}`,
 * the status taken from core's table. An error that is not an AgentError is an unexpected bug in a
 * handler: its message stays on the server, the caller gets a plain INTERNAL.
 */
export function errorResponse(error: unknown, headers?: Readonly<Record<string, string>>): EndpointResponse {
  const agentError = error instanceof AgentError ? error : new InternalError(undefined, { cause: error });
  const response: EndpointResponse = { status: agentError.httpStatus, body: { error: agentError.toJSON() } };
  if (headers) response.headers = headers;
  return response;
}
