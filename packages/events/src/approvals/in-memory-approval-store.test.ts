import { ResourceExhaustedError, ValueError, type ApprovalRequestData } from '@agent/core';
import { describeApprovalStore } from '../testing/approval-store-suite.js';
import { DEFAULT_MAX_APPROVAL_RECORDS, InMemoryApprovalStore } from './in-memory-approval-store.js';

describeApprovalStore('InMemoryApprovalStore', { open: (options) => new InMemoryApprovalStore(options) });

const ALICE = { tenant: 'acme', principal_id: 'alice' };
const BOB = { tenant: 'acme', principal_id: 'bob' };

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

async function rejection(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('InMemoryApprovalStore bound', () => {
  it('holds 10,000 records by default and checks its options', () => {
    expect(new InMemoryApprovalStore().maxRecords).toBe(DEFAULT_MAX_APPROVAL_RECORDS);
    expect(DEFAULT_MAX_APPROVAL_RECORDS).toBe(10_000);
    expect(() => new InMemoryApprovalStore({ maxRecords: 0 })).toThrow(ValueError);
    expect(() => new InMemoryApprovalStore({ maxRecords: 2.5 })).toThrow(ValueError);
    expect(() => new InMemoryApprovalStore({ now: 5 as never })).toThrow(ValueError);
    expect(() => new InMemoryApprovalStore({ max: 3 } as never)).toThrow(/maxRecords/);
  });

  it('drops settled records, the earliest settled first, to file new ones; never a pending one', async () => {
    const store = new InMemoryApprovalStore({ maxRecords: 3 });
    const a = await store.createApproval(ALICE, request('a'), { taskId: 't' });
    const b = await store.createApproval(BOB, request('b'), { taskId: 't' });
    await store.createApproval(ALICE, request('c'), { taskId: 't' });
    // b settles before a: b is the earliest settled, so it goes first.
    await store.withdrawApproval(BOB, 'b');
    await store.decideApproval(ALICE, 'a', { approved: true, action_hash: a.action_hash });
    await store.createApproval(ALICE, request('d'), { taskId: 't' });
    expect(store.size).toBe(3);
    expect(await store.getApproval(BOB, 'b')).toBeNull();
    expect((await store.getApproval(ALICE, 'a'))!.state).toBe('approved');
    await store.createApproval(BOB, request('e'), { taskId: 't' });
    expect(await store.getApproval(ALICE, 'a')).toBeNull();
    expect((await store.listApprovals(ALICE)).map((r) => r.request_id)).toEqual(['c', 'd']);
    expect(b.state).toBe('pending');
    store.close();
  });

  it('refuses a new request with ResourceExhaustedError when every record kept is pending', async () => {
    const store = new InMemoryApprovalStore({ maxRecords: 2 });
    const first = await store.createApproval(ALICE, request('a'), { taskId: 't' });
    await store.createApproval(ALICE, request('b'), { taskId: 't' });
    const error = await rejection(store.createApproval(BOB, request('c'), { taskId: 't' }));
    expect(error).toBeInstanceOf(ResourceExhaustedError);
    expect(await store.listApprovals(ALICE, { state: 'pending' })).toHaveLength(2);
    // Deciding one makes room again.
    await store.decideApproval(ALICE, 'a', { approved: false, action_hash: first.action_hash });
    await store.createApproval(BOB, request('c'), { taskId: 't' });
    expect(await store.getApproval(ALICE, 'a')).toBeNull();
    expect(store.size).toBe(2);
    store.close();
  });
});
