/**
 * ApprovalStore: approval requests that outlive the call that asked for them. A run whose action
 * needs a human's approval, with no approval handler in its process, files the request here and
 * waits; a reviewer decides it later (on any process sharing the store) exactly once, for exactly
 * the action it was asked for.
 */
import type { ApprovalRequestData, JsonObject } from '@agent/core';
import type { TaskOwner } from '../store/run-store.js';

/**
 * `pending` until decided; `approved` / `denied` by a decision; `withdrawn` when the run that asked
 * stopped waiting (canceled, timed out, its process gone).
 */
export type ApprovalState = 'pending' | 'approved' | 'denied' | 'withdrawn';

/** One stored approval request. Timestamps are UTC ISO 8601. */
export interface ApprovalRecord {
  request_id: string;
  tenant: string;
  principal_id: string;
  /** The task whose run asked. */
  task_id: string;
  /** The action to approve, as the request carried it (`RunAction.toDict()`). */
  action: JsonObject;
  /**
   * SHA-256 (lowercase hex) of the action's canonical JSON (keys sorted, no whitespace): a decision
   * names it, so it cannot authorize any other action.
   */
  action_hash: string;
  state: ApprovalState;
  created_at: string;
  /** `null` while pending. */
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
}

export interface CreateApprovalOptions {
  /** The task whose run asks. */
  taskId: string;
}

/** A reviewer's decision on a pending request. */
export interface ApprovalDecisionInput {
  approved: boolean;
  /** The `action_hash` of the request the reviewer saw. */
  action_hash: string;
  decided_by?: string | null;
  reason?: string | null;
}

export interface ApprovalQuery {
  /** Only requests in this state. Absent: every state. */
  state?: ApprovalState;
  /** Only requests of this task. */
  taskId?: string;
  /** Most records returned, 1..1000. Default 100. */
  limit?: number;
}

/**
 * Every method validates its input (a ValueError for bad arguments) and is atomic. Records of one
 * owner are invisible to every other: another owner's request answers exactly like an unknown one.
 * Lists are oldest first. Records returned are copies.
 */
export interface ApprovalStore {
  /** Files `request` as pending for `owner`. A request id that exists already is a ValueError. */
  createApproval(
    owner: TaskOwner,
    request: ApprovalRequestData,
    options: CreateApprovalOptions,
  ): Promise<ApprovalRecord>;
  /** `null` for an unknown id and for another owner's request. */
  getApproval(owner: TaskOwner, requestId: string): Promise<ApprovalRecord | null>;
  /** One owner's requests. */
  listApprovals(owner: TaskOwner, query?: ApprovalQuery): Promise<ApprovalRecord[]>;
  /**
   * Decides a pending request once (compare-and-set) and returns the decided record.
   * @throws ApprovalNotFoundError for an unknown id and another owner's request.
   * @throws ApprovalAlreadyDecidedError when it is no longer pending (decided or withdrawn).
   * @throws ApprovalActionMismatchError when `action_hash` is not the request's.
   */
  decideApproval(
    owner: TaskOwner,
    requestId: string,
    decision: ApprovalDecisionInput,
  ): Promise<ApprovalRecord>;
  /**
   * Marks a pending request `withdrawn` (its run stopped waiting); returns the record as it now is,
   * or `null` for an unknown id. A request decided meanwhile keeps its decision.
   */
  withdrawApproval(owner: TaskOwner, requestId: string, reason?: string): Promise<ApprovalRecord | null>;
  /**
   * Resolves with the record once it is no longer pending (decided by any process sharing the
   * store). Rejects with the signal's reason when `signal` aborts first, and with
   * ApprovalNotFoundError for an unknown id.
   */
  waitForDecision(owner: TaskOwner, requestId: string, signal?: AbortSignal): Promise<ApprovalRecord>;
  /** Releases the store; later calls reject with UnavailableError. Idempotent. */
  close(): Promise<void> | void;
}
