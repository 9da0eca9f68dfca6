import { newId, nowIso, type ApprovalDecisionData, type ApprovalRequestData } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import type { ApprovalRecord } from '@agent/events';
import type { RunAction } from './run-action.js';
import type { RunContext } from './run-context.js';

/** `{request_id, action, created_at}`: plain JSON, safe to persist or send to a reviewer. */
export type ApprovalRequest = ApprovalRequestData;
/** `{request_id, approved, decided_by, reason?}`. */
export type ApprovalDecision = ApprovalDecisionData;

export interface ApprovalHandlerOptions {
  /** Aborts when the task is canceled: a handler waiting for a human should stop waiting. */
  signal: AbortSignal;
  context: RunContext | null;
}

/** Decides on an ApprovalRequest. A decision whose `request_id` does not match is a denial. */
export type ApprovalHandler = (
  request: ApprovalRequest,
  options: ApprovalHandlerOptions,
) => ApprovalDecision | Promise<ApprovalDecision>;

export function createApprovalRequest(action: RunAction): ApprovalRequest {
  return { request_id: newId(), action: action.toDict(), created_at: nowIso() };
}

/**
 * A stored request that is no longer pending, as the decision an approval handler would return. A
 * withdrawn request (its run stopped waiting elsewhere) is no approval.
 */
export function decisionOfRecord(record: ApprovalRecord): ApprovalDecision {
  const decision: ApprovalDecision = {
    request_id: record.request_id,
    approved: record.state === 'approved',
    decided_by: record.decided_by,
  };
  if (record.reason !== null) decision.reason = record.reason;
  else if (record.state === 'withdrawn') decision.reason = 'the request was withdrawn';
  return decision;
}

/** An approving decision for `request`. */
export function approve(
  request: ApprovalRequest,
  decidedBy: string | null = null,
  reason?: string,
): ApprovalDecision {
  return reason === undefined
    ? { request_id: request.request_id, approved: true, decided_by: decidedBy }
    : { request_id: request.request_id, approved: true, decided_by: decidedBy, reason };
}

/** A denying decision for `request`. */
export function deny(
  request: ApprovalRequest,
  decidedBy: string | null = null,
  reason?: string,
): ApprovalDecision {
  return reason === undefined
    ? { request_id: request.request_id, approved: false, decided_by: decidedBy }
    : { request_id: request.request_id, approved: false, decided_by: decidedBy, reason };
}

/**
 * Reads whatever a handler returned as a decision. Anything malformed, or for another request, is
 * a denial: an approval must be explicit.
 */
export function normalizeDecision(
  request: ApprovalRequest,
  value: unknown,
): { decision: ApprovalDecision; approved: boolean; reason: string } {
  if (!isRecord(value)) {
    return {
      decision: deny(request, null, 'malformed decision'),
      approved: false,
      reason: 'approval handler returned no decision',
    };
  }
  const decision: ApprovalDecision = {
    request_id: typeof value.request_id === 'string' ? value.request_id : '',
    approved: value.approved === true,
    decided_by: typeof value.decided_by === 'string' ? value.decided_by : null,
  };
  if (typeof value.reason === 'string') decision.reason = value.reason;
  if (decision.request_id !== request.request_id) {
    return {
      decision,
      approved: false,
      reason: `decision is for request ${decision.request_id || '(none)'}, not ${request.request_id}`,
    };
  }
  const by = decision.decided_by ? ` by ${decision.decided_by}` : '';
  return {
    decision,
    approved: decision.approved,
    reason: decision.approved
      ? `approved${by}`
      : `denied${by}${decision.reason ? `: ${decision.reason}` : ''}`,
  };
}
