// Several run stores over one database, as replicas use it: concurrent appends, an ending that is
// final, the ending of a lost task exactly once, and the notifications watchers wake on.
import { createTask, TaskNotCancelableError, type Task, type TaskEvent } from '@agent/core';
import type { TaskOwner } from '@agent/events';
import { Client } from 'pg';
import { PostgresDatabase } from '../database.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import { PostgresRunStore } from './postgres-run-store.js';
import { finishTaskInTransaction } from './task-ending.js';

const ALICE: TaskOwner = { tenant: 'acme', principal_id: 'alice' };

let server: TestPostgres;
let url: string;
/** Two pools on one database: two replicas. */
let first: PostgresDatabase;
let second: PostgresDatabase;
let here: PostgresRunStore;
let there: PostgresRunStore;
beforeAll(async () => {
  server = await startTestPostgres();
  url = await server.createDatabase();
  first = new PostgresDatabase({ connectionString: url });
  second = new PostgresDatabase({ connectionString: url });
  here = new PostgresRunStore({ database: first });
  there = new PostgresRunStore({ database: second });
  await Promise.all([first.ready(), second.ready()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([here?.close(), there?.close()]);
  await Promise.all([first?.close(), second?.close()]);
  await server?.stop();
});

let taskCount = 0;
function newTask(state: Task['state'] = 'working'): Task {
  return createTask('hi', { id: `task-${(taskCount += 1)}`, state });
}

function status(task: Task, state: Task['state'], final = false): TaskEvent {
  return { type: 'task.status', task_id: task.id, state, final, timestamp: new Date().toISOString() };
}

it('numbers concurrent appends from two stores on two pools 1..N without gaps', async () => {
  const task = newTask();
  await here.saveTaskSnapshot(task, { owner: ALICE });
  const appends = Array.from({ length: 30 }, (_, i) =>
    (i % 2 === 0 ? here : there).appendTaskEvents(ALICE, task.id, [
      status(task, 'working'),
      status(task, 'working'),
    ]),
  );
  const given = (await Promise.all(appends)).flat().sort((a, b) => a - b);
  expect(given).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
  const log = await there.listTaskEvents(ALICE, task.id);
  expect(log.map((entry) => entry.sequence)).toEqual(given);
});

describe('an ending is final', () => {
  it('keeps a terminal record against a later snapshot, whichever store saves it', async () => {
    const task = newTask();
    await here.saveTaskSnapshot(task, { owner: ALICE });
    await here.saveTaskSnapshot({ ...task, state: 'completed' }, { owner: ALICE });
    const ended = (await here.getTaskRecord(task.id, ALICE))!;
    await there.saveTaskSnapshot({ ...task, state: 'working' }, { owner: ALICE, agentName: 'late' });
    await there.saveTaskSnapshot({ ...task, state: 'failed' }, { owner: ALICE });
    const after = (await there.getTaskRecord(task.id, ALICE))!;
    expect(after).toEqual({ ...ended, updated_at: after.updated_at });
    expect(after.updated_at >= ended.updated_at).toBe(true);
  });

  it('takes the final status after a terminal snapshot, and nothing after the final status', async () => {
    const task = newTask();
    await here.saveTaskSnapshot(task, { owner: ALICE });
    // A writer may save the final snapshot before it appends the final status.
    await here.saveTaskSnapshot({ ...task, state: 'completed' }, { owner: ALICE });
    expect(await here.appendTaskEvents(ALICE, task.id, [status(task, 'completed', true)])).toEqual([1]);
    const late = await there.appendTaskEvents(ALICE, task.id, [status(task, 'failed', true)]).catch((e) => e);
    expect(late).toBeInstanceOf(TaskNotCancelableError);
    expect(late.code).toBe('TASK_NOT_CANCELABLE');
    expect((await here.listTaskEvents(ALICE, task.id)).map((entry) => entry.sequence)).toEqual([1]);
  });

  it('lets a non-terminal record take events after a final status (a continued task)', async () => {
    const task = newTask('input-required');
    await here.saveTaskSnapshot(task, { owner: ALICE });
    await here.appendTaskEvents(ALICE, task.id, [status(task, 'input-required', true)]);
    expect(await there.appendTaskEvents(ALICE, task.id, [status(task, 'working')])).toEqual([2]);
  });
});

describe('finishTaskInTransaction', () => {
  async function finish(database: PostgresDatabase, task: Task): Promise<boolean> {
    const events = [status(task, 'failed', true)];
    return database.transaction((client) =>
      finishTaskInTransaction(
        client,
        ALICE,
        task.id,
        events,
        { ...task, state: 'failed' },
        here.redactionPolicy,
        new Date().toISOString(),
      ),
    );
  }

  it('ends a task once when two callers race', async () => {
    const task = newTask();
    await here.saveTaskSnapshot(task, { owner: ALICE });
    await here.appendTaskEvents(ALICE, task.id, [status(task, 'working')]);
    const results = await Promise.all([finish(first, task), finish(second, task), finish(first, task)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await here.getTaskRecord(task.id, ALICE))!.state).toBe('failed');
    const log = await here.listTaskEvents(ALICE, task.id);
    expect(log.map((entry) => [entry.sequence, entry.event.type])).toEqual([
      [1, 'task.status'],
      [2, 'task.status'],
    ]);
    // The writer that lost the task can no longer add to it.
    await expect(there.appendTaskEvents(ALICE, task.id, [status(task, 'completed', true)])).rejects.toThrow(
      TaskNotCancelableError,
    );
  });

  it('leaves a missing or finished task alone', async () => {
    const task = newTask('completed');
    expect(await finish(first, task)).toBe(false);
    await here.saveTaskSnapshot(task, { owner: ALICE });
    expect(await finish(first, task)).toBe(false);
    expect(await here.listTaskEvents(ALICE, task.id)).toEqual([]);
  });

  it('stores the same text as the store itself', async () => {
    const secret = { ...newTask(), metadata: { api_key: 'sk-live-1' } };
    await here.saveTaskSnapshot(secret, { owner: ALICE });
    expect(await finish(second, secret)).toBe(true);
    const rows = await first.query<{ task: string }>('SELECT task FROM agent_tasks WHERE task_id = $1', [
      secret.id,
    ]);
    expect(rows.rows[0]!.task).toBe(here.redactionPolicy!.redactedJson({ ...secret, state: 'failed' }));
  });
});

it('notifies agent_task_events at commit with the last sequence, on appends and on snapshots', async () => {
  const listener = new Client({ connectionString: url });
  await listener.connect();
  try {
    const payloads: unknown[] = [];
    listener.on('notification', (message) => payloads.push(JSON.parse(message.payload!)));
    await listener.query('LISTEN agent_task_events');
    const task = newTask();
    await here.saveTaskSnapshot(task, { owner: ALICE });
    await there.appendTaskEvents(ALICE, task.id, [status(task, 'working'), status(task, 'working')]);
    await here.saveTaskSnapshot({ ...task, state: 'completed' }, { owner: ALICE });
    // A refused append (an unknown task) rolls back, and sends nothing.
    await here.appendTaskEvents(ALICE, 'missing', []).catch(() => undefined);
    await listener.query('SELECT 1');
    const key = { tenant: 'acme', principal_id: 'alice', task_id: task.id };
    expect(payloads).toEqual([
      { ...key, sequence: 0 },
      { ...key, sequence: 2 },
      { ...key, sequence: 2 },
    ]);
  } finally {
    await listener.end();
  }
});
