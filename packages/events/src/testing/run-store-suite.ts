/** The one behaviour suite every RunStore passes (run from each backend's test file). */
import {
  createTask,
  TaskNotFoundError,
  UnavailableError,
  ValueError,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { REDACTED } from '../redaction.js';
import { RunRecorder } from '../run-recorder.js';
import type { RunReport } from '../run-report.js';
import type { RunStoreOptions } from '../store/in-memory-run-store.js';
import {
  DEFAULT_OWNER,
  type RunStore,
  type TaskOwner,
  type TaskRecord,
  type TaskWrite,
} from '../store/run-store.js';
import { completedRun, manualClock, runContext } from './fixtures.js';

export interface StoreHarness {
  /** A new, empty store with the options every backend shares. */
  open(options?: RunStoreOptions): RunStore;
}

const ALICE: TaskOwner = { tenant: 'acme', principal_id: 'alice' };
const BOB: TaskOwner = { tenant: 'acme', principal_id: 'bob' };
const OTHER_TENANT: TaskOwner = { tenant: 'globex', principal_id: 'alice' };

function statusEvent(taskId: string, state: Task['state'] = 'working', extra: object = {}): TaskEvent {
  return {
    type: 'task.status',
    task_id: taskId,
    state,
    final: false,
    timestamp: '2026-03-01T00:00:00.000Z',
    ...extra,
  };
}

/** Opens a fresh store before each test (with the options of that moment) and closes it after. */
function openEach(
  harness: StoreHarness,
  use: (store: RunStore) => void,
  options?: () => RunStoreOptions,
): void {
  let opened: RunStore;
  beforeEach(() => {
    opened = harness.open(options?.());
    use(opened);
  });
  afterEach(async () => {
    await opened.close();
  });
}

const ids = (records: TaskRecord[]) => records.map((r) => r.task_id);

async function allPages(store: RunStore, query: Parameters<RunStore['pageTaskRecords']>[0] = {}) {
  const pages: TaskRecord[][] = [];
  let pageToken = '';
  do {
    const page = await store.pageTaskRecords({ ...query, pageToken });
    pages.push(page.records);
    pageToken = page.next_page_token;
  } while (pageToken !== '' && pages.length < 1000);
  return pages;
}

function reportFor(runId: string, sessionId: string, traceId = 'trace-a'): RunReport {
  const context = runContext({ run_id: runId, session_id: sessionId, trace_id: traceId });
  const recorder = new RunRecorder({ context });
  for (const event of completedRun(`task-of-${runId}`, context).events) recorder.recordTaskEvent(event);
  return recorder.toReport({ metadata: { password: 'hunter2' } });
}

function taskIn(id: string, sessionId: string, state: Task['state'] = 'working', agentChain = ['a']): Task {
  return createTask('hi', {
    id,
    state,
    metadata: {
      run_context: runContext({ run_id: `run-${id}`, session_id: sessionId, agent_chain: agentChain }),
      api_key: 'secret-key',
    },
  });
}

export function describeRunStore(name: string, harness: StoreHarness): void {
  describe(`${name} (shared RunStore suite)`, () => {
    let store: RunStore;
    openEach(harness, (opened) => (store = opened));

    it('saves a task snapshot with its indexed fields and redacts it', async () => {
      await store.saveTaskSnapshot(taskIn('t1', 's1', 'working', ['planner', 'writer']));
      const record = await store.getTaskRecord('t1');
      expect(record).toMatchObject({
        task_id: 't1',
        state: 'working',
        run_id: 'run-t1',
        session_id: 's1',
        trace_id: runContext().trace_id,
        agent_name: 'writer',
      });
      expect(record!.task.metadata.api_key).toBe(REDACTED);
      expect(record!.task.messages[0].parts[0].content).toBe('hi');
      expect(Number.isNaN(Date.parse(record!.updated_at))).toBe(false);
    });

    it('upserts by task_id, keeping one record per task', async () => {
      const task = taskIn('t1', 's1');
      await store.saveTaskSnapshot(task);
      await store.saveTaskSnapshot({ ...task, state: 'completed' }, { agentName: 'override' });
      await store.saveTaskSnapshot({ ...task, state: 'completed' }, { agentName: 'override' });
      const all = await store.listTaskRecords();
      expect(all).toHaveLength(1);
      expect(all[0]).toMatchObject({ state: 'completed', agent_name: 'override' });
    });

    it('takes ids from the runContext option, and a legacy session_id', async () => {
      const bare = createTask('x', { id: 'bare', metadata: { session_id: 'legacy' } });
      await store.saveTaskSnapshot(bare);
      expect(await store.getTaskRecord('bare')).toMatchObject({
        session_id: 'legacy',
        run_id: null,
        agent_name: null,
      });
      await store.saveTaskSnapshot(bare, {
        runContext: runContext({ run_id: 'explicit', session_id: 'ctx' }),
      });
      expect(await store.getTaskRecord('bare')).toMatchObject({
        session_id: 'ctx',
        run_id: 'explicit',
        agent_name: 'writer',
      });
    });

    it('lists by session, state, run and agent, newest first, with a limit', async () => {
      await store.saveTaskSnapshot(taskIn('a', 's1', 'completed'));
      await store.saveTaskSnapshot(taskIn('b', 's1', 'working'));
      await store.saveTaskSnapshot(taskIn('c', 's2', 'completed', ['x', 'y']));
      const ids = (records: { task_id: string }[]) => records.map((r) => r.task_id).sort();
      expect(ids(await store.listTaskRecords({ sessionId: 's1' }))).toEqual(['a', 'b']);
      expect(ids(await store.listTaskRecords({ state: 'completed' }))).toEqual(['a', 'c']);
      expect(ids(await store.listTaskRecords({ sessionId: 's1', state: 'completed' }))).toEqual(['a']);
      expect(ids(await store.listTaskRecords({ runId: 'run-c' }))).toEqual(['c']);
      expect(ids(await store.listTaskRecords({ agentName: 'y' }))).toEqual(['c']);
      expect(await store.listTaskRecords({ sessionId: 'none' })).toEqual([]);
      const all = await store.listTaskRecords();
      for (let i = 1; i < all.length; i += 1) expect(all[i - 1].updated_at >= all[i].updated_at).toBe(true);
      expect(await store.listTaskRecords({ limit: 2 })).toHaveLength(2);
    });

    it('returns null for unknown ids', async () => {
      expect(await store.getTaskRecord('missing')).toBeNull();
      expect(await store.getRunReport('missing')).toBeNull();
    });

    it('saves and reads run reports, redacted, upserting by run_id', async () => {
      const report = reportFor('r1', 's1');
      await store.saveRunReport(report);
      await store.saveRunReport(report);
      const loaded = await store.getRunReport('r1');
      expect(loaded).not.toBeNull();
      expect(loaded!.toDict({ redactionPolicy: null }).metadata).toEqual({ password: REDACTED });
      expect(loaded!.events).toHaveLength(report.eventCount);
      expect(loaded!.llmMetrics).toEqual(report.llmMetrics);
      expect(loaded!.approvals[0].request.action.payload).toEqual({
        arguments: { id: 7, api_key: REDACTED },
      });
      expect(await store.listRunReports()).toHaveLength(1);
    });

    it('lists reports by session and trace', async () => {
      await store.saveRunReport(reportFor('r1', 's1', 'trace-a'));
      await store.saveRunReport(reportFor('r2', 's1', 'trace-b'));
      await store.saveRunReport(reportFor('r3', 's2', 'trace-b'));
      const ids = (reports: RunReport[]) => reports.map((r) => r.runId).sort();
      expect(ids(await store.listRunReports({ sessionId: 's1' }))).toEqual(['r1', 'r2']);
      expect(ids(await store.listRunReports({ traceId: 'trace-b' }))).toEqual(['r2', 'r3']);
      expect(ids(await store.listRunReports({ sessionId: 's2', traceId: 'trace-b' }))).toEqual(['r3']);
      expect(ids(await store.listRunReports({ taskId: 'task-of-r2' }))).toEqual(['r2']);
      expect(await store.listRunReports({ limit: 1 })).toHaveLength(1);
    });

    it('deletes records older than a timestamp', async () => {
      await store.saveTaskSnapshot(taskIn('old', 's'));
      await store.saveRunReport(reportFor('r-old', 's'));
      const cutoff = new Date(Date.now() + 60_000).toISOString();
      expect(await store.deleteBefore('2000-01-01T00:00:00Z')).toBe(0);
      expect(await store.deleteBefore(cutoff)).toBe(2);
      expect(await store.getTaskRecord('old')).toBeNull();
      expect(await store.listRunReports()).toEqual([]);
      expect(await store.deleteBefore('2000-01-01T00:00:00+02:00')).toBe(0);
    });

    it('rejects bad input with ValueError', async () => {
      await expect(store.saveTaskSnapshot({ id: '' } as Task)).rejects.toThrow(ValueError);
      await expect(store.saveTaskSnapshot(null as unknown as Task)).rejects.toThrow(ValueError);
      await expect(store.saveRunReport(new RunRecorder().toReport())).rejects.toThrow(/without run_id/);
      await expect(store.getTaskRecord('' as string)).rejects.toThrow(ValueError);
      await expect(store.listTaskRecords({ limit: 0 })).rejects.toThrow(/limit must be an integer/);
      await expect(store.listTaskRecords({ sessionId: 5 as unknown as string })).rejects.toThrow(ValueError);
      await expect(store.listRunReports({ limit: 1.5 })).rejects.toThrow(ValueError);
      await expect(store.deleteBefore('yesterday')).rejects.toThrow(/ISO 8601/);
      await expect(store.deleteBefore('2026-01-01T00:00:00')).rejects.toThrow(/timezone/);
    });

    it('refuses calls after close, and close is idempotent', async () => {
      await store.close();
      await store.close();
      await expect(store.getTaskRecord('x')).rejects.toThrow(UnavailableError);
      await expect(store.saveTaskSnapshot(taskIn('x', 's'))).rejects.toThrow(/closed/);
    });

    it('returns copies that do not write through', async () => {
      await store.saveTaskSnapshot(taskIn('t1', 's1'));
      const first = await store.getTaskRecord('t1');
      first!.task.state = 'failed';
      expect((await store.getTaskRecord('t1'))!.task.state).toBe('working');
    });
  });

  describeOwners(name, harness);
  describeEventLog(name, harness);
  describePaging(name, harness);
  describeRetention(name, harness);
}

function describeOwners(name: string, harness: StoreHarness): void {
  describe(`${name} owners (shared RunStore suite)`, () => {
    let store: RunStore;
    openEach(harness, (opened) => (store = opened));

    it('files a record without an owner under the default owner', async () => {
      await store.saveTaskSnapshot(taskIn('t1', 's1'));
      expect(await store.getTaskRecord('t1')).toMatchObject({ tenant: '', principal_id: 'anonymous' });
      expect(await store.getTaskRecord('t1', DEFAULT_OWNER)).toMatchObject({ task_id: 't1' });
      expect(await store.getTaskRecord('t1', { tenant: '', principal_id: 'anonymous' })).not.toBeNull();
    });

    it('keeps the same task id under two owners as two records', async () => {
      await store.saveTaskSnapshot(taskIn('shared', 's1', 'working'), { owner: ALICE });
      await store.saveTaskSnapshot(taskIn('shared', 's1', 'completed'), { owner: BOB });
      expect(await store.getTaskRecord('shared', ALICE)).toMatchObject({ ...ALICE, state: 'working' });
      expect(await store.getTaskRecord('shared', BOB)).toMatchObject({ ...BOB, state: 'completed' });
      await store.saveTaskSnapshot(taskIn('shared', 's1', 'failed'), { owner: ALICE });
      expect((await store.getTaskRecord('shared', BOB))!.state).toBe('completed');
      expect(await store.listTaskRecords({ owner: ALICE })).toHaveLength(1);
      expect(await store.listTaskRecords({ owner: BOB })).toHaveLength(1);
    });

    it("makes another owner's record exactly as invisible as an unknown id", async () => {
      await store.saveTaskSnapshot(taskIn('mine', 's1'), { owner: ALICE });
      await store.appendTaskEvents(ALICE, 'mine', [statusEvent('mine')]);
      for (const stranger of [BOB, OTHER_TENANT, DEFAULT_OWNER]) {
        expect(await store.getTaskRecord('mine', stranger)).toBeNull();
        expect(await store.listTaskRecords({ owner: stranger })).toEqual([]);
        expect(await store.listTaskRecords({ owner: stranger, sessionId: 's1' })).toEqual([]);
        expect(await store.pageTaskRecords({ owner: stranger })).toEqual({
          records: [],
          next_page_token: '',
        });
        expect(await store.listTaskEvents(stranger, 'mine')).toEqual([]);
        const foreign = await store.appendTaskEvents(stranger, 'mine', [statusEvent('mine')]).catch((e) => e);
        const unknown = await store.appendTaskEvents(stranger, 'nope', [statusEvent('nope')]).catch((e) => e);
        expect(foreign).toBeInstanceOf(TaskNotFoundError);
        expect(foreign.message).toBe(unknown.message.replace('nope', 'mine'));
      }
      expect(await store.listTaskEvents(ALICE, 'mine')).toHaveLength(1);
    });

    it('does not mix tenants that share a principal id', async () => {
      await store.saveTaskSnapshot(taskIn('t', 's'), { owner: ALICE });
      await store.saveTaskSnapshot(taskIn('u', 's'), { owner: OTHER_TENANT });
      expect(ids(await store.listTaskRecords({ owner: ALICE }))).toEqual(['t']);
      expect(ids(await store.listTaskRecords({ owner: OTHER_TENANT }))).toEqual(['u']);
    });

    it('rejects a malformed owner with ValueError', async () => {
      const bad = [
        { tenant: 'a', principal_id: '' },
        { tenant: 5, principal_id: 'p' },
        'alice',
        { tenant: 'a' },
      ];
      for (const owner of bad as TaskOwner[]) {
        await expect(store.saveTaskSnapshot(taskIn('t', 's'), { owner })).rejects.toThrow(ValueError);
        await expect(store.getTaskRecord('t', owner)).rejects.toThrow(ValueError);
        await expect(store.listTaskRecords({ owner })).rejects.toThrow(ValueError);
        await expect(store.pageTaskRecords({ owner })).rejects.toThrow(ValueError);
        await expect(store.listTaskEvents(owner, 't')).rejects.toThrow(ValueError);
        await expect(store.appendTaskEvents(owner, 't', [])).rejects.toThrow(ValueError);
      }
    });
  });
}

function describeEventLog(name: string, harness: StoreHarness): void {
  describe(`${name} task event log (shared RunStore suite)`, () => {
    let store: RunStore;
    openEach(harness, (opened) => (store = opened));
    beforeEach(async () => {
      await store.saveTaskSnapshot(taskIn('t1', 's1'), { owner: ALICE });
    });

    it('numbers events from 1 per task and owner, without gaps, across calls', async () => {
      expect(await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1'), statusEvent('t1')])).toEqual([
        1, 2,
      ]);
      expect(await store.appendTaskEvents(ALICE, 't1', [])).toEqual([]);
      expect(await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1', 'completed')])).toEqual([3]);
      await store.saveTaskSnapshot(taskIn('t1', 's1'), { owner: BOB });
      expect(await store.appendTaskEvents(BOB, 't1', [statusEvent('t1')])).toEqual([1]);
      const log = await store.listTaskEvents(ALICE, 't1');
      expect(log.map((e) => e.sequence)).toEqual([1, 2, 3]);
      expect(log[2]!.event).toMatchObject({ type: 'task.status', task_id: 't1', state: 'completed' });
    });

    it('keeps the log when the snapshot is saved again', async () => {
      await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1')]);
      await store.saveTaskSnapshot(taskIn('t1', 's1', 'completed'), { owner: ALICE });
      expect(await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1')])).toEqual([2]);
    });

    it('reads after a sequence, with a limit', async () => {
      const batch = Array.from({ length: 10 }, (_, i) => statusEvent('t1', 'working', { message_index: i }));
      await store.appendTaskEvents(ALICE, 't1', batch);
      const seq = (events: { sequence: number }[]) => events.map((e) => e.sequence);
      expect(seq(await store.listTaskEvents(ALICE, 't1', { after: 7 }))).toEqual([8, 9, 10]);
      expect(seq(await store.listTaskEvents(ALICE, 't1', { after: 2, limit: 3 }))).toEqual([3, 4, 5]);
      expect(seq(await store.listTaskEvents(ALICE, 't1', { limit: 1 }))).toEqual([1]);
      expect(await store.listTaskEvents(ALICE, 't1', { after: 10 })).toEqual([]);
      expect(await store.listTaskEvents(ALICE, 't1', { after: 99 })).toEqual([]);
      expect((await store.listTaskEvents(ALICE, 't1', { after: 4, limit: 1 }))[0]!.event).toMatchObject({
        message_index: 4,
      });
      expect(await store.listTaskEvents(ALICE, 'unknown')).toEqual([]);
    });

    it('stores events redacted, as copies', async () => {
      const event = statusEvent('t1', 'working', { metadata: { api_key: 'sk-live-1', note: 'ok' } });
      await store.appendTaskEvents(ALICE, 't1', [event]);
      const [stored] = await store.listTaskEvents(ALICE, 't1');
      expect(stored!.event).toMatchObject({ metadata: { api_key: REDACTED, note: 'ok' } });
      expect((event as unknown as { metadata: { api_key: string } }).metadata.api_key).toBe('sk-live-1');
      (stored!.event as unknown as { state: string }).state = 'failed';
      expect((await store.listTaskEvents(ALICE, 't1'))[0]!.event).toMatchObject({ state: 'working' });
    });

    it('appends a batch all or nothing', async () => {
      await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1')]);
      const batches = [
        [statusEvent('t1'), statusEvent('other-task')],
        [statusEvent('t1'), { task_id: 't1' }],
        [statusEvent('t1'), null],
        'not an array',
      ];
      for (const batch of batches)
        await expect(store.appendTaskEvents(ALICE, 't1', batch as TaskEvent[])).rejects.toThrow(ValueError);
      expect((await store.listTaskEvents(ALICE, 't1')).map((e) => e.sequence)).toEqual([1]);
      expect(await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1')])).toEqual([2]);
    });

    it('gives concurrent appends distinct, gap-free sequences', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          store.appendTaskEvents(ALICE, 't1', [statusEvent('t1'), statusEvent('t1')]),
        ),
      );
      const all = results.flat().sort((a, b) => a - b);
      expect(all).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      for (const pair of results) expect(pair[1]).toBe(pair[0]! + 1);
    });

    it('refuses events for a task the owner has no record of', async () => {
      await expect(store.appendTaskEvents(ALICE, 'missing', [statusEvent('missing')])).rejects.toThrow(
        TaskNotFoundError,
      );
      await expect(store.appendTaskEvents(DEFAULT_OWNER, 't1', [statusEvent('t1')])).rejects.toThrow(
        TaskNotFoundError,
      );
    });

    it('deletes the events with their task', async () => {
      await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1'), statusEvent('t1')]);
      expect(await store.deleteBefore(new Date(Date.now() + 60_000).toISOString())).toBe(1);
      expect(await store.listTaskEvents(ALICE, 't1')).toEqual([]);
      await store.saveTaskSnapshot(taskIn('t1', 's1'), { owner: ALICE });
      expect(await store.listTaskEvents(ALICE, 't1')).toEqual([]);
      expect(await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1')])).toEqual([1]);
    });

    it('rejects bad arguments with ValueError', async () => {
      await expect(store.appendTaskEvents(ALICE, '', [])).rejects.toThrow(ValueError);
      await expect(store.listTaskEvents(ALICE, '')).rejects.toThrow(ValueError);
      for (const query of [{ after: -1 }, { after: 1.5 }, { limit: 0 }, { limit: 10_001 }, { from: 1 }])
        await expect(store.listTaskEvents(ALICE, 't1', query as never)).rejects.toThrow(ValueError);
    });
  });
}

/**
 * The suite of a store with `writeTask` (run beside {@link describeRunStore}): its writes land as
 * the calls one by one would, in order, and a group refused for any reason leaves nothing behind.
 */
export function describeTaskWrites(name: string, harness: StoreHarness): void {
  describe(`${name} writeTask (shared RunStore suite)`, () => {
    let store: RunStore;
    openEach(harness, (opened) => (store = opened));
    const writeTask = (owner: TaskOwner, taskId: string, writes: readonly TaskWrite[]) => {
      if (!store.writeTask) throw new Error(`${name} has no writeTask`);
      return store.writeTask(owner, taskId, writes);
    };
    const sequences = async (owner: TaskOwner, taskId: string) =>
      (await store.listTaskEvents(owner, taskId)).map((e) => e.sequence);

    it('applies snapshots and appends in order, numbered with the calls one by one', async () => {
      await writeTask(ALICE, 't1', [
        { snapshot: taskIn('t1', 's1') },
        { events: [statusEvent('t1'), statusEvent('t1', 'working', { metadata: { api_key: 'sk-live-1' } })] },
        { events: [statusEvent('t1', 'input-required')] },
        { snapshot: taskIn('t1', 's1', 'input-required') },
      ]);
      const record = await store.getTaskRecord('t1', ALICE);
      expect(record).toMatchObject({ state: 'input-required', run_id: 'run-t1', session_id: 's1' });
      expect(record!.task.metadata.api_key).toBe(REDACTED);
      const log = await store.listTaskEvents(ALICE, 't1');
      expect(log.map((e) => e.sequence)).toEqual([1, 2, 3]);
      expect(log[1]!.event).toMatchObject({ metadata: { api_key: REDACTED } });
      expect(log[2]!.event).toMatchObject({ state: 'input-required' });
      expect(await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1')])).toEqual([4]);
      await writeTask(ALICE, 't1', [{ events: [statusEvent('t1'), statusEvent('t1')] }]);
      expect(await sequences(ALICE, 't1')).toEqual([1, 2, 3, 4, 5, 6]);
      await writeTask(ALICE, 't1', []);
      expect(await sequences(ALICE, 't1')).toEqual([1, 2, 3, 4, 5, 6]);
      // A saved record saved again in a group, with the same ids and then with others: the
      // group's events still go to its log.
      await writeTask(ALICE, 't1', [{ snapshot: taskIn('t1', 's1') }, { events: [statusEvent('t1')] }]);
      await writeTask(ALICE, 't1', [{ snapshot: taskIn('t1', 's2') }, { events: [statusEvent('t1')] }]);
      expect(await sequences(ALICE, 't1')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await store.getTaskRecord('t1', ALICE)).toMatchObject({ session_id: 's2' });
      expect(await store.getTaskRecord('t1', BOB)).toBeNull();
    });

    it('refuses bad input whole, before any of it is written', async () => {
      await store.saveTaskSnapshot(taskIn('t1', 's1'), { owner: ALICE });
      await store.appendTaskEvents(ALICE, 't1', [statusEvent('t1')]);
      const refused = [
        [{ snapshot: taskIn('t1', 's1', 'completed') }, { snapshot: taskIn('other', 's1') }],
        [{ events: [statusEvent('t1')] }, { events: [statusEvent('other')] }],
        [{ events: [statusEvent('t1')] }, { snapshot: taskIn('t1', 's1'), events: [] }],
        [{ snapshot: taskIn('t1', 's1', 'completed') }, null],
        [{ events: [statusEvent('t1')] }, { events: 'not an array' }],
        'not an array',
      ];
      for (const writes of refused)
        await expect(writeTask(ALICE, 't1', writes as never)).rejects.toThrow(ValueError);
      await expect(writeTask(ALICE, '', [])).rejects.toThrow(ValueError);
      expect((await store.getTaskRecord('t1', ALICE))!.state).toBe('working');
      expect(await sequences(ALICE, 't1')).toEqual([1]);
    });

    it("stores an ending's final status, which carries the task its snapshot saves, as the calls one by one would", async () => {
      // A secret inside the shared task, and a task the one-pass writer cannot write (a Date: its
      // text comes from the copying path and is not shared): each stored as the one-by-one calls do.
      const template = taskIn('template', 's1', 'completed');
      const endingOf = (id: string, extra: Record<string, unknown>): TaskWrite[] => {
        // A JSON copy: plain objects of this realm (structuredClone's may be of another, under a test runner).
        const task = { ...(JSON.parse(JSON.stringify(template)) as Task), id };
        Object.assign(task.metadata, extra, {
          nested: { password: 'hunter2', note: 'Bearer abcdefgh12345' },
        });
        const final = statusEvent(id, 'completed', { final: true, task });
        return [{ events: [statusEvent(id), final] }, { snapshot: task }];
      };
      for (const [index, extra] of [{}, { at: new Date('2026-03-01T00:00:00.000Z') }].entries()) {
        const grouped = `grouped-${index}`;
        const single = `single-${index}`;
        await store.saveTaskSnapshot(taskIn(grouped, 's1'), { owner: ALICE });
        await store.saveTaskSnapshot(taskIn(single, 's1'), { owner: ALICE });
        await writeTask(ALICE, grouped, endingOf(grouped, extra));
        for (const write of endingOf(single, extra)) {
          if ('events' in write) await store.appendTaskEvents(ALICE, single, write.events);
          else await store.saveTaskSnapshot(write.snapshot, { owner: ALICE });
        }
        const rename = (value: unknown): unknown =>
          JSON.parse(JSON.stringify(value).replaceAll(`"${single}"`, `"${grouped}"`));
        const groupedLog = await store.listTaskEvents(ALICE, grouped);
        expect(groupedLog).toEqual(rename(await store.listTaskEvents(ALICE, single)));
        const finalTask = (groupedLog[1]!.event as { task: Task }).task;
        expect(finalTask.metadata).toMatchObject({ api_key: REDACTED, nested: { password: REDACTED } });
        expect(finalTask.metadata.nested).toEqual({ password: REDACTED, note: REDACTED });
        const record = await store.getTaskRecord(grouped, ALICE);
        expect(record!.task).toEqual(finalTask);
        expect(record!.task).toEqual(rename((await store.getTaskRecord(single, ALICE))!.task));
      }
    });

    it("takes a new task's whole run with its ending first: a log with no final status yet takes events", async () => {
      // What a server sends for a run that ended before any of it was written: one group, one snapshot.
      const task = taskIn('quick', 's1', 'completed');
      await writeTask(ALICE, 'quick', [
        { snapshot: task },
        { events: [statusEvent('quick'), statusEvent('quick', 'completed', { final: true, task })] },
      ]);
      expect((await store.getTaskRecord('quick', ALICE))!.state).toBe('completed');
      const log = await store.listTaskEvents(ALICE, 'quick');
      expect(log.map((e) => e.sequence)).toEqual([1, 2]);
      expect(log[1]!.event).toMatchObject({ state: 'completed', final: true, task: { id: 'quick' } });
    });

    it('refuses events before the owner has a record, and keeps none of the group', async () => {
      await expect(
        writeTask(ALICE, 'missing', [
          { events: [statusEvent('missing')] },
          { snapshot: taskIn('missing', 's1') },
        ]),
      ).rejects.toThrow(TaskNotFoundError);
      expect(await store.getTaskRecord('missing', ALICE)).toBeNull();
      await store.saveTaskSnapshot(taskIn('t1', 's1'), { owner: ALICE });
      await expect(writeTask(BOB, 't1', [{ events: [statusEvent('t1')] }])).rejects.toThrow(
        TaskNotFoundError,
      );
      expect(await sequences(ALICE, 't1')).toEqual([]);
      expect(await store.getTaskRecord('t1', BOB)).toBeNull();
    });
  });
}

function describePaging(name: string, harness: StoreHarness): void {
  describe(`${name} keyset pages (shared RunStore suite)`, () => {
    let store: RunStore;
    const clock = manualClock();
    const base = Date.parse('2026-03-01T00:00:00.000Z');
    openEach(
      harness,
      (opened) => (store = opened),
      () => {
        clock.set(base);
        return { now: clock.now };
      },
    );

    /** Saves tasks at the given offsets from `base`; equal offsets make ties. */
    async function saveAt(entries: [id: string, offsetMs: number, state?: Task['state']][], owner = ALICE) {
      for (const [id, offset, state = 'completed'] of entries) {
        clock.set(base + offset);
        await store.saveTaskSnapshot(taskIn(id, id.startsWith('x') ? 'sx' : 's1', state), { owner });
      }
    }

    it('pages newest first, ties broken by task id, matching the list order', async () => {
      await saveAt([
        ['e', 0],
        ['c', 5],
        ['a', 5],
        ['d', 5],
        ['b', 5],
        ['f', 9],
        ['g', 1],
      ]);
      const pages = await allPages(store, { owner: ALICE, pageSize: 2 });
      expect(pages.map(ids)).toEqual([['f', 'a'], ['b', 'c'], ['d', 'g'], ['e']]);
      expect(pages.flat()).toEqual(await store.listTaskRecords({ owner: ALICE }));
      const exact = await allPages(store, { owner: ALICE, pageSize: 7 });
      expect(exact.map(ids)).toEqual([['f', 'a', 'b', 'c', 'd', 'g', 'e']]);
    });

    it('ends with an empty token, and defaults to 50 a page', async () => {
      expect(await store.pageTaskRecords({ owner: ALICE })).toEqual({ records: [], next_page_token: '' });
      await saveAt(
        Array.from({ length: 51 }, (_, i): [string, number] => [`t${String(i).padStart(2, '0')}`, i]),
      );
      const first = await store.pageTaskRecords({ owner: ALICE });
      expect(first.records).toHaveLength(50);
      expect(first.next_page_token).not.toBe('');
      const second = await store.pageTaskRecords({ owner: ALICE, pageToken: first.next_page_token });
      expect(ids(second.records)).toEqual(['t00']);
      expect(second.next_page_token).toBe('');
    });

    it('does not shift later pages when records are added after the first page', async () => {
      await saveAt([
        ['a', 1],
        ['b', 2],
        ['c', 3],
        ['d', 4],
        ['e', 5],
      ]);
      const first = await store.pageTaskRecords({ owner: ALICE, pageSize: 2 });
      expect(ids(first.records)).toEqual(['e', 'd']);
      await saveAt([
        ['new1', 10],
        ['new2', 11],
        ['0-same-time-smaller-id', 4],
      ]);
      const second = await store.pageTaskRecords({
        owner: ALICE,
        pageSize: 2,
        pageToken: first.next_page_token,
      });
      expect(ids(second.records)).toEqual(['c', 'b']);
      const third = await store.pageTaskRecords({
        owner: ALICE,
        pageSize: 2,
        pageToken: second.next_page_token,
      });
      expect(ids(third.records)).toEqual(['a']);
    });

    it("filters pages by session and state, and only the owner's records", async () => {
      await saveAt([
        ['x1', 1, 'working'],
        ['x2', 2, 'completed'],
        ['y1', 3, 'completed'],
      ]);
      await saveAt([['x9', 9, 'completed']], BOB);
      const pages = await allPages(store, { owner: ALICE, sessionId: 'sx', pageSize: 1 });
      expect(pages.map(ids)).toEqual([['x2'], ['x1']]);
      expect(ids((await store.pageTaskRecords({ owner: ALICE, state: 'completed' })).records)).toEqual([
        'y1',
        'x2',
      ]);
      expect(ids((await store.pageTaskRecords({ owner: BOB })).records)).toEqual(['x9']);
      await saveAt([['z', 0]], DEFAULT_OWNER);
      expect(ids((await store.pageTaskRecords()).records)).toEqual(['z']);
    });

    it('refuses a token of another owner or query, and a malformed one, with VALUE_ERROR', async () => {
      await saveAt([
        ['x1', 1],
        ['x2', 2],
        ['x3', 3],
      ]);
      await saveAt(
        [
          ['x1', 1],
          ['x2', 2],
          ['x3', 3],
        ],
        BOB,
      );
      const token = (await store.pageTaskRecords({ owner: ALICE, pageSize: 1 })).next_page_token;
      const filtered = (await store.pageTaskRecords({ owner: ALICE, sessionId: 'sx', pageSize: 1 }))
        .next_page_token;
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      const decoded = Buffer.from(token, 'base64url').toString('utf8');
      expect(decoded).not.toContain('alice');
      const forged = (change: (parts: unknown[]) => unknown[]) =>
        Buffer.from(JSON.stringify(change(JSON.parse(decoded) as unknown[]))).toString('base64url');
      const refused = [
        { owner: BOB, pageToken: token },
        { owner: OTHER_TENANT, pageToken: token },
        { pageToken: token },
        { owner: ALICE, sessionId: 'sx', pageToken: token },
        { owner: ALICE, state: 'completed', pageToken: token },
        { owner: ALICE, pageToken: filtered },
        { owner: ALICE, pageToken: 'not-a-token' },
        { owner: ALICE, pageToken: '!!!' },
        { owner: ALICE, pageToken: Buffer.from('{"a":1}').toString('base64url') },
        { owner: ALICE, pageToken: forged((p) => [2, ...p.slice(1)]) },
        { owner: ALICE, pageToken: forged((p) => [...p.slice(0, 3), 7]) },
        { owner: ALICE, pageToken: forged((p) => p.slice(0, 3)) },
        { owner: ALICE, pageToken: 5 },
      ];
      for (const query of refused) {
        const error = await store.pageTaskRecords(query as never).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ValueError);
        expect((error as ValueError).code).toBe('VALUE_ERROR');
      }
      // The same token, on the same query, still works: only the mismatch was refused.
      expect(
        ids((await store.pageTaskRecords({ owner: ALICE, pageSize: 1, pageToken: token })).records),
      ).toEqual(['x2']);
    });

    it('rejects a page size outside 1..100 and unknown query fields', async () => {
      for (const pageSize of [0, 101, 1.5, -1, '5'])
        await expect(store.pageTaskRecords({ pageSize } as never)).rejects.toThrow(
          /pageSize must be an integer/,
        );
      await expect(store.pageTaskRecords({ limit: 5 } as never)).rejects.toThrow(ValueError);
      expect((await store.pageTaskRecords({ pageSize: 100 })).records).toEqual([]);
    });
  });
}

function describeRetention(name: string, harness: StoreHarness): void {
  describe(`${name} retention (shared RunStore suite)`, () => {
    const clock = manualClock();
    const start = Date.parse('2026-03-01T00:00:00.000Z');
    let store: RunStore;
    openEach(
      harness,
      (opened) => (store = opened),
      () => {
        clock.set(start);
        return { now: clock.now, taskRetentionMs: 1000 };
      },
    );

    it('drops finished tasks and their events after taskRetentionMs, never live ones', async () => {
      await store.saveTaskSnapshot(taskIn('done', 's', 'completed'), { owner: ALICE });
      await store.saveTaskSnapshot(taskIn('failed', 's', 'failed'), { owner: ALICE });
      await store.saveTaskSnapshot(taskIn('live', 's', 'working'), { owner: ALICE });
      await store.saveTaskSnapshot(taskIn('waiting', 's', 'input-required'), { owner: ALICE });
      await store.appendTaskEvents(ALICE, 'done', [statusEvent('done', 'completed')]);
      clock.set(start + 1000);
      expect(await store.getTaskRecord('done', ALICE)).not.toBeNull();
      clock.set(start + 1001);
      await store.saveTaskSnapshot(taskIn('fresh', 's', 'canceled'), { owner: ALICE });
      expect(await store.getTaskRecord('done', ALICE)).toBeNull();
      expect(await store.listTaskEvents(ALICE, 'done')).toEqual([]);
      expect(ids(await store.listTaskRecords({ owner: ALICE })).sort()).toEqual(['fresh', 'live', 'waiting']);
      expect(ids((await store.pageTaskRecords({ owner: ALICE })).records).sort()).toEqual([
        'fresh',
        'live',
        'waiting',
      ]);
      clock.set(start + 10 * 24 * 3600_000);
      expect(ids(await store.listTaskRecords({ owner: ALICE })).sort()).toEqual(['live', 'waiting']);
      await expect(store.appendTaskEvents(ALICE, 'fresh', [statusEvent('fresh')])).rejects.toThrow(
        TaskNotFoundError,
      );
    });

    it('counts retention from the last save', async () => {
      await store.saveTaskSnapshot(taskIn('t', 's', 'completed'));
      clock.set(start + 900);
      await store.saveTaskSnapshot(taskIn('t', 's', 'completed'));
      clock.set(start + 1500);
      expect(await store.getTaskRecord('t')).not.toBeNull();
    });

    it('rejects a bad taskRetentionMs or clock', () => {
      for (const taskRetentionMs of [0, -5, Number.NaN, '1000'])
        expect(() => harness.open({ taskRetentionMs } as never)).toThrow(ValueError);
      expect(() => harness.open({ now: 5 } as never)).toThrow(ValueError);
      const forever = harness.open({ taskRetentionMs: Infinity });
      void forever.close();
    });
  });
}
