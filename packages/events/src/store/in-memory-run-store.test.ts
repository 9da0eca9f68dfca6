import {
  createTask,
  ResourceExhaustedError,
  UnavailableError,
  ValueError,
  type TaskEvent,
} from '@agent/core';
import { RedactionPolicy } from '../redaction.js';
import { RunRecorder } from '../run-recorder.js';
import { RunReport, type RunReportData } from '../run-report.js';
import { completedRun, runContext } from '../test-support/fixtures.js';
import { describeRunStore, describeTaskWrites } from '../testing/run-store-suite.js';
import { InMemoryRunStore } from './in-memory-run-store.js';
import { reportTextRowOf } from './records.js';
import { DEFAULT_OWNER } from './run-store.js';
import { reportOfStoredText } from './stored-report.js';

describeRunStore('InMemoryRunStore', { open: (options) => new InMemoryRunStore(options) });
describeTaskWrites('InMemoryRunStore', { open: (options) => new InMemoryRunStore(options) });

describe('InMemoryRunStore options', () => {
  it('stores raw data with redactionPolicy null', async () => {
    const store = new InMemoryRunStore({ redactionPolicy: null });
    await store.saveTaskSnapshot(createTask('x', { id: 't', metadata: { api_key: 'k' } }));
    expect((await store.getTaskRecord('t'))!.task.metadata.api_key).toBe('k');
  });

  it('stores what a database would: JSON only', async () => {
    const store = new InMemoryRunStore({ redactionPolicy: null });
    const task = createTask('x', { id: 'c', metadata: { gone: undefined } });
    await store.saveTaskSnapshot(task);
    expect((await store.getTaskRecord('c'))!.task.metadata).not.toHaveProperty('gone');
    task.metadata.self = task;
    await expect(store.saveTaskSnapshot(task)).rejects.toThrow(ValueError);
  });
});

