import { createTask, ValueError, type Task, type TaskEvent } from '@agent/core';
import { RunRecorder } from '../run-recorder.js';
import { completedRun, runContext } from '../test-support/fixtures.js';
import { InMemoryRunStore } from './in-memory-run-store.js';
import { DEFAULT_OWNER } from './run-store.js';

const FAR_FUTURE = '2999-01-01T00:00:00Z';

function progress(taskId: string, i: number): TaskEvent {
  return {
    type: 'task.progress',
    task_id: taskId,
    timestamp: '2026-01-01T00:00:00.000Z',
    summary: `step ${i} of the long run — ☃`,
  } as TaskEvent;
}

/** A task that logged `events` progress events and then finished, as a runtime leaves it. */
async function finishedWithLog(store: InMemoryRunStore, id: string, events: number): Promise<Task> {
  const task = createTask(`stream ${events}`, { id, state: 'working' });
  await store.saveTaskSnapshot(task);
  for (let i = 0; i < events; i += 100) {
    const batch = Array.from({ length: Math.min(100, events - i) }, (_, j) => progress(id, i + j));
    await store.appendTaskEvents(DEFAULT_OWNER, id, batch);
  }
  const done: Task = {
    ...task,
    state: 'completed',
    artifacts: Array.from({ length: 200 }, (_, i) => ({
      id: `a${i}`,
      parts: [{ type: 'text', content: `chunk ${i}` }],
      metadata: {},
    })),
  } as Task;
  await store.saveTaskSnapshot(done);
  return done;
}

function bigReport(runId: string, artifacts: number) {
  const context = runContext({ run_id: runId });
  const recorder = new RunRecorder({ context, maxStreamedEvents: artifacts + 10 });
  for (const event of completedRun(`task-${runId}`, context).events) recorder.recordTaskEvent(event);
  for (let i = 0; i < artifacts; i++)
    recorder.recordTaskEvent({
      type: 'task.artifact',
      task_id: `task-${runId}`,
      append: false,
      artifact: { id: `a${i}`, parts: [{ type: 'text', content: `part ${i} — ☃ 😀` }], metadata: {} },
    } as unknown as TaskEvent);
  return recorder.toReport();
}

