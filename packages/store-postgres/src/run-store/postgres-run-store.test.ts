import { createTask, TaskNotCancelableError, type TaskEvent, type TaskState } from '@agent/core';
import { DEFAULT_OWNER, type RunStoreOptions } from '@agent/events';
import { Client, Pool, type PoolClient } from 'pg';
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

/** A `task.status` event of `taskId`. */
function statusOf(taskId: string, state: TaskState, final: boolean, timestamp: string): TaskEvent {
  return { type: 'task.status', task_id: taskId, state, final, timestamp };
}

describe('PostgresRunStore writeTask', () => {
  it('rolls back the whole group when a later append finds the log closed', async () => {
    let now = Date.parse('2026-05-01T00:00:00.000Z');
    const store = new PostgresRunStore({ database, now: () => (now += 1000) });
    try {
      const status = (state: TaskState, final: boolean): TaskEvent =>
        statusOf('ended', state, final, '2026-05-01T00:00:00.000Z');
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

describe('PostgresRunStore round trips', () => {
  /** A store on a pool whose statements are counted, and the task notifications its commits send. */
  async function counted(): Promise<{
    store: PostgresRunStore;
    statements: string[];
    notified: () => Promise<unknown[]>;
    close: () => Promise<void>;
  }> {
    const url = await server.createDatabase();
    const pool = new Pool({ connectionString: url, max: 2 });
    const statements: string[] = [];
    const wrapped = new WeakSet<PoolClient>();
    pool.on('acquire', (client) => {
      if (wrapped.has(client)) return;
      wrapped.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
        statements.push(text.trim().split(/\s+/).slice(0, 2).join(' '));
        return query(...args);
      };
    });
    const store = new PostgresRunStore({ database: new PostgresDatabase({ pool }) });
    await store.listTaskRecords(); // the schema, before anything is counted
    const listener = new Client({ connectionString: url });
    await listener.connect();
    const payloads: unknown[] = [];
    listener.on('notification', (message) => payloads.push(JSON.parse(message.payload ?? 'null')));
    await listener.query('LISTEN agent_task_events');
    statements.length = 0;
    return {
      store,
      statements,
      // A round trip on the listening connection: notifications committed before it have arrived.
      notified: async () => (await listener.query('SELECT 1'), payloads.splice(0)),
      close: async () => {
        await listener.end();
        await store.close();
        await pool.end();
      },
    };
  }

  it("writes a new task's snapshot and first events in four statements, with one notification", async () => {
    const { store, statements, notified, close } = await counted();
    /** The notification of task `trip` at `sequence`. */
    const trip = (sequence: number) => ({
      tenant: DEFAULT_OWNER.tenant,
      principal_id: DEFAULT_OWNER.principal_id,
      task_id: 'trip',
      sequence,
    });
    try {
      await store.writeTask(DEFAULT_OWNER, 'trip', [
        { snapshot: createTask('hi', { id: 'trip', state: 'working' }) },
        { events: [statusOf('trip', 'working', false, '2026-05-01T00:00:00Z')] },
      ]);
      expect(statements).toEqual(['BEGIN', 'INSERT INTO', 'WITH appended', 'COMMIT']);
      // The append's notification carries the later sequence: the snapshot's would only repeat it.
      expect(await notified()).toEqual([trip(1)]);
      expect((await store.listTaskEvents(DEFAULT_OWNER, 'trip')).map((e) => e.sequence)).toEqual([1]);

      statements.length = 0;
      await store.saveTaskSnapshot(createTask('hi', { id: 'trip', state: 'completed' }));
      expect(statements).toEqual(['BEGIN', 'INSERT INTO', 'COMMIT']);
      expect(await notified()).toEqual([trip(1)]);
      expect((await store.getTaskRecord('trip'))?.state).toBe('completed');

      // Appends after a snapshot in one group go on from the sequence the snapshot's statement read.
      statements.length = 0;
      await store.writeTask(DEFAULT_OWNER, 'trip', [
        { snapshot: createTask('hi', { id: 'trip', state: 'completed' }) },
        { events: [statusOf('trip', 'completed', true, '2026-05-01T00:00:01Z')] },
      ]);
      // The record is over: its snapshot only touches it, and the append checks the log is still open.
      expect(statements).toEqual([
        'BEGIN',
        'INSERT INTO',
        'UPDATE agent_tasks',
        'SELECT (e.event::jsonb',
        'WITH appended',
        'COMMIT',
      ]);
      expect(await notified()).toEqual([trip(2)]);
      expect((await store.listTaskEvents(DEFAULT_OWNER, 'trip')).map((e) => e.sequence)).toEqual([1, 2]);
    } finally {
      await close();
    }
  });
});
