/**
 * An ApprovalStore in process memory: for tests and single-process servers, where the run waiting
 * and the reviewer deciding share the process. Requests do not survive a restart (neither do the
 * runs waiting for them).
 */
import { ResourceExhaustedError, UnavailableError, ValueError, type ApprovalRequestData } from '@agent/core';
import { checkOptionNames, numberOption, optionNames, ownerKey } from '@agent/core/internal';
import { isoAt } from '../registry/entries.js';
import { clockOf } from '../store/records.js';
import type { TaskOwner } from '../store/run-store.js';
import {
  approvalNotFound,
  approvalQueryOf,
  approvalRecordOf,
  approverOf,
  checkDecidable,
  decidedOf,
  decisionOf,
  matchesQuery,
  newApprovalOf,
  requestIdOf,
  storedApprovalOf,
  withdrawnOf,
  withdrawReasonOf,
  type StoredApproval,
} from './approval-records.js';
import type {
  ApprovalDecisionInput,
  ApprovalQuery,
  ApprovalRecord,
  ApprovalStore,
  CreateApprovalOptions,
} from './approval-store.js';
import { DecisionWaiters } from './decision-waiters.js';

export const DEFAULT_MAX_APPROVAL_RECORDS = 10_000;

export interface InMemoryApprovalStoreOptions {
  /** The clock that stamps records, in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  /**
   * Most records kept, every owner together. Default 10,000. Past it the decided and withdrawn
   * records go, the earliest settled first; pending ones are never dropped, so a store full of
   * them refuses new requests (ResourceExhaustedError).
   */
  maxRecords?: number;
}

const OPTION_NAMES = optionNames<InMemoryApprovalStoreOptions>({ now: true, maxRecords: true });

/** The key of one owner's map of requests: an owner key with no id after it. */
function ownerMapKey(owner: TaskOwner): string {
  return ownerKey(owner, '');
}

export class InMemoryApprovalStore implements ApprovalStore {
  readonly maxRecords: number;
  readonly #now: () => number;
  /** Each owner's records by request id, in filing order (what lists answer in). */
  readonly #byOwner = new Map<string, Map<string, StoredApproval>>();
  /** Decided and withdrawn records by key, in the order they settled: the front is pruned first. */
  readonly #settled = new Map<string, StoredApproval>();
  readonly #waiters = new DecisionWaiters();
  #count = 0;
  #closed = false;

  constructor(options: InMemoryApprovalStoreOptions = {}) {
    checkOptionNames('InMemoryApprovalStore', options, OPTION_NAMES);
    this.#now = clockOf(options.now, 'InMemoryApprovalStore');
    this.maxRecords = numberOption('maxRecords', options.maxRecords, DEFAULT_MAX_APPROVAL_RECORDS, {
      min: 1,
      integer: true,
    });
  }

  /** How many records are kept now, every owner together. */
  get size(): number {
    return this.#count;
  }

  #open(): void {
    if (this.#closed) throw new UnavailableError('The approval store is closed');
  }

  #find(owner: TaskOwner, requestId: string): StoredApproval | undefined {
    return this.#byOwner.get(ownerMapKey(owner))?.get(requestId);
  }

  /** Replaces a pending record by its settled form and wakes whoever waits for it. */
  #settle(owner: TaskOwner, next: StoredApproval): void {
    this.#byOwner.get(ownerMapKey(owner))!.set(next.request_id, next);
    this.#settled.set(ownerKey(owner, next.request_id), next);
    this.#waiters.settle(next);
  }

  /** Makes room for one more record by dropping the earliest settled one; false when all are pending. */
  #makeRoom(): boolean {
    const oldest = this.#settled.entries().next();
    if (oldest.done) return false;
    const [key, stored] = oldest.value;
    this.#settled.delete(key);
    const mine = this.#byOwner.get(ownerMapKey(stored))!;
    mine.delete(stored.request_id);
    if (mine.size === 0) this.#byOwner.delete(ownerMapKey(stored));
    this.#count -= 1;
    return true;
  }

  async createApproval(
    owner: TaskOwner,
    request: ApprovalRequestData,
    options: CreateApprovalOptions,
  ): Promise<ApprovalRecord> {
    const who = approverOf(owner);
    const approval = newApprovalOf(request, options);
    this.#open();
    if (this.#find(who, approval.request_id))
      throw new ValueError(`Approval request ${approval.request_id} exists already`, {
        data: { field: 'request_id' },
      });
    while (this.#count >= this.maxRecords) {
      if (!this.#makeRoom())
        throw new ResourceExhaustedError(
          `The approval store holds ${this.#count} pending requests, its maxRecords; decide some first`,
          { data: { max_records: this.maxRecords } },
        );
    }
    const stored = storedApprovalOf(who, approval, isoAt(this.#now()));
    let mine = this.#byOwner.get(ownerMapKey(who));
    if (!mine) {
      mine = new Map();
      this.#byOwner.set(ownerMapKey(who), mine);
    }
    mine.set(stored.request_id, stored);
    this.#count += 1;
    return approvalRecordOf(stored);
  }

  async getApproval(owner: TaskOwner, requestId: string): Promise<ApprovalRecord | null> {
    const who = approverOf(owner);
    const id = requestIdOf(requestId);
    this.#open();
    const stored = this.#find(who, id);
    return stored ? approvalRecordOf(stored) : null;
  }

  async listApprovals(owner: TaskOwner, query?: ApprovalQuery): Promise<ApprovalRecord[]> {
    const who = approverOf(owner);
    const q = approvalQueryOf(query);
    this.#open();
    const found: ApprovalRecord[] = [];
    for (const stored of this.#byOwner.get(ownerMapKey(who))?.values() ?? []) {
      if (!matchesQuery(stored, q)) continue;
      found.push(approvalRecordOf(stored));
      if (found.length >= q.limit) break;
    }
    return found;
  }

  async decideApproval(
    owner: TaskOwner,
    requestId: string,
    decision: ApprovalDecisionInput,
  ): Promise<ApprovalRecord> {
    const who = approverOf(owner);
    const id = requestIdOf(requestId);
    const checked = decisionOf(decision);
    this.#open();
    // Synchronous from the read to the write: no other decision can come between them.
    const stored = this.#find(who, id);
    checkDecidable(stored, id, checked);
    const next = decidedOf(stored, checked, isoAt(this.#now()));
    this.#settle(who, next);
    return approvalRecordOf(next);
  }

  async withdrawApproval(
    owner: TaskOwner,
    requestId: string,
    reason?: string,
  ): Promise<ApprovalRecord | null> {
    const who = approverOf(owner);
    const id = requestIdOf(requestId);
    const why = withdrawReasonOf(reason);
    this.#open();
    const stored = this.#find(who, id);
    if (!stored) return null;
    if (stored.state !== 'pending') return approvalRecordOf(stored);
    const next = withdrawnOf(stored, why, isoAt(this.#now()));
    this.#settle(who, next);
    return approvalRecordOf(next);
  }

  async waitForDecision(owner: TaskOwner, requestId: string, signal?: AbortSignal): Promise<ApprovalRecord> {
    const who = approverOf(owner);
    const id = requestIdOf(requestId);
    this.#open();
    if (signal?.aborted) throw signal.reason;
    const stored = this.#find(who, id);
    if (!stored) throw approvalNotFound(id);
    if (stored.state !== 'pending') return approvalRecordOf(stored);
    return this.#waiters.wait(who, id, signal);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#waiters.rejectAll(new UnavailableError('The approval store is closed'));
    this.#byOwner.clear();
    this.#settled.clear();
    this.#count = 0;
  }
}
