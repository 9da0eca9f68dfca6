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
  const AT = '2026-05-01T00:00:00Z';
  /** The notification a commit sends for the owner's task `taskId` at `sequence`. */
  const notification = (taskId: string, sequence: number) => ({
    tenant: DEFAULT_OWNER.tenant,
    principal_id: DEFAULT_OWNER.principal_id,
    task_id: taskId,
    sequence,
  });

  /** A store on a pool whose statements are counted, and the task notifications its commits send. */
  async function counted(options: RunStoreOptions = {}): Promise<{
    url: string;
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
    const store = new PostgresRunStore({ ...options, database: new PostgresDatabase({ pool }) });
    await store.listTaskRecords(); // the schema, before anything is counted
    const listener = new Client({ connectionString: url });
    await listener.connect();
    const payloads: unknown[] = [];
    listener.on('notification', (message) => payloads.push(JSON.parse(message.payload ?? 'null')));
    await listener.query('LISTEN agent_task_events');
    statements.length = 0;
    return {
      url,
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

  it("writes a new task's snapshot and first events in one statement, with one notification", async () => {
    const { store, statements, notified, close } = await counted();
    const trip = (sequence: number) => notification('trip', sequence);
    try {
      await store.writeTask(DEFAULT_OWNER, 'trip', [
        { snapshot: createTask('hi', { id: 'trip', state: 'working' }) },
        { events: [statusOf('trip', 'working', false, AT)] },
      ]);
      expect(statements).toEqual(['WITH written']);
      // The append's notification carries the later sequence: the snapshot's would only repeat it.
      expect(await notified()).toEqual([trip(1)]);
      expect((await store.listTaskEvents(DEFAULT_OWNER, 'trip')).map((e) => e.sequence)).toEqual([1]);

      statements.length = 0;
      await store.saveTaskSnapshot(createTask('hi', { id: 'trip', state: 'completed' }));
      expect(statements).toEqual(['WITH written']);
      expect(await notified()).toEqual([trip(1)]);
      expect((await store.getTaskRecord('trip'))?.state).toBe('completed');

      // Appends after a snapshot in one group go on from the sequence the snapshot's statement read.
      statements.length = 0;
      await store.writeTask(DEFAULT_OWNER, 'trip', [
        { snapshot: createTask('hi', { id: 'trip', state: 'completed' }) },
        { events: [statusOf('trip', 'completed', true, '2026-05-01T00:00:01Z')] },
      ]);
      // The record is over: the one statement writes nothing, and in the transaction the snapshot only
      // touches it and the append checks the log is still open.
      expect(statements).toEqual([
        'WITH written',
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

  it('appends to a live record in one statement, and leaves an ended one to the transaction', async () => {
    const { store, statements, notified, close } = await counted();
    try {
      await store.saveTaskSnapshot(createTask('hi', { id: 'live', state: 'working' }));
      await notified();
      statements.length = 0;
      expect(
        await store.appendTaskEvents(DEFAULT_OWNER, 'live', [
          statusOf('live', 'working', false, AT),
          statusOf('live', 'working', false, AT),
        ]),
      ).toEqual([1, 2]);
      expect(statements).toEqual(['WITH written']);
      expect(await notified()).toEqual([notification('live', 2)]);

      await store.writeTask(DEFAULT_OWNER, 'live', [{ events: [statusOf('live', 'completed', true, AT)] }]);
      await store.saveTaskSnapshot(createTask('hi', { id: 'live', state: 'completed' }));
      statements.length = 0;
      await expect(
        store.appendTaskEvents(DEFAULT_OWNER, 'live', [statusOf('live', 'working', false, AT)]),
      ).rejects.toThrow(TaskNotCancelableError);
      expect(statements.slice(0, 3)).toEqual(['WITH written', 'BEGIN', 'SELECT state,']);
      expect((await store.listTaskEvents(DEFAULT_OWNER, 'live')).map((e) => e.sequence)).toEqual([1, 2, 3]);
      await expect(
        store.appendTaskEvents(DEFAULT_OWNER, 'missing', [statusOf('missing', 'working', false, AT)]),
      ).rejects.toThrow(expect.objectContaining({ code: 'TASK_NOT_FOUND' }));
    } finally {
      await close();
    }
  });

  it('ends no task whose log a final status closed, though its record is still live', async () => {
    const { store, statements, close } = await counted();
    try {
      await store.saveTaskSnapshot(createTask('hi', { id: 'closed', state: 'working' }));
      await store.appendTaskEvents(DEFAULT_OWNER, 'closed', [statusOf('closed', 'completed', true, AT)]);
      const before = await store.getTaskRecord('closed');
      statements.length = 0;
      await expect(
        store.writeTask(DEFAULT_OWNER, 'closed', [
          { snapshot: createTask('hi', { id: 'closed', state: 'failed' }) },
          { events: [statusOf('closed', 'failed', true, AT)] },
        ]),
      ).rejects.toThrow(TaskNotCancelableError);
      // The one statement saw the closed log and wrote nothing; the transaction refused and rolled back.
      expect(statements[0]).toBe('WITH written');
      expect(statements.at(-1)).toBe('ROLLBACK');
      expect(await store.getTaskRecord('closed')).toEqual(before);
      expect((await store.listTaskEvents(DEFAULT_OWNER, 'closed')).map((e) => e.sequence)).toEqual([1]);
    } finally {
      await close();
    }
  });

  it('leaves the ending to the transaction when a final status lands while the statement waits', async () => {
    const { url, store, close } = await counted();
    const other = new Client({ connectionString: url });
    await other.connect();
    try {
      await store.saveTaskSnapshot(createTask('hi', { id: 'race', state: 'working' }));
      await store.appendTaskEvents(DEFAULT_OWNER, 'race', [statusOf('race', 'working', false, AT)]);
      // Another writer holds the record and closes its log (the record still live) while ours waits.
      await other.query('BEGIN');
      await other.query(`UPDATE agent_tasks SET event_count = 2 WHERE task_id = 'race'`);
      await other.query(
        `INSERT INTO agent_task_events (tenant, principal_id, task_id, sequence, event) VALUES ($1, $2, 'race', 2, $3)`,
        [
          DEFAULT_OWNER.tenant,
          DEFAULT_OWNER.principal_id,
          JSON.stringify(statusOf('race', 'completed', true, AT)),
        ],
      );
      const ending = store.writeTask(DEFAULT_OWNER, 'race', [
        { snapshot: createTask('hi', { id: 'race', state: 'failed' }) },
        { events: [statusOf('race', 'failed', true, AT)] },
      ]);
      const outcome = ending.then(
        () => 'written',
        (error: { code?: string }) => error.code,
      );
      // Committed only once our statement is waiting for the row: its snapshot predates the event.
      for (;;) {
        const { rows } = await other.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH written%'`,
        );
        if (rows[0]!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await other.query('COMMIT');
      expect(await outcome).toBe('TASK_NOT_CANCELABLE');
      expect((await store.getTaskRecord('race'))?.state).toBe('working');
      expect(
        (await store.listTaskEvents(DEFAULT_OWNER, 'race')).map((e) => (e.event as { state?: string }).state),
      ).toEqual(['working', 'completed']);
    } finally {
      await other.end();
      await close();
    }
  });

  it('with a retention, still writes a run in one statement, and deletes expired records once a second', async () => {
    let now = Date.parse('2026-05-01T00:00:00.000Z');
    const { url, store, statements, close } = await counted({ taskRetentionMs: 500, now: () => now });
    const rows = new Client({ connectionString: url });
    await rows.connect();
    const stored = async () =>
      (await rows.query<{ id: string }>('SELECT task_id AS id FROM agent_tasks ORDER BY 1')).rows.map(
        (r) => r.id,
      );
    const run = (id: string) =>
      store.writeTask(DEFAULT_OWNER, id, [
        { snapshot: createTask('hi', { id, state: 'completed' }) },
        { events: [statusOf(id, 'completed', true, AT)] },
      ]);
    try {
      await run('old');
      expect(statements).toEqual(['DELETE FROM', 'WITH written']);
      statements.length = 0;
      now += 600;
      await run('new');
      // Expired already, and hidden from reads at once; deleted by the next sweep, a second after the last.
      expect(statements).toEqual(['WITH written']);
      expect(await store.getTaskRecord('old')).toBeNull();
      expect(await stored()).toEqual(['new', 'old']);
      statements.length = 0;
      now += 400;
      await run('newer');
      expect(statements).toEqual(['DELETE FROM', 'WITH written']);
      expect(await stored()).toEqual(['new', 'newer']);
      expect(await store.listTaskEvents(DEFAULT_OWNER, 'new')).toHaveLength(1);
    } finally {
      await rows.end();
      await close();
    }
  });
});