describe('InMemoryRunStore compression of finished records', () => {
  it('compresses a finished task and its long log, and reads back exactly what it stored', async () => {
    const store = new InMemoryRunStore();
    await finishedWithLog(store, 'long', 3000);
    const before = {
      record: await store.getTaskRecord('long'),
      events: await store.listTaskEvents(DEFAULT_OWNER, 'long'),
      bytes: store.usage.bytes,
    };
    await store.settled();
    expect(store.usage.bytes).toBeLessThan(before.bytes / 5);
    expect(await store.getTaskRecord('long')).toEqual(before.record);
    expect(await store.listTaskEvents(DEFAULT_OWNER, 'long')).toEqual(before.events);
    // Pages that start, end and cross inside chunks read the same events as before.
    for (const [after, limit] of [
      [0, 1],
      [5, 100],
      [777, 1000],
      [2990, 50],
      [3000, 10],
    ] as const) {
      expect(await store.listTaskEvents(DEFAULT_OWNER, 'long', { after, limit })).toEqual(
        before.events.slice(after, after + limit),
      );
    }
    expect((await store.listTaskRecords()).map((r) => r.task)).toEqual([before.record!.task]);
    expect((await store.pageTaskRecords()).records).toEqual([before.record]);
    await store.deleteBefore(FAR_FUTURE);
    expect(store.usage).toEqual({ tasks: 0, reports: 0, bytes: 0 });
  });

  it('continues the sequence after the packed events when a finished task logs more', async () => {
    const store = new InMemoryRunStore({ compressAboveBytes: 1024 });
    await finishedWithLog(store, 'after', 500);
    await store.settled();
    const packed = store.usage.bytes;
    const late = Array.from({ length: 300 }, (_, i) => progress('after', 500 + i));
    const sequences = await store.appendTaskEvents(DEFAULT_OWNER, 'after', late);
    expect(sequences).toEqual(Array.from({ length: 300 }, (_, i) => 501 + i));
    expect(store.usage.bytes).toBeGreaterThan(packed);
    const read = async () =>
      (await store.listTaskEvents(DEFAULT_OWNER, 'after', { after: 450, limit: 200 })).map((e) => [
        e.sequence,
        (e.event as { summary?: string }).summary,
      ]);
    const mixed = await read();
    expect(mixed).toEqual(
      Array.from({ length: 200 }, (_, i) => [451 + i, `step ${450 + i} of the long run — ☃`]),
    );
    // The late events pack too, and the log reads the same across the old and new chunks.
    await store.settled();
    expect(await read()).toEqual(mixed);
    expect(await store.listTaskEvents(DEFAULT_OWNER, 'after')).toHaveLength(800);
    await store.deleteBefore(FAR_FUTURE);
    expect(store.usage.bytes).toBe(0);
  });

  it('leaves a running task as text: only finished records are cold', async () => {
    const store = new InMemoryRunStore();
    await store.saveTaskSnapshot(createTask('run', { id: 'live', state: 'working' }));
    for (let i = 0; i < 3000; i += 100)
      await store.appendTaskEvents(
        DEFAULT_OWNER,
        'live',
        Array.from({ length: 100 }, (_, j) => progress('live', i + j)),
      );
    const bytes = store.usage.bytes;
    await store.settled();
    expect(store.usage.bytes).toBe(bytes);
  });

  it('compresses a big run report and reads it back equal', async () => {
    const store = new InMemoryRunStore();
    const report = bigReport('run-big', 2000);
    await store.saveRunReport(report);
    const before = store.usage.bytes;
    await store.settled();
    expect(store.usage.bytes).toBeLessThan(before / 5);
    expect((await store.getRunReport('run-big'))!.toDict()).toEqual(report.toDict());
    expect((await store.listRunReports()).map((r) => r.toDict())).toEqual([report.toDict()]);
    await store.deleteBefore(FAR_FUTURE);
    expect(store.usage).toEqual({ tasks: 0, reports: 0, bytes: 0 });
  });

  it('keeps small records as text, and everything as text with compressAboveBytes Infinity', async () => {
    const small = new InMemoryRunStore();
    await small.saveTaskSnapshot(createTask('echo hi', { id: 's', state: 'completed' }));
    // A task that logged 1,000 events (about 100 KB of JSON) is under the default 256 KiB too.
    await finishedWithLog(small, 'medium', 1000);
    const smallBytes = small.usage.bytes;
    expect(smallBytes).toBeGreaterThan(64 * 1024);
    await small.settled();
    expect(small.usage.bytes).toBe(smallBytes);

    const off = new InMemoryRunStore({ compressAboveBytes: Infinity });
    await finishedWithLog(off, 'long', 2000);
    await off.saveRunReport(bigReport('run-off', 1000));
    const bytes = off.usage.bytes;
    await off.settled();
    expect(off.usage.bytes).toBe(bytes);
  });

  it('holds more finished tasks in the same maxBytes once they are compressed', async () => {
    const maxBytes = 2 * 1024 * 1024;
    const kept = async (compressAboveBytes: number) => {
      const store = new InMemoryRunStore({ maxBytes, compressAboveBytes });
      for (let i = 0; i < 20; i++) {
        await finishedWithLog(store, `t${i}`, 2000);
        await store.settled();
        expect(store.usage.bytes).toBeLessThanOrEqual(maxBytes);
      }
      return store.usage.tasks;
    };
    const asText = await kept(Infinity);
    expect(asText).toBeLessThan(10);
    expect(await kept(16 * 1024)).toBe(20);
  });

  it('keeps its byte count exact when a record is replaced, evicted or closed while compressing', async () => {
    const store = new InMemoryRunStore({ maxBytes: 1024 * 1024 });
    const done = await finishedWithLog(store, 'swap', 2000);
    // Replaced before the compression lands: the new snapshot is what reads see.
    await store.saveTaskSnapshot({ ...done, metadata: { note: 'second' } });
    await store.saveRunReport(bigReport('run-a', 1000));
    await store.saveRunReport(bigReport('run-a', 1200));
    // Evicted before its turn: a burst of big finished tasks pushes the first ones out.
    for (let i = 0; i < 8; i++) await finishedWithLog(store, `burst${i}`, 1500);
    await store.settled();
    expect((await store.getTaskRecord('burst7'))!.task.state).toBe('completed');
    const swapped = await store.getTaskRecord('swap');
    if (swapped) expect(swapped.task.metadata).toEqual({ note: 'second' });
    const report = await store.getRunReport('run-a');
    if (report) expect(report.toDict().events).toHaveLength(bigReport('run-a', 1200).toDict().events.length);
    expect(store.usage.bytes).toBeLessThanOrEqual(1024 * 1024);
    await store.deleteBefore(FAR_FUTURE);
    expect(store.usage).toEqual({ tasks: 0, reports: 0, bytes: 0 });

    await finishedWithLog(store, 'closing', 2000);
    store.close();
    await store.settled();
    expect(store.usage).toEqual({ tasks: 0, reports: 0, bytes: 0 });
  });

  it('rejects a bad compressAboveBytes with ValueError', () => {
    for (const compressAboveBytes of [0, -1, 1.5, NaN, '16k' as never])
      expect(() => new InMemoryRunStore({ compressAboveBytes })).toThrow(ValueError);
  });
});
