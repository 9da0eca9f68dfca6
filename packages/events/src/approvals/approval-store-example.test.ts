/** The README's approval store example, as written there (the README points here). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalRequestData } from '@agent/core';
import { SqliteApprovalStore } from './sqlite-approval-store.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'approval-example-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

it('parks a request in one store and decides it through another over the same file', async () => {
  const path = join(dir, 'agent.db');
  const request: ApprovalRequestData = {
    request_id: 'req-1',
    action: {
      action_id: 'act-1',
      kind: 'tool.call',
      name: 'delete_record',
      payload: { arguments: { id: 'r1' } },
      capabilities: ['records.delete'],
      artifacts: [],
    },
    created_at: new Date().toISOString(),
  };

  // --- as in the README ---
  const alice = { tenant: 'acme', principal_id: 'alice' };
  // The run's process: file the request and wait (the run's cancel signal stops the wait).
  const runs = new SqliteApprovalStore({ path });
  const record = await runs.createApproval(alice, request, { taskId: 'task-1' });
  const decision = runs.waitForDecision(alice, record.request_id, AbortSignal.timeout(60_000));

  // A reviewer's process, on the same file: the pending requests, then one decision.
  const reviewer = new SqliteApprovalStore({ path });
  const [pending] = await reviewer.listApprovals(alice, { state: 'pending' });
  await reviewer.decideApproval(alice, pending!.request_id, {
    approved: true,
    action_hash: pending!.action_hash, // binds the decision to the action the reviewer saw
    decided_by: 'alice',
  });
  const decided = await decision; // { state: 'approved', decided_by: 'alice', ... }
  // --- end ---

  expect(decided).toMatchObject({ state: 'approved', decided_by: 'alice', task_id: 'task-1' });
  runs.close();
  reviewer.close();
});
