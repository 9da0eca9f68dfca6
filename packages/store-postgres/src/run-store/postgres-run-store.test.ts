import { createTask, TaskNotCancelableError, type TaskEvent, type TaskState } from '@agent/core';
import { DEFAULT_OWNER, type RunStoreOptions } from '@agent/events';
import { describeRunStore, describeTaskWrites } from '@agent/events/testing';
import { PostgresDatabase } from '../database.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import { PostgresRunStore } from './postgres-run-store.js';

let server: TestPostgres;
let database: PostgresDatabase;
beforeAll(async () => {
  server = await startTestPostgres();
  database = new PostgresDatabase({ connectionString: await server.createDatabase() });
  await database.ready();
}, 60_000);
afterAll(async () => {
  await database?.close();
  await server?.stop();
});

// The suite opens an empty store for every test: the stores share one database, emptied before each.
beforeEach(async () => {
  await database.query('TRUNCATE agent_task_events, agent_tasks, agent_run_reports');
});

const harness = {
  open: (options?: RunStoreOptions) => new PostgresRunStore({ ...options, database }),
};
describeRunStore('PostgresRunStore', harness);
describeTaskWrites('PostgresRunStore', harness);

describe('PostgresRunStore writeTask', () => {
  it('rolls back the whole group when a later append finds the log closed', async () => {
    let now = Date.parse('2026-05-01T00:00:00.000Z');
    const store = new PostgresRunStore({ database, now: () => (now += 1000) });
    try {
      const status = (state: TaskState, final: boolean): TaskEvent => ({
        type: 'task.status',
        task_id: 'ended',
        state,
        final,
        timestamp: '2026-05-01T00:00:00.000Z',
      });
      await store.saveTaskSnapshot(createTask('hi', { id: 'ended' }));
      await store.appendTaskEvents(DEFAULT_OWNER, 'ended', [status('completed', true)]);
      await store.saveTaskSnapshot(createTask('hi', { id: 'ended', state: 'completed' }));
      const before = await store.getTaskRecord('ended');
      // The snapshot alone would move updated_at; the append after it is refused.
      await expect(
        store.writeTask(DEFAULT_OWNER, 'ended', [
          { snapshot: createTask('hi', { id: 'ended', state: 'completed' }) },
          { events: [status('working', false)] },
        ]),
      ).rejects.toThrow(TaskNotCancelableError);
      expect(await store.getTaskRecord('ended')).toEqual(before);
      expect((await store.listTaskEvents(DEFAULT_OWNER, 'ended')).map((e) => e.sequence)).toEqual([1]);
    } finally {
      await store.close();
    }
  });
});
