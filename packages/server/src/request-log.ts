/**
 * The request log: one `info` line per request the pipeline answered (a stream: when it ended).
 * It carries who, what, how it ended and how long it took, and never a header value, a query
 * string or a credential: only the fields below, each read from what the pipeline decided.
 */
import type { Logger, TransportKind } from '@agent/core';
import { traceIdOf } from '@agent/core/internal';
import type { RequestInfo } from './request.js';
import { isTenantName } from './tenant.js';
import { requestedTenant } from './request.js';

export interface RequestLogRecord {
  operation: string;
  transport: TransportKind;
  /** `ok`, or the error code the caller got. */
  status: string;
  durationMs: number;
  request: RequestInfo;
  /** The authenticated principal; absent when authentication refused the request. */
  principalId?: string | undefined;
  /** The tenant the call acted for; absent when the request was refused before it was resolved. */
  tenant?: string | undefined;
  taskId?: string | undefined;
  /** Streams: the events the caller was given. */
  events?: number;
  /** Streams: the caller left before the last event. */
  detached?: boolean;
}

export const REQUEST_LOG_MESSAGE = 'request';

export function logRequest(logger: Logger, record: RequestLogRecord): void {
  const fields: Record<string, unknown> = {
    operation: record.operation,
    transport: record.transport,
    status: record.status,
    duration_ms: Math.round(record.durationMs * 1000) / 1000,
  };
  if (record.principalId !== undefined) fields.principal_id = record.principalId;
  const tenant = record.tenant ?? wellFormedTenant(record.request);
  if (tenant !== undefined) fields.tenant = tenant;
  if (record.taskId !== undefined) fields.task_id = record.taskId;
  const traceId = traceIdOf(record.request.headers);
  if (traceId !== undefined) fields.trace_id = traceId;
  if (record.events !== undefined) fields.events = record.events;
  if (record.detached === true) fields.detached = true;
  try {
    logger.info(fields, REQUEST_LOG_MESSAGE);
  } catch {
    // A failing logger must not change an answer.
  }
}

/** A refused request's tenant, only when it is a well-formed name (never an arbitrary header value). */
function wellFormedTenant(request: RequestInfo): string | undefined {
  const named = requestedTenant(request);
  if (named === undefined) return '';
  return isTenantName(named) ? named : undefined;
}