describe('InMemoryRunStore bounds', () => {
  const finished = (id: string, text = 'x') => createTask(text, { id, state: 'completed' });

  it('keeps at most maxTasks while 50,000 finished tasks go through, evicting the oldest', async () => {
    const store = new InMemoryRunStore({ maxTasks: 1000 });
    let peak = 0;
    for (let i = 0; i < 50_000; i += 1) {
      await store.saveTaskSnapshot(finished(`t${i}`));
      peak = Math.max(peak, store.usage.tasks);
    }
    expect(peak).toBe(1000);
    expect(store.usage.tasks).toBe(1000);
    expect(await store.getTaskRecord('t48999')).toBeNull();
    expect(await store.getTaskRecord('t49000')).not.toBeNull();
    expect(await store.getTaskRecord('t49999')).not.toBeNull();
    expect(await store.listTaskRecords()).toHaveLength(1000);
  });

  /** A 64 KiB store with one finished task (8 KiB) and a running one whose ~1 KB events will fill it. */
  const storeNearlyFull = async () => {
    const maxBytes = 64 * 1024;
    const store = new InMemoryRunStore({ maxBytes });
    await store.saveTaskSnapshot(finished('old', 'x'.repeat(8 * 1024)));
    await store.saveTaskSnapshot({ ...finished('running', 'go'), state: 'working' });
    const event = (i: number) => ({
      type: 'task.progress' as const,
      task_id: 'running',
      timestamp: '2026-01-01T00:00:00Z',
      summary: `${i} ${'z'.repeat(1000)}`,
    });
    return { store, maxBytes, event };
  };

  it('refuses events of running tasks once only running tasks are left to forget, and stays within maxBytes', async () => {
    const { store, maxBytes, event } = await storeNearlyFull();
    let appended = 0;
    let refusal: unknown;
    for (let i = 0; i < 200 && refusal === undefined; i++) {
      try {
        await store.appendTaskEvents(DEFAULT_OWNER, 'running', [event(i)]);
        appended++;
      } catch (error) {
        refusal = error;
      }
      expect(store.usage.bytes).toBeLessThanOrEqual(maxBytes);
    }
    // The finished task went first, to make room; then the running log was refused, not cut short.
    expect(await store.getTaskRecord('old')).toBeNull();
    expect(refusal).toBeInstanceOf(ResourceExhaustedError);
    expect(refusal).toMatchObject({ data: { task_id: 'running', limit: 'maxBytes', max_bytes: maxBytes } });
    expect(appended).toBeGreaterThan(40);
    const kept = await store.listTaskEvents(DEFAULT_OWNER, 'running');
    expect(kept.map((e) => e.sequence)).toEqual(Array.from({ length: appended }, (_, i) => i + 1));
    // Once the task is over and another one needs the room, it is forgotten like any finished task.
    await store.saveTaskSnapshot(finished('running', 'done'));
    await store.saveTaskSnapshot({ ...finished('next', 'go'), state: 'working' });
    await store.appendTaskEvents(DEFAULT_OWNER, 'next', [{ ...event(0), task_id: 'next' }]);
    expect(await store.getTaskRecord('running')).toBeNull();
  });

  it('refuses a writeTask whose appends do not fit whole, leaving the task as it was', async () => {
    const { store, maxBytes, event } = await storeNearlyFull();
    // Fills the store with the running task's log, a group at a time, until a group is refused.
    let groups = 0;
    let refusal: unknown;
    while (refusal === undefined && groups < 100) {
      const working = { ...finished('running', `step ${groups}`), state: 'working' as const };
      try {
        await store.writeTask(DEFAULT_OWNER, 'running', [
          { snapshot: working },
          { events: [event(groups * 2)] },
          { events: [event(groups * 2 + 1)] },
        ]);
        groups++;
      } catch (error) {
        refusal = error;
      }
      expect(store.usage.bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(refusal).toBeInstanceOf(ResourceExhaustedError);
    expect(refusal).toMatchObject({ data: { task_id: 'running', limit: 'maxBytes', max_bytes: maxBytes } });
    expect(groups).toBeGreaterThan(20);
    // The finished task went to make room; the refused group left neither its snapshot nor an event.
    expect(await store.getTaskRecord('old')).toBeNull();
    const record = await store.getTaskRecord('running');
    expect(record!.task.messages[0]!.parts[0]).toMatchObject({ content: `step ${groups - 1}` });
    const kept = await store.listTaskEvents(DEFAULT_OWNER, 'running');
    expect(kept.map((e) => e.sequence)).toEqual(Array.from({ length: groups * 2 }, (_, i) => i + 1));
    // A snapshot alone is never refused: the bound then forgets finished tasks, as for saveTaskSnapshot.
    await store.writeTask(DEFAULT_OWNER, 'running', [{ snapshot: finished('running', 'done') }]);
    expect((await store.getTaskRecord('running'))!.state).toBe('completed');
  });

  it('honours maxBytes with large tasks, counting events too', async () => {
    const maxBytes = 1024 * 1024;
    const store = new InMemoryRunStore({ maxBytes });
    const big = 'y'.repeat(100 * 1024);
    for (let i = 0; i < 50; i += 1) {
      await store.saveTaskSnapshot(finished(`big${i}`, big));
      expect(store.usage.bytes).toBeLessThanOrEqual(maxBytes);
    }
    const kept = store.usage.tasks;
    expect(kept).toBeGreaterThanOrEqual(8);
    expect(kept).toBeLessThan(11);
    expect(await store.getTaskRecord('big49')).not.toBeNull();
    const events = Array.from({ length: 4 }, () => ({
      type: 'task.status' as const,
      task_id: 'big49',
      state: 'completed' as const,
      final: false,
      timestamp: '2026-01-01T00:00:00Z',
      message: { role: 'agent', parts: [{ type: 'text', content: big }] } as never,
    }));
    await store.appendTaskEvents(DEFAULT_OWNER, 'big49', events);
    expect(store.usage.bytes).toBeLessThanOrEqual(maxBytes);
    expect(store.usage.tasks).toBeLessThan(kept);
    expect(await store.listTaskEvents(DEFAULT_OWNER, 'big49')).toHaveLength(4);
  });

  it('never evicts a live task: over the bound, only finished ones go', async () => {
    const store = new InMemoryRunStore({ maxTasks: 2 });
    await store.saveTaskSnapshot(finished('done'));
    for (const id of ['w1', 'w2', 'w3'])
      await store.saveTaskSnapshot(createTask('x', { id, state: 'working' }));
    expect(await store.getTaskRecord('done')).toBeNull();
    expect(store.usage.tasks).toBe(3);
    for (const id of ['w1', 'w2', 'w3']) expect(await store.getTaskRecord(id)).not.toBeNull();
    // Once a live task finishes while the store is over the bound, it is the one evicted.
    await store.saveTaskSnapshot(createTask('x', { id: 'w1', state: 'failed' }));
    expect(await store.getTaskRecord('w1')).toBeNull();
    expect(store.usage.tasks).toBe(2);
  });

  it('evicts by updated_at even when the clock goes backwards', async () => {
    const times = [5000, 1000, 3000, 2000];
    let next = 0;
    const store = new InMemoryRunStore({ maxTasks: 3, now: () => times[next]! });
    for (const [i, id] of ['e', 'a', 'c', 'b'].entries()) {
      next = i;
      await store.saveTaskSnapshot(finished(id));
    }
    expect((await store.listTaskRecords()).map((r) => r.task_id)).toEqual(['e', 'c', 'b']);
  });

  it('drops finished tasks after 24 hours by default', async () => {
    let now = Date.parse('2026-05-01T00:00:00Z');
    const store = new InMemoryRunStore({ now: () => now });
    await store.saveTaskSnapshot(finished('old'));
    now += 24 * 3600_000;
    expect(await store.getTaskRecord('old')).not.toBeNull();
    now += 1;
    expect(await store.getTaskRecord('old')).toBeNull();
    expect(store.usage).toEqual({ tasks: 0, reports: 0, bytes: 0 });
  });

  it('keeps at most maxTasks run reports, the newest, and counts their bytes', async () => {
    const store = new InMemoryRunStore({ maxTasks: 50 });
    for (let i = 0; i < 500; i += 1) {
      const context = runContext({ run_id: `run-${i}` });
      const recorder = new RunRecorder({ context });
      for (const event of completedRun(`task-${i}`, context).events) recorder.recordTaskEvent(event);
      await store.saveRunReport(recorder.toReport());
      expect(store.usage.reports).toBeLessThanOrEqual(50);
    }
    expect(await store.getRunReport('run-449')).toBeNull();
    expect(await store.getRunReport('run-450')).not.toBeNull();
    expect(await store.listRunReports()).toHaveLength(50);
    expect(store.usage.bytes).toBeGreaterThan(0);
    await store.deleteBefore('2999-01-01T00:00:00Z');
    expect(store.usage).toEqual({ tasks: 0, reports: 0, bytes: 0 });
  });

  it('counts exactly the UTF-8 bytes of the report text it keeps, for a report of many chunks', async () => {
    const store = new InMemoryRunStore();
    const context = runContext({ run_id: 'run-big' });
    const recorder = new RunRecorder({ context, maxStreamedEvents: 2000 });
    for (const event of completedRun('task-big', context).events) recorder.recordTaskEvent(event);
    for (let i = 0; i < 3000; i++) {
      recorder.recordTaskEvent({
        type: 'task.artifact',
        task_id: 'task-big',
        append: i > 0,
        artifact: { id: 'big', parts: [{ type: 'text', content: `Stück ${i} — ☃ 😀` }], metadata: {} },
      } as unknown as TaskEvent);
    }
    const report = recorder.toReport({ metadata: { note: 'naïve', api_key: 'sk-1' } });
    const row = reportTextRowOf(report, RedactionPolicy.default());
    // The stored form, redacted, reads back as the report's redacted dict.
    expect(reportOfStoredText(row.report).toDict({ redactionPolicy: null })).toEqual(report.toDict());
    await store.saveRunReport(report);
    const bytes =
      Buffer.byteLength(row.report, 'utf8') + Buffer.byteLength(JSON.stringify(row.columns), 'utf8');
    expect(bytes).toBeGreaterThan(row.report.length);
    expect(store.usage).toEqual({ tasks: 0, reports: 1, bytes });
    expect((await store.getRunReport('run-big'))!.toDict()).toEqual(report.toDict());
    await store.deleteBefore('2999-01-01T00:00:00Z');
    expect(store.usage.bytes).toBe(0);
  });

  it('rejects bad bounds with ValueError', () => {
    for (const options of [{ maxTasks: 0 }, { maxTasks: 1.5 }, { maxBytes: -1 }, { maxBytes: Infinity }])
      expect(() => new InMemoryRunStore(options)).toThrow(ValueError);
  });
});

describe('InMemoryRunStore report writes', () => {
  /** A policy that counts the texts it writes: when the store serializes a report. */
  class CountingPolicy extends RedactionPolicy {
    written = 0;
    override redactedJson(value: unknown): string {
      this.written += 1;
      return super.redactedJson(value);
    }
  }

  function reportOf(runId: string, metadata: Record<string, unknown> = {}) {
    const context = runContext({ run_id: runId });
    const recorder = new RunRecorder({ context });
    for (const event of completedRun(`task-${runId}`, context).events) recorder.recordTaskEvent(event);
    return recorder.toReport({ metadata: metadata as never });
  }

  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  it('writes a report after the current turn, and its save resolves once it is written', async () => {
    const policy = new CountingPolicy();
    const store = new InMemoryRunStore({ redactionPolicy: policy });
    let saved = false;
    const save = store.saveRunReport(reportOf('run-1')).then(() => (saved = true));
    expect(policy.written).toBe(0);
    await Promise.resolve();
    expect(saved).toBe(false);
    await turn();
    await save;
    expect(policy.written).toBe(1);
    expect(saved).toBe(true);
  });

  it('writes pending reports before any read of reports, so a saved report is found at once', async () => {
    const store = new InMemoryRunStore();
    const report = reportOf('run-2', { api_key: 'sk-secret' });
    const save = store.saveRunReport(report);
    const found = await store.getRunReport('run-2');
    expect(found!.toDict()).toEqual(report.toDict({ redactionPolicy: RedactionPolicy.default() }));
    expect(found!.metadata.api_key).toBe('[REDACTED]');
    void store.saveRunReport(reportOf('run-3'));
    expect((await store.listRunReports()).map((r) => r.runId).sort()).toEqual(['run-2', 'run-3']);
    void store.saveRunReport(reportOf('run-4'));
    expect(store.usage.reports).toBe(3);
    void store.saveRunReport(reportOf('run-5'));
    expect(await store.deleteBefore('2999-01-01T00:00:00Z')).toBe(4);
    await save;
  });

  it('keeps the last of two saves of one run, as written in save order', async () => {
    const store = new InMemoryRunStore();
    const first = store.saveRunReport(reportOf('run-6', { n: 1 }));
    const second = store.saveRunReport(reportOf('run-6', { n: 2 }));
    await Promise.all([first, second]);
    expect((await store.getRunReport('run-6'))!.metadata).toEqual({ n: 2 });
    expect(store.usage.reports).toBe(1);
  });

  it('rejects only the save whose report cannot be written', async () => {
    const store = new InMemoryRunStore();
    const good = store.saveRunReport(reportOf('run-7'));
    class Unwritable extends RunReport {
      override toDict(): RunReportData {
        const data = super.toDict();
        return {
          ...data,
          metadata: {
            bad: {
              toJSON: () => {
                throw new Error('no');
              },
            },
          } as never,
        };
      }
    }
    const bad = store.saveRunReport(new Unwritable(reportOf('run-8').toDict()));
    await expect(bad).rejects.toThrow(ValueError);
    await expect(good).resolves.toBeUndefined();
    expect(await store.getRunReport('run-8')).toBeNull();
    expect(await store.getRunReport('run-7')).not.toBeNull();
  });

  it('holds at most 1,024 unwritten reports: a burst past that writes its oldest at once', async () => {
    const policy = new CountingPolicy();
    const store = new InMemoryRunStore({ redactionPolicy: policy });
    const report = reportOf('run-burst');
    const saves: Promise<void>[] = [];
    for (let i = 0; i < 1024; i++) saves.push(store.saveRunReport(report));
    expect(policy.written).toBe(0);
    saves.push(store.saveRunReport(report), store.saveRunReport(report));
    expect(policy.written).toBe(2);
    await Promise.all(saves);
    expect(policy.written).toBe(1026);
  });

  it('writes the pending reports when it closes: their saves resolve', async () => {
    const store = new InMemoryRunStore();
    const save = store.saveRunReport(reportOf('run-9'));
    store.close();
    await expect(save).resolves.toBeUndefined();
    await expect(store.saveRunReport(reportOf('run-10'))).rejects.toThrow(UnavailableError);
  });
});
