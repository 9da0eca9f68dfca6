import type { TransportKind } from './contracts.js';
import { AgentError, InternalError } from './errors.js';
import { newId } from './ids.js';
import type { Logger } from './logger.js';

/** Where an error happened, for the log line. */
export interface ErrorSite {
  /** The transport that carried the request; absent for errors inside a task run. */
  transport?: TransportKind;
  operation: string;
  principalId?: string;
  taskId?: string;
}

export const INTERNAL_MESSAGE = 'Internal error';

/**
 * The one error policy, for the server pipeline and for the runtime's failed tasks alike. An AgentError is the server's own word to its caller and keeps its
 * code and message. Anything else is an unexpected failure whose message may carry a host name, a
 * path or a secret: the caller gets `INTERNAL` / `Internal error` with `data.error_id`, and the log
 * gets the real error and its stack under the same id.
 */
export function toWireError(error: unknown, site: ErrorSite, logger: Logger): AgentError {
  if (error instanceof AgentError) return error;
  const name = (error as { name?: unknown } | null)?.name;
  // An abort or a timeout says nothing about the server: keep their meaning (TASK_CANCELED, DEADLINE_EXCEEDED).
  if (name === 'AbortError' || name === 'TimeoutError') return AgentError.from(error);
  const errorId = newId();
  const fields: Record<string, unknown> = { err: error, error_id: errorId, operation: site.operation };
  if (site.transport !== undefined) fields.transport = site.transport;
  if (site.principalId !== undefined) fields.principal_id = site.principalId;
  if (site.taskId !== undefined) fields.task_id = site.taskId;
  try {
    logger.error(fields, 'Unexpected error');
  } catch {
    // A failing logger must not turn a masked error into an unmasked crash.
  }
  return new InternalError(INTERNAL_MESSAGE, { data: { error_id: errorId } });
}
