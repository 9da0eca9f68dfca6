import type { ServerResponse } from 'node:http';
import { AgentError, InternalError, retryAfterMsOf } from '@agent/core';

const CONTENT_TYPE = 'application/json; charset=utf-8';
const UNSERIALIZABLE = JSON.stringify({
  error: { code: 'INTERNAL', message: 'The response could not be serialized as JSON' },
});

/**
 * Writes a JSON response: the body is stringified once and sent with its length in one `end`.
 * Never throws: a body JSON cannot represent (a cycle, a BigInt) becomes a 500 INTERNAL.
 */
export function writeJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Readonly<Record<string, string>>,
): void {
  if (res.headersSent || res.destroyed) return;
  let payload: string;
  let code = status;
  try {
    payload = JSON.stringify(body);
  } catch {
    code = 500;
    payload = UNSERIALIZABLE;
  }
  const head: Record<string, string | number> = {
    'content-type': CONTENT_TYPE,
    'content-length': Buffer.byteLength(payload),
  };
  if (headers && code === status) Object.assign(head, headers);
  res.writeHead(code, head);
  res.end(payload);
}

/** The status and JSON error body of every answer ≥ 400: `{"error": {code, message, data?}}`. */
export interface ErrorAnswer {
  status: number;
  body: { error: ReturnType<AgentError['toJSON']> };
  /** `Retry-After` (whole seconds, at least 1) for an error that asks its caller to wait (an overload, a rate limit). */
  headers: Record<string, string>;
}

/**
 * The HTTP form of an error that already went through the pipeline's error policy. Anything else
 * reaching here is a bug in a wire adapter: it is answered as a bare INTERNAL, never with its message.
 */
export function errorAnswer(error: unknown): ErrorAnswer {
  const agentError = error instanceof AgentError ? error : new InternalError();
  const retryAfterMs = retryAfterMsOf(agentError);
  // HTTP counts Retry-After in whole seconds; rounding up never invites a caller back too early.
  const headers: Record<string, string> =
    retryAfterMs === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) };
  return { status: agentError.httpStatus, body: { error: agentError.toJSON() }, headers };
}

/** Writes the JSON error body for `error`. */
export function writeError(
  res: ServerResponse,
  error: unknown,
  headers?: Readonly<Record<string, string>>,
): void {
  const answer = errorAnswer(error);
  writeJson(res, answer.status, answer.body, { ...answer.headers, ...headers });
}
