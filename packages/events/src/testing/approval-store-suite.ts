/** The one behaviour suite every ApprovalStore passes (run from each backend's test file). */
import {
  type AgentError,
  ApprovalActionMismatchError,
  ApprovalAlreadyDecidedError,
  ApprovalNotFoundError,
  UnavailableError,
  ValueError,
  type ApprovalRequestData,
  type RunActionData,
} from '@agent/core';
import { actionHash } from '../approvals/action-hash.js';
import type { ApprovalRecord, ApprovalStore } from '../approvals/approval-store.js';
import type { TaskOwner } from '../store/run-store.js';
import { manualClock } from './fixtures.js';

export interface ApprovalStoreHarness {
  /** A new, empty store on the given clock. */
  open(options: { now: () => number }): ApprovalStore | Promise<ApprovalStore>;
  /**
   * A second store over the backend of the store `open` returned last (the same file, the same
   * database), as another process would open it. Without it the cross-instance tests are skipped.
   */
  openSibling?(options: { now: () => number }): ApprovalStore | Promise<ApprovalStore>;
}

const ALICE: TaskOwner = { tenant: 'acme', principal_id: 'alice' };
const BOB: TaskOwner = { tenant: 'acme', principal_id: 'bob' };
const ALICE_ELSEWHERE: TaskOwner = { tenant: 'globex', principal_id: 'alice' };

