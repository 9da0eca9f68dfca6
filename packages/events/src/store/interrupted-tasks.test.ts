import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTask, ProcessRestartedError, ValueError, type Task, type TaskEvent } from '@agent/core';
import { DEFAULT_OWNER } from './run-store.js';
import { SqliteRunStore } from './sqlite-run-store.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'interrupted-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ALICE = { tenant: 'acme', principal_id: 'alice' };
const working = (id: string): TaskEvent => ({
  type: 'task.status',
  task_id: id,
  state: 'working',
  final: false,
  timestamp: '2026-03-01T00:00:00.000Z',
});

async function seed(store: SqliteRunStore, id: string, state: Task['state'], owner = DEFAULT_OWNER) {
  await store.saveTaskSnapshot(createTask(`task ${id}`, { id, state }), { owner });
  await store.appendTaskEvents(owner, id, [working(id)]);
}

describe('SqliteRunStore.finishInterruptedTasks', () => {
  it('finishes the tasks a dead process left running, once, and leaves every other task alone', async () => {
    const path = join(dir, 'restart.db');
    const before = new SqliteRunStore({ path });
    await seed(before, 'submitted-1', 'submitted');
    await seed(before, 'working-1', 'working', ALICE);
    await seed(before, 'waiting-1', 'input-required');
    await seed(before, 'done-1', 'completed');
    const done = await before.getTaskRecord('done-1');
    // The process dies without closing: the next one opens the same file.
    const after = new SqliteRunStore({ path });
    const finished = await after.finishInterruptedTasks(
      new ProcessRestartedError('The process running the task stopped before it finished'),
    );
    expect(finished.map((r) => r.task_id).sort()).toEqual(['submitted-1', 'working-1']);
    for (const record of finished) {
      expect(record.state).toBe('failed');
      expect(record.task.metadata.error).toMatchObject({ code: 'PROCESS_RESTARTED' });
    }
    const log = await after.listTaskEvents(ALICE, 'working-1');
    expect(
      log.map(({ sequence, event }) => [sequence, event.type, 'final' in event ? event.final : undefined]),
    ).toEqual([
      [1, 'task.status', false],
      [2, 'task.error', undefined],
      [3, 'task.status', true],
    ]);
    expect((await after.getTaskRecord('waiting-1'))?.state).toBe('input-required');
    expect(await after.getTaskRecord('done-1')).toEqual(done);
    // Nothing is left to finish: a second start (or a second process) changes nothing.
    expect(await after.finishInterruptedTasks(new ProcessRestartedError())).toEqual([]);
    expect(await after.listTaskEvents(ALICE, 'working-1')).toHaveLength(3);
    await expect(after.finishInterruptedTasks(new Error('x') as never)).rejects.toBeInstanceOf(ValueError);
    before.close();
    after.close();
  });
});
