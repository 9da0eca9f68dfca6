/**
 * The calls of `waitForDecision` open in this process, by owner and request id. A store settles them
 * when it decides or withdraws a request itself; a store other processes write to also polls for the
 * requests waited on.
 */
import { ownerKey } from '@agent/core/internal';
import type { TaskOwner } from '../store/run-store.js';
import { approvalRecordOf, type StoredApproval } from './approval-records.js';
import type { ApprovalRecord } from './approval-store.js';

interface Waiter {
  resolve(record: ApprovalRecord): void;
  reject(error: unknown): void;
}

/** One request waited on, and everyone waiting for it. */
export interface WaitedRequest {
  readonly owner: TaskOwner;
  readonly requestId: string;
  readonly waiters: Set<Waiter>;
}

export class DecisionWaiters {
  readonly #waiting = new Map<string, WaitedRequest>();

  /** How many requests are waited on. */
  get size(): number {
    return this.#waiting.size;
  }

  /** The requests waited on now (a copy: settling one while iterating is fine). */
  requests(): WaitedRequest[] {
    return [...this.#waiting.values()];
  }

  /**
   * Resolves when {@link settle} is called for the request; rejects with the signal's reason when it
   * aborts first. The caller has checked that the request is pending.
   */
  wait(owner: TaskOwner, requestId: string, signal: AbortSignal | undefined): Promise<ApprovalRecord> {
    const key = ownerKey(owner, requestId);
    return new Promise<ApprovalRecord>((resolve, reject) => {
      let entry = this.#waiting.get(key);
      if (!entry) {
        entry = { owner: { ...owner }, requestId, waiters: new Set() };
        this.#waiting.set(key, entry);
      }
      const waited = entry;
      const onAbort = (): void => waiter.reject(signal?.reason);
      // Each waiter leaves exactly once, however it ends, and takes its abort listener with it.
      const leave = (): void => {
        signal?.removeEventListener('abort', onAbort);
        waited.waiters.delete(waiter);
        if (waited.waiters.size === 0 && this.#waiting.get(key) === waited) this.#waiting.delete(key);
      };
      const waiter: Waiter = {
        resolve: (record) => {
          leave();
          resolve(record);
        },
        reject: (error) => {
          leave();
          reject(error);
        },
      };
      waited.waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Hands the settled record to everyone waiting for it, each a copy of its own. */
  settle(stored: StoredApproval): void {
    const entry = this.#waiting.get(ownerKey(stored, stored.request_id));
    if (!entry || stored.state === 'pending') return;
    for (const waiter of [...entry.waiters]) waiter.resolve(approvalRecordOf(stored));
  }

  /** Rejects every waiter (the store closed). */
  rejectAll(error: unknown): void {
    for (const entry of [...this.#waiting.values()])
      for (const waiter of [...entry.waiters]) waiter.reject(error);
  }
}