const START = Date.parse('2026-03-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

let sequence = 0;

function action(overrides: Partial<RunActionData> = {}): RunActionData {
  return {
    action_id: `act-${(sequence += 1)}`,
    kind: 'tool.call',
    name: 'delete_record',
    payload: { arguments: { id: 'r1' } },
    capabilities: ['records.delete'],
    artifacts: [],
    ...overrides,
  };
}

function request(requestId: string, overrides: Partial<RunActionData> = {}): ApprovalRequestData {
  return { request_id: requestId, action: action(overrides), created_at: iso(START) };
}

async function rejection(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** Resolves `true` when `promise` has settled by the time the queued callbacks ran; never waits for it. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
  return settled;
}

interface Opened {
  store(): ApprovalStore;
  clock: ReturnType<typeof manualClock>;
  /** The sibling, opened on first use and closed after the test. */
  sibling(): Promise<ApprovalStore>;
}

/** Opens a fresh store (on a fresh clock at START) before each test and closes it after. */
function openEach(harness: ApprovalStoreHarness): Opened {
  const clock = manualClock(START);
  let opened: ApprovalStore;
  let sibling: ApprovalStore | null = null;
  beforeEach(async () => {
    clock.set(START);
    opened = await harness.open({ now: clock.now });
  });
  afterEach(async () => {
    await sibling?.close();
    sibling = null;
    await opened.close();
  });
  return {
    store: () => opened,
    clock,
    sibling: async () => {
      sibling ??= await harness.openSibling!({ now: clock.now });
      return sibling;
    },
  };
}

export function describeApprovalStore(name: string, harness: ApprovalStoreHarness): void {
  describeRecords(name, harness);
  describeDecisions(name, harness);
  describeWaiting(name, harness);
  describeArguments(name, harness);
}

function describeRecords(name: string, harness: ApprovalStoreHarness): void {
  describe(`${name} records (shared ApprovalStore suite)`, () => {
    const { store, clock } = openEach(harness);

    it('files a request as pending, stamped with the clock and bound to the hash of its action', async () => {
      const asked = request('req-1');
      const record = await store().createApproval(ALICE, asked, { taskId: 'task-1' });
      const expected: ApprovalRecord = {
        request_id: 'req-1',
        tenant: 'acme',
        principal_id: 'alice',
        task_id: 'task-1',
        action: asked.action as unknown as ApprovalRecord['action'],
        action_hash: actionHash(asked.action),
        state: 'pending',
        created_at: iso(START),
        decided_at: null,
        decided_by: null,
        reason: null,
      };
      expect(record).toEqual(expected);
      expect(record.action_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(await store().getApproval(ALICE, 'req-1')).toEqual(expected);
    });

    it('hashes the action as JSON: the same action with its keys in another order has the same hash', async () => {
      const asked = request('req-1');
      const { action: original } = asked;
      const reordered = Object.fromEntries(Object.entries(original).reverse()) as unknown as RunActionData;
      const a = await store().createApproval(ALICE, asked, { taskId: 'task-1' });
      const b = await store().createApproval(
        ALICE,
        { ...asked, request_id: 'req-2', action: reordered },
        { taskId: 'task-1' },
      );
      expect(b.action_hash).toBe(a.action_hash);
    });

    it('refuses a request id the owner has already filed, and keeps the first', async () => {
      await store().createApproval(ALICE, request('req-1'), { taskId: 'task-1' });
      const error = await rejection(store().createApproval(ALICE, request('req-1'), { taskId: 'task-2' }));
      expect(error).toBeInstanceOf(ValueError);
      expect((await store().getApproval(ALICE, 'req-1'))!.task_id).toBe('task-1');
      expect(await store().listApprovals(ALICE)).toHaveLength(1);
    });

    it('answers copies: changing a record, its action or the request given changes nothing stored', async () => {
      const asked = request('req-1');
      const created = await store().createApproval(ALICE, asked, { taskId: 'task-1' });
      created.state = 'approved';
      (created.action.payload as { arguments: { id: string } }).arguments.id = 'r2';
      (asked.action.payload as { arguments: { id: string } }).arguments.id = 'r3';
      asked.action.name = 'something_else';
      const got = (await store().getApproval(ALICE, 'req-1'))!;
      expect(got.state).toBe('pending');
      expect(got.action).toMatchObject({ name: 'delete_record', payload: { arguments: { id: 'r1' } } });
      got.action.name = 'changed';
      const [listed] = await store().listApprovals(ALICE);
      expect(listed!.action.name).toBe('delete_record');
      const decided = await store().decideApproval(ALICE, 'req-1', {
        approved: true,
        action_hash: got.action_hash,
      });
      decided.state = 'denied';
      expect((await store().getApproval(ALICE, 'req-1'))!.state).toBe('approved');
    });

    it('lists one owner’s requests oldest first, filtered by state and task, at most `limit`', async () => {
      for (let i = 1; i <= 5; i += 1) {
        clock.set(START + i * 1000);
        await store().createApproval(ALICE, request(`req-${i}`), { taskId: i % 2 === 0 ? 'even' : 'odd' });
      }
      await store().createApproval(BOB, request('bob-1'), { taskId: 'odd' });
      const ids = (records: ApprovalRecord[]) => records.map((record) => record.request_id);
      expect(ids(await store().listApprovals(ALICE))).toEqual(['req-1', 'req-2', 'req-3', 'req-4', 'req-5']);
      expect(ids(await store().listApprovals(ALICE, { taskId: 'even' }))).toEqual(['req-2', 'req-4']);
      expect(ids(await store().listApprovals(ALICE, { limit: 2 }))).toEqual(['req-1', 'req-2']);
      const hashOf = async (id: string) => (await store().getApproval(ALICE, id))!.action_hash;
      await store().decideApproval(ALICE, 'req-3', { approved: true, action_hash: await hashOf('req-3') });
      await store().decideApproval(ALICE, 'req-1', { approved: false, action_hash: await hashOf('req-1') });
      await store().withdrawApproval(ALICE, 'req-5');
      expect(ids(await store().listApprovals(ALICE, { state: 'pending' }))).toEqual(['req-2', 'req-4']);
      expect(ids(await store().listApprovals(ALICE, { state: 'approved' }))).toEqual(['req-3']);
      expect(ids(await store().listApprovals(ALICE, { state: 'denied' }))).toEqual(['req-1']);
      expect(ids(await store().listApprovals(ALICE, { state: 'withdrawn' }))).toEqual(['req-5']);
      expect(ids(await store().listApprovals(ALICE, { state: 'pending', taskId: 'odd' }))).toEqual([]);
      expect(ids(await store().listApprovals(ALICE, { state: 'pending', taskId: 'even', limit: 1 }))).toEqual(
        ['req-2'],
      );
      // Deciding does not move a request in the order.
      expect(ids(await store().listApprovals(ALICE))).toEqual(['req-1', 'req-2', 'req-3', 'req-4', 'req-5']);
    });

    it('keeps each owner’s requests from every other owner, as if they did not exist', async () => {
      const record = await store().createApproval(ALICE, request('req-1'), { taskId: 'task-1' });
      for (const stranger of [BOB, ALICE_ELSEWHERE]) {
        expect(await store().getApproval(stranger, 'req-1')).toBeNull();
        expect(await store().listApprovals(stranger)).toEqual([]);
        expect(await store().listApprovals(stranger, { taskId: 'task-1' })).toEqual([]);
        const decided = await rejection(
          store().decideApproval(stranger, 'req-1', { approved: true, action_hash: record.action_hash }),
        );
        const unknown = await rejection(
          store().decideApproval(stranger, 'req-nobody-filed', {
            approved: true,
            action_hash: record.action_hash,
          }),
        );
        expect(decided).toBeInstanceOf(ApprovalNotFoundError);
        expect(unknown).toBeInstanceOf(ApprovalNotFoundError);
        // The same answer, but for the id each names.
        expect((decided as AgentError).message).toBe(
          (unknown as AgentError).message.replace('req-nobody-filed', 'req-1'),
        );
        expect(await store().withdrawApproval(stranger, 'req-1')).toBeNull();
        expect(await rejection(store().waitForDecision(stranger, 'req-1'))).toBeInstanceOf(
          ApprovalNotFoundError,
        );
      }
      expect(await store().getApproval(ALICE, 'req-1')).toEqual(record);
    });

    it('keeps request ids per owner: another owner’s request of the same id is a record of its own', async () => {
      const alice = await store().createApproval(ALICE, request('req-1'), { taskId: 'task-a' });
      const bob = await store().createApproval(BOB, request('req-1'), { taskId: 'task-b' });
      await store().decideApproval(BOB, 'req-1', { approved: false, action_hash: bob.action_hash });
      expect(await store().getApproval(ALICE, 'req-1')).toEqual(alice);
      expect((await store().getApproval(BOB, 'req-1'))!.state).toBe('denied');
    });
  });
}

function describeDecisions(name: string, harness: ApprovalStoreHarness): void {
  describe(`${name} decisions (shared ApprovalStore suite)`, () => {
    const { store, clock, sibling } = openEach(harness);

    async function filed(requestId = 'req-1'): Promise<ApprovalRecord> {
      return store().createApproval(ALICE, request(requestId), { taskId: 'task-1' });
    }

    it('approves a pending request once, stamped with the clock, the reviewer and the reason', async () => {
      const record = await filed();
      clock.set(START + 5000);
      const decided = await store().decideApproval(ALICE, 'req-1', {
        approved: true,
        action_hash: record.action_hash,
        decided_by: 'reviewer-1',
        reason: 'looks right',
      });
      const expected: ApprovalRecord = {
        ...record,
        state: 'approved',
        decided_at: iso(START + 5000),
        decided_by: 'reviewer-1',
        reason: 'looks right',
      };
      expect(decided).toEqual(expected);
      expect(await store().getApproval(ALICE, 'req-1')).toEqual(expected);
    });

    it('denies with no reviewer or reason given as null', async () => {
      const record = await filed();
      const decided = await store().decideApproval(ALICE, 'req-1', {
        approved: false,
        action_hash: record.action_hash,
      });
      expect(decided).toMatchObject({ state: 'denied', decided_by: null, reason: null });
    });

    it('refuses a second decision with ApprovalAlreadyDecidedError and keeps the first', async () => {
      const record = await filed();
      await store().decideApproval(ALICE, 'req-1', {
        approved: false,
        action_hash: record.action_hash,
        decided_by: 'first',
      });
      const error = await rejection(
        store().decideApproval(ALICE, 'req-1', {
          approved: true,
          action_hash: record.action_hash,
          decided_by: 'second',
        }),
      );
      expect(error).toBeInstanceOf(ApprovalAlreadyDecidedError);
      expect((error as AgentError).code).toBe('APPROVAL_ALREADY_DECIDED');
      expect(await store().getApproval(ALICE, 'req-1')).toMatchObject({
        state: 'denied',
        decided_by: 'first',
      });
    });

    it('lets exactly one of many concurrent decisions win', async () => {
      const record = await filed();
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          store().decideApproval(ALICE, 'req-1', {
            approved: i % 2 === 0,
            action_hash: record.action_hash,
            decided_by: `reviewer-${i}`,
          }),
        ),
      );
      const won = results.filter(
        (r): r is PromiseFulfilledResult<ApprovalRecord> => r.status === 'fulfilled',
      );
      expect(won).toHaveLength(1);
      for (const lost of results.filter((r) => r.status === 'rejected'))
        expect((lost as PromiseRejectedResult).reason).toBeInstanceOf(ApprovalAlreadyDecidedError);
      expect(await store().getApproval(ALICE, 'req-1')).toEqual(won[0]!.value);
    });

    it('refuses a decision for another action with ApprovalActionMismatchError; the request stays pending', async () => {
      const record = await filed();
      const other = actionHash({ ...record.action, payload: { arguments: { id: 'r2' } } });
      const error = await rejection(
        store().decideApproval(ALICE, 'req-1', { approved: true, action_hash: other }),
      );
      expect(error).toBeInstanceOf(ApprovalActionMismatchError);
      expect((error as AgentError).code).toBe('APPROVAL_ACTION_MISMATCH');
      expect(await store().getApproval(ALICE, 'req-1')).toEqual(record);
      expect(
        await store().decideApproval(ALICE, 'req-1', { approved: true, action_hash: record.action_hash }),
      ).toMatchObject({ state: 'approved' });
    });

    it('withdraws a pending request; a withdrawn one can no longer be decided', async () => {
      const record = await filed();
      clock.set(START + 2000);
      const withdrawn = await store().withdrawApproval(ALICE, 'req-1', 'task canceled');
      expect(withdrawn).toEqual({
        ...record,
        state: 'withdrawn',
        decided_at: iso(START + 2000),
        decided_by: null,
        reason: 'task canceled',
      });
      expect(await store().getApproval(ALICE, 'req-1')).toEqual(withdrawn);
      expect(
        await rejection(
          store().decideApproval(ALICE, 'req-1', { approved: true, action_hash: record.action_hash }),
        ),
      ).toBeInstanceOf(ApprovalAlreadyDecidedError);
      // Withdrawing again changes nothing.
      clock.set(START + 3000);
      expect(await store().withdrawApproval(ALICE, 'req-1', 'again')).toEqual(withdrawn);
      expect(await store().withdrawApproval(ALICE, 'req-unknown')).toBeNull();
    });

    it('keeps a decision made before the withdrawal', async () => {
      const record = await filed();
      const decided = await store().decideApproval(ALICE, 'req-1', {
        approved: true,
        action_hash: record.action_hash,
        decided_by: 'reviewer',
      });
      expect(await store().withdrawApproval(ALICE, 'req-1', 'too late')).toEqual(decided);
      expect(await store().getApproval(ALICE, 'req-1')).toEqual(decided);
    });

    it('shares requests between instances over one backend, and decides each once across them', async () => {
      if (!harness.openSibling) return;
      const record = await filed();
      const other = await sibling();
      expect(await other.getApproval(ALICE, 'req-1')).toEqual(record);
      expect(await other.listApprovals(ALICE, { state: 'pending' })).toEqual([record]);
      const results = await Promise.allSettled([
        store().decideApproval(ALICE, 'req-1', { approved: true, action_hash: record.action_hash }),
        other.decideApproval(ALICE, 'req-1', { approved: false, action_hash: record.action_hash }),
        store().decideApproval(ALICE, 'req-1', { approved: false, action_hash: record.action_hash }),
        other.decideApproval(ALICE, 'req-1', { approved: true, action_hash: record.action_hash }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const state = (await store().getApproval(ALICE, 'req-1'))!.state;
      expect(['approved', 'denied']).toContain(state);
      expect((await other.getApproval(ALICE, 'req-1'))!.state).toBe(state);
    });
  });
}

function describeWaiting(name: string, harness: ApprovalStoreHarness): void {
  describe(`${name} waitForDecision (shared ApprovalStore suite)`, () => {
    const { store, sibling } = openEach(harness);

    async function filed(requestId = 'req-1'): Promise<ApprovalRecord> {
      return store().createApproval(ALICE, request(requestId), { taskId: 'task-1' });
    }

    it('resolves with the decided record once the request is decided, not before', async () => {
      const record = await filed();
      const waiting = store().waitForDecision(ALICE, 'req-1');
      expect(await settledYet(waiting)).toBe(false);
      const decided = await store().decideApproval(ALICE, 'req-1', {
        approved: true,
        action_hash: record.action_hash,
        decided_by: 'reviewer',
      });
      expect(await waiting).toEqual(decided);
    });

    it('resolves every waiter of a request, each with a copy of its own', async () => {
      const record = await filed();
      const first = store().waitForDecision(ALICE, 'req-1');
      const second = store().waitForDecision(ALICE, 'req-1');
      await store().decideApproval(ALICE, 'req-1', { approved: false, action_hash: record.action_hash });
      const [a, b] = await Promise.all([first, second]);
      expect(a).toEqual(b);
      expect(a).not.toBe(b);
      expect(a.state).toBe('denied');
    });

    it('resolves at once for a request decided or withdrawn already', async () => {
      const record = await filed('req-1');
      await filed('req-2');
      const decided = await store().decideApproval(ALICE, 'req-1', {
        approved: true,
        action_hash: record.action_hash,
      });
      const withdrawn = await store().withdrawApproval(ALICE, 'req-2', 'gone');
      expect(await store().waitForDecision(ALICE, 'req-1')).toEqual(decided);
      expect(await store().waitForDecision(ALICE, 'req-2')).toEqual(withdrawn);
    });

    it('resolves when the request is withdrawn', async () => {
      await filed();
      const waiting = store().waitForDecision(ALICE, 'req-1');
      await store().withdrawApproval(ALICE, 'req-1', 'run stopped');
      expect(await waiting).toMatchObject({ state: 'withdrawn', reason: 'run stopped' });
    });

    it('resolves when another instance over the same backend decides', async () => {
      if (!harness.openSibling) return;
      const record = await filed();
      const other = await sibling();
      const waiting = store().waitForDecision(ALICE, 'req-1');
      const decided = await other.decideApproval(ALICE, 'req-1', {
        approved: true,
        action_hash: record.action_hash,
        decided_by: 'elsewhere',
      });
      expect(await waiting).toEqual(decided);
    });

    it('rejects with the signal’s reason when it aborts, and leaves the request pending', async () => {
      const record = await filed();
      const controller = new AbortController();
      const reason = new Error('run canceled');
      const waiting = store().waitForDecision(ALICE, 'req-1', controller.signal);
      controller.abort(reason);
      expect(await rejection(waiting)).toBe(reason);
      const aborted = AbortSignal.abort(reason);
      expect(await rejection(store().waitForDecision(ALICE, 'req-1', aborted))).toBe(reason);
      expect(await store().getApproval(ALICE, 'req-1')).toEqual(record);
      // A wait that ended does not stop a later one from seeing the decision.
      const again = store().waitForDecision(ALICE, 'req-1');
      await store().decideApproval(ALICE, 'req-1', { approved: true, action_hash: record.action_hash });
      expect((await again).state).toBe('approved');
    });

    it('rejects with ApprovalNotFoundError for an unknown request', async () => {
      const error = await rejection(store().waitForDecision(ALICE, 'req-unknown'));
      expect(error).toBeInstanceOf(ApprovalNotFoundError);
      expect((error as AgentError).code).toBe('APPROVAL_NOT_FOUND');
    });

    it('rejects every call with UnavailableError after close (idempotent), a wait open at close too', async () => {
      const record = await filed();
      const waiting = store().waitForDecision(ALICE, 'req-1');
      await store().close();
      await store().close();
      expect(await rejection(waiting)).toBeInstanceOf(UnavailableError);
      const calls: Promise<unknown>[] = [
        store().createApproval(ALICE, request('req-2'), { taskId: 'task-1' }),
        store().getApproval(ALICE, 'req-1'),
        store().listApprovals(ALICE),
        store().decideApproval(ALICE, 'req-1', { approved: true, action_hash: record.action_hash }),
        store().withdrawApproval(ALICE, 'req-1'),
        store().waitForDecision(ALICE, 'req-1'),
      ];
      for (const call of calls) expect(await rejection(call)).toBeInstanceOf(UnavailableError);
    });
  });
}

function describeArguments(name: string, harness: ApprovalStoreHarness): void {
  describe(`${name} arguments (shared ApprovalStore suite)`, () => {
    const { store } = openEach(harness);

    type Call = [string, () => Promise<unknown>];

    it('refuses bad arguments with ValueError and stores nothing', async () => {
      const ok = request('req-ok');
      const hash = actionHash(ok.action);
      const s = store();
      const calls: Call[] = [
        ['no owner', () => s.createApproval(undefined as never, ok, { taskId: 't' })],
        [
          'owner without principal',
          () => s.createApproval({ tenant: 'a', principal_id: '' }, ok, { taskId: 't' }),
        ],
        [
          'tenant not a string',
          () => s.createApproval({ tenant: 1, principal_id: 'p' } as never, ok, { taskId: 't' }),
        ],
        ['request not an object', () => s.createApproval(ALICE, 'req' as never, { taskId: 't' })],
        ['empty request id', () => s.createApproval(ALICE, { ...ok, request_id: '' }, { taskId: 't' })],
        [
          'action not an object',
          () => s.createApproval(ALICE, { ...ok, action: null as never }, { taskId: 't' }),
        ],
        ['no options', () => s.createApproval(ALICE, ok, undefined as never)],
        ['empty task id', () => s.createApproval(ALICE, ok, { taskId: '' })],
        ['unknown option', () => s.createApproval(ALICE, ok, { taskId: 't', ttl: 1 } as never)],
        ['get: empty id', () => s.getApproval(ALICE, '')],
        ['get: no owner', () => s.getApproval(null as never, 'req-ok')],
        ['list: unknown state', () => s.listApprovals(ALICE, { state: 'open' as never })],
        ['list: limit 0', () => s.listApprovals(ALICE, { limit: 0 })],
        ['list: limit 1001', () => s.listApprovals(ALICE, { limit: 1001 })],
        ['list: limit 1.5', () => s.listApprovals(ALICE, { limit: 1.5 })],
        ['list: empty task id', () => s.listApprovals(ALICE, { taskId: '' })],
        ['list: unknown field', () => s.listApprovals(ALICE, { owner: BOB } as never)],
        ['decide: no decision', () => s.decideApproval(ALICE, 'req-ok', undefined as never)],
        [
          'decide: approved not boolean',
          () => s.decideApproval(ALICE, 'req-ok', { approved: 'yes' as never, action_hash: hash }),
        ],
        ['decide: no hash', () => s.decideApproval(ALICE, 'req-ok', { approved: true } as never)],
        [
          'decide: reason not a string',
          () => s.decideApproval(ALICE, 'req-ok', { approved: true, action_hash: hash, reason: 7 as never }),
        ],
        [
          'decide: unknown field',
          () => s.decideApproval(ALICE, 'req-ok', { approved: true, action_hash: hash, by: 'x' } as never),
        ],
        ['decide: empty id', () => s.decideApproval(ALICE, '', { approved: true, action_hash: hash })],
        ['withdraw: reason not a string', () => s.withdrawApproval(ALICE, 'req-ok', 5 as never)],
        ['withdraw: empty id', () => s.withdrawApproval(ALICE, '')],
        ['wait: empty id', () => s.waitForDecision(ALICE, '')],
      ];
      for (const [label, call] of calls) {
        const error = await rejection(call());
        expect([label, error instanceof ValueError]).toEqual([label, true]);
      }
      expect(await s.listApprovals(ALICE)).toEqual([]);
    });
  });
}
