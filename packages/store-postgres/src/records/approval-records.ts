/**
 * Approval store arguments and records, by the rules of the other backends of `@agent/events`
 * (the shared suite holds every backend to them).
 */
import {
  ApprovalActionMismatchError,
  ApprovalAlreadyDecidedError,
  ApprovalNotFoundError,
  ValueError,
  type ApprovalRequestData,
  type JsonObject,
} from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import {
  actionHash,
  type ApprovalDecisionInput,
  type ApprovalQuery,
  type ApprovalRecord,
  type ApprovalState,
  type CreateApprovalOptions,
  type TaskOwner,
} from '@agent/events';
import { checkId, jsonCopy, limitOf, registrantOf } from './arguments.js';

export const APPROVAL_STATES: readonly ApprovalState[] = ['pending', 'approved', 'denied', 'withdrawn'];
export const DEFAULT_APPROVAL_LIST_LIMIT = 100;
export const MAX_APPROVAL_LIST_LIMIT = 1000;
/** Longest `decided_by` or `reason` kept: a reviewer's note, not a document. */
export const MAX_NOTE_LENGTH = 4096;

/** An approval always has a real owner: no default owner, as for registry entries. */
export function approverOf(owner: unknown): TaskOwner {
  return registrantOf(owner);
}

export function requestIdOf(requestId: unknown): string {
  return checkId(requestId, 'requestId');
}

/** What a new record is made of: the request's id, its action as JSON, and the action's hash. */
export interface NewApproval {
  request_id: string;
  task_id: string;
  action: JsonObject;
  action_hash: string;
}

const CREATE_OPTION_NAMES = optionNames<CreateApprovalOptions>({ taskId: true });

/** @throws ValueError for a request without an id or an action object, or options without a task id. */
export function newApprovalOf(request: unknown, options: unknown): NewApproval {
  if (!isRecord(request))
    throw new ValueError('createApproval needs an approval request object', { data: { field: 'request' } });
  const requestId = checkId(request.request_id, 'request_id');
  if (!isRecord(request.action))
    throw new ValueError('the approval request needs an action object', { data: { field: 'action' } });
  if (!isRecord(options))
    throw new ValueError('createApproval needs options { taskId }', { data: { field: 'options' } });
  checkOptionNames('createApproval', options, CREATE_OPTION_NAMES);
  const taskId = checkId(options.taskId, 'taskId');
  // The stored action is its JSON form: what a reviewer reads and what the hash covers are one value.
  const action = jsonCopy<JsonObject>(
    (request as unknown as ApprovalRequestData).action,
    'the approval action',
  );
  return { request_id: requestId, task_id: taskId, action, action_hash: actionHash(action) };
}

function noteOf(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string')
    throw new ValueError(`${field} must be a string or null`, { data: { field } });
  if (value.length > MAX_NOTE_LENGTH)
    throw new ValueError(`${field} must be at most ${MAX_NOTE_LENGTH} characters`, { data: { field } });
  return value;
}

const DECISION_NAMES = optionNames<ApprovalDecisionInput>({
  approved: true,
  action_hash: true,
  decided_by: true,
  reason: true,
});

export interface NormalizedDecision {
  approved: boolean;
  action_hash: string;
  decided_by: string | null;
  reason: string | null;
}

/** @throws ValueError for a decision without a boolean `approved` or a string `action_hash`. */
export function decisionOf(decision: unknown): NormalizedDecision {
  if (!isRecord(decision))
    throw new ValueError('decideApproval needs a decision { approved, action_hash }', {
      data: { field: 'decision' },
    });
  checkOptionNames('decideApproval', decision, DECISION_NAMES);
  if (typeof decision.approved !== 'boolean')
    throw new ValueError('approved must be true or false', { data: { field: 'approved' } });
  return {
    approved: decision.approved,
    action_hash: checkId(decision.action_hash, 'action_hash'),
    decided_by: noteOf(decision.decided_by, 'decided_by'),
    reason: noteOf(decision.reason, 'reason'),
  };
}

export function withdrawReasonOf(reason: unknown): string | null {
  return noteOf(reason, 'reason');
}

const QUERY_NAMES = optionNames<ApprovalQuery>({ state: true, taskId: true, limit: true });

