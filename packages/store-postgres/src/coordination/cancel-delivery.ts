import type { CancelRequest, TaskOwner } from '@agent/events';
import type { Pool } from 'pg';

interface CancelRow {
  id: string;
  tenant: string;
  principal_id: string;
  task_id: string;
  reason: string | null;
}

/**
 * Hands the stored cancel requests for tasks claimed by this replica to its listeners. Each row is
 * deleted by the statement that returns it, so when a notification and the poll both look for it,
 * only one of them delivers it.
 */
export class CancelDelivery {
  readonly #listeners = new Set<(request: CancelRequest) => void>();

  constructor(
    private readonly pool: Pool,
    private readonly replicaId: string,
  ) {}

  add(listener: (request: CancelRequest) => void): () => void {
    // A wrapper per call, so the same function added twice is two subscriptions.
    const entry = (request: CancelRequest): void => listener(request);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Every stored request for any task claimed here (the poll). */
  async deliverAll(): Promise<void> {
    await this.#deliver('', []);
  }

  /** The stored requests for one task, when it is claimed here (on its notification). */
  async deliverFor(owner: TaskOwner, taskId: string): Promise<void> {
    await this.#deliver('AND q.tenant = $2 AND q.principal_id = $3 AND q.task_id = $4', [
      owner.tenant,
      owner.principal_id,
      taskId,
    ]);
  }

  async #deliver(filter: string, params: string[]): Promise<void> {
    // Nobody to hand them to: they stay stored until somebody listens.
    if (this.#listeners.size === 0) return;
    const { rows } = await this.pool.query<CancelRow>(
      `DELETE FROM agent_cancel_requests q
       USING agent_task_claims c
       WHERE c.tenant = q.tenant AND c.principal_id = q.principal_id AND c.task_id = q.task_id
         AND c.replica_id = $1 ${filter}
       RETURNING q.id, q.tenant, q.principal_id, q.task_id, q.reason`,
      [this.replicaId, ...params],
    );
    rows.sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
    for (const row of rows) {
      const request: CancelRequest = {
        owner: { tenant: row.tenant, principal_id: row.principal_id },
        task_id: row.task_id,
      };
      if (row.reason !== null) request.reason = row.reason;
      for (const listener of [...this.#listeners]) {
        try {
          listener(request);
        } catch {
          // One failing listener must not keep the request from the others; it is deleted already.
        }
      }
    }
  }
}
