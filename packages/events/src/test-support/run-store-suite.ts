/** The one behaviour suite every RunStore passes (run from each backend's test file). */
import { createTask, UnavailableError, ValueError, type Task } from '@agent/core';
import { REDACTED } from '../redaction.js';
import { RunRecorder } from '../run-recorder.js';
import type { RunReport } from '../run-report.js';
import type { RunStore } from '../store/run-store.js';
import { completedRun, runContext } from './fixtures.js';

export interface StoreHarness {
  open(): RunStore;
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
    beforeEach(() => {
      store = harness.open();
    });
    afterEach(async () => {
      await store.close();
    });

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
}