export interface NormalizedApprovalQuery {
  state?: ApprovalState;
  taskId?: string;
  limit: number;
}

/** @throws ValueError for an unknown state, an empty task id, a limit outside 1..1000 or an unknown field. */
export function approvalQueryOf(query: unknown): NormalizedApprovalQuery {
  if (query === undefined || query === null) return { limit: DEFAULT_APPROVAL_LIST_LIMIT };
  if (!isRecord(query)) throw new ValueError('listApprovals query must be an object');
  checkOptionNames('listApprovals', query, QUERY_NAMES);
  const normalized: NormalizedApprovalQuery = {
    limit: limitOf(query.limit, 'limit', MAX_APPROVAL_LIST_LIMIT) ?? DEFAULT_APPROVAL_LIST_LIMIT,
  };
  if (query.state !== undefined) {
    if (!APPROVAL_STATES.includes(query.state as ApprovalState))
      throw new ValueError(`state must be one of ${APPROVAL_STATES.join(', ')}`, {
        data: { field: 'state' },
      });
    normalized.state = query.state as ApprovalState;
  }
  if (query.taskId !== undefined) normalized.taskId = checkId(query.taskId, 'taskId');
  return normalized;
}

/** A record as a backend keeps it: the action as JSON text, parsed afresh for every answer. */
export interface StoredApproval extends Omit<ApprovalRecord, 'action'> {
  action: string;
}

/** The pending record filed for `owner` at `createdAt`. */
export function storedApprovalOf(owner: TaskOwner, approval: NewApproval, createdAt: string): StoredApproval {
  return {
    request_id: approval.request_id,
    tenant: owner.tenant,
    principal_id: owner.principal_id,
    task_id: approval.task_id,
    action: JSON.stringify(approval.action),
    action_hash: approval.action_hash,
    state: 'pending',
    created_at: createdAt,
    decided_at: null,
    decided_by: null,
    reason: null,
  };
}

/** The public form of a stored record: a fresh object every time, shared with nobody. */
export function approvalRecordOf(stored: StoredApproval): ApprovalRecord {
  return {
    request_id: stored.request_id,
    tenant: stored.tenant,
    principal_id: stored.principal_id,
    task_id: stored.task_id,
    action: JSON.parse(stored.action) as JsonObject,
    action_hash: stored.action_hash,
    state: stored.state,
    created_at: stored.created_at,
    decided_at: stored.decided_at,
    decided_by: stored.decided_by,
    reason: stored.reason,
  };
}

/** Unknown and another owner's id get this same answer. */
export function approvalNotFound(requestId: string): ApprovalNotFoundError {
  return new ApprovalNotFoundError(`Approval request ${requestId} not found`, {
    data: { request_id: requestId },
  });
}

/**
 * The checks of a decision, in the order a caller learns of them: the request exists for this owner,
 * is still pending, and is the action the reviewer saw.
 * @throws ApprovalNotFoundError, ApprovalAlreadyDecidedError, ApprovalActionMismatchError
 */
export function checkDecidable(
  stored: StoredApproval | undefined,
  requestId: string,
  decision: NormalizedDecision,
): asserts stored is StoredApproval {
  if (!stored) throw approvalNotFound(requestId);
  if (stored.state !== 'pending')
    throw new ApprovalAlreadyDecidedError(`Approval request ${requestId} is ${stored.state} already`, {
      data: { request_id: requestId, state: stored.state },
    });
  if (stored.action_hash !== decision.action_hash)
    throw new ApprovalActionMismatchError(
      `The decision is for another action than approval request ${requestId} asks about`,
      { data: { request_id: requestId } },
    );
}

/** The record after `decision`, made at `at`. */
export function decidedOf(stored: StoredApproval, decision: NormalizedDecision, at: string): StoredApproval {
  return {
    ...stored,
    state: decision.approved ? 'approved' : 'denied',
    decided_at: at,
    decided_by: decision.decided_by,
    reason: decision.reason,
  };
}

/** The record after its run stopped waiting at `at`. */
export function withdrawnOf(stored: StoredApproval, reason: string | null, at: string): StoredApproval {
  return { ...stored, state: 'withdrawn', decided_at: at, decided_by: null, reason };
}
