import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createTask, ValueError, type ApprovalRequestData } from '@agent/core';
import { SqliteRegistryStore } from '../registry/sqlite-registry-store.js';
import { SQLITE_SCHEMA_VERSION, SqliteRunStore } from '../store/sqlite-run-store.js';
import { describeApprovalStore } from '../testing/approval-store-suite.js';
import { APPROVAL_SCHEMA_VERSION, SqliteApprovalStore } from './sqlite-approval-store.js';

let dir: string;
let counter = 0;
let lastPath = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'approval-store-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeApprovalStore('SqliteApprovalStore', {
  open: (options) => {
    lastPath = join(dir, `suite-${(counter += 1)}.db`);
    return new SqliteApprovalStore({ ...options, path: lastPath });
  },
  // A short poll: the sibling's decisions reach the first store's waiters through the file.
  openSibling: (options) => new SqliteApprovalStore({ ...options, path: lastPath, pollIntervalMs: 10 }),
});

const ALICE = { tenant: 'acme', principal_id: 'alice' };

function request(requestId: string): ApprovalRequestData {
  return {
    request_id: requestId,
    action: {
      action_id: `act-${requestId}`,
      kind: 'tool.call',
      name: 'delete_record',
      payload: { arguments: { id: requestId } },
      capabilities: ['records.delete'],
      artifacts: [],
    },
    created_at: '2026-03-01T00:00:00.000Z',
  };
}

describe('SqliteApprovalStore file behaviour', () => {
  it('uses WAL, its own table and its own schema row, beside a run store and a registry store', async () => {
    const path = join(dir, 'shared.db');
    const runs = new SqliteRunStore({ path });
    const approvals = new SqliteApprovalStore({ path });
    const registry = new SqliteRegistryStore({ path });
    expect(approvals.journalMode).toBe('wal');
    await runs.saveTaskSnapshot(createTask('hello', { id: 'task-1' }));
    const record = await approvals.createApproval(ALICE, request('req-1'), { taskId: 'task-1' });
    runs.close();
    approvals.close();
    registry.close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare('SELECT component, version FROM schema_versions ORDER BY component').all()).toEqual([
        { component: 'approvals', version: APPROVAL_SCHEMA_VERSION },
        { component: 'registry', version: 1 },
      ]);
      expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
      // A list of one owner's pending requests reads the owner index in order: no sort step.
      const plan = db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT * FROM approval_requests WHERE tenant = 'a' AND principal_id = 'b' AND state = 'pending'
           ORDER BY seq LIMIT 100`,
        )
        .all() as { detail: string }[];
      expect(plan.map((row) => row.detail).join('\n')).not.toMatch(/TEMP B-TREE/);
    } finally {
      db.close();
    }
    // Either store opened first; everything is still there after a reopen.
    const again = new SqliteApprovalStore({ path });
    const runsAgain = new SqliteRunStore({ path });
    try {
      expect(await again.getApproval(ALICE, 'req-1')).toEqual(record);
      expect(await runsAgain.getTaskRecord('task-1')).not.toBeNull();
    } finally {
      again.close();
      runsAgain.close();
    }
  });

  it('refuses a file whose approval schema is newer than this library', () => {
    const path = join(dir, 'newer.db');
    new SqliteApprovalStore({ path }).close();
    const db = new Database(path);
    db.prepare("UPDATE schema_versions SET version = ? WHERE component = 'approvals'").run(
      APPROVAL_SCHEMA_VERSION + 1,
    );
    db.close();
    expect(() => new SqliteApprovalStore({ path })).toThrow(ValueError);
  });

  it('checks its options', () => {
    expect(() => new SqliteApprovalStore({} as never)).toThrow(/path/);
    expect(() => new SqliteApprovalStore({ path: ':memory:', pollIntervalMs: 0 })).toThrow(ValueError);
    expect(() => new SqliteApprovalStore({ path: ':memory:', poll: 5 } as never)).toThrow(/pollIntervalMs/);
    const store = new SqliteApprovalStore({ path: ':memory:' });
    expect(store.pollIntervalMs).toBe(250);
    store.close();
  });

  it('wakes a waiter in another process-like connection that decided nothing itself, by polling the file', async () => {
    const path = join(dir, 'poll.db');
    const parked = new SqliteApprovalStore({ path, pollIntervalMs: 5 });
    const reviewer = new SqliteApprovalStore({ path });
    try {
      const record = await parked.createApproval(ALICE, request('req-1'), { taskId: 'task-1' });
      const waiting = parked.waitForDecision(ALICE, 'req-1');
      // The reviewer's own connection writes the row; nothing in `parked` is told.
      await reviewer.decideApproval(ALICE, 'req-1', { approved: true, action_hash: record.action_hash });
      expect((await waiting).state).toBe('approved');
    } finally {
      parked.close();
      reviewer.close();
    }
  });
});
