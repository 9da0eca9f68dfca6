import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  createTask,
  TaskNotFoundError,
  UnavailableError,
  ValueError,
  type AgentError,
  type TaskEvent,
} from '@agent/core';
import { RunRecorder } from '../run-recorder.js';
import { completedRun } from '../test-support/fixtures.js';
import { DEFAULT_OWNER } from './run-store.js';
import { SqliteGroupCommit } from './sqlite-group-commit.js';
import { MAX_BATCH_WRITES, SqliteRunStore } from './sqlite-run-store.js';

let dir: string;
let files = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sqlite-group-commit-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A store on a fresh file, and a second connection to it: what another process would see. */
function open(options: { busyTimeoutMs?: number } = {}): {
  store: SqliteRunStore;
  other: Database.Database;
  path: string;
} {
  const path = join(dir, `store-${(files += 1)}.db`);
  const store = new SqliteRunStore({ path, ...options });
  return { store, other: new Database(path), path };
}

const status = (taskId: string, state = 'working'): TaskEvent => ({
  type: 'task.status',
  task_id: taskId,
  state: state as 'working',
  final: false,
  timestamp: '2026-05-01T00:00:00.000Z',
});

function storedTasks(db: Database.Database): string[] {
  return db.prepare('SELECT task_id FROM task_records ORDER BY task_id').pluck().all() as string[];
}

function storedSequences(db: Database.Database, taskId: string): number[] {
  return db
    .prepare(
      `SELECT e.sequence FROM task_events e JOIN task_records r ON e.task_row = r.row_id
         WHERE r.task_id = ? ORDER BY e.sequence`,
    )
    .pluck()
    .all(taskId) as number[];
}

describe('SqliteRunStore group commit', () => {
  it('commits the writes of one turn together, all of them, and each only once committed', async () => {
    const { store, other } = open();
    try {
      const writes = Array.from({ length: 20 }, (_, i) =>
        store.saveTaskSnapshot(createTask('x', { id: `t-${String(i).padStart(2, '0')}` })),
      );
      // Queued, not written: another connection sees nothing yet.
      expect(storedTasks(other)).toEqual([]);
      // At the moment a write resolves, its row is in the file.
      const seen = await Promise.all(
        writes.map((write, i) => write.then(() => storedTasks(other).length > i)),
      );
      expect(seen.every(Boolean)).toBe(true);
      expect(storedTasks(other)).toHaveLength(20);
    } finally {
      other.close();
      store.close();
    }
  });

  it('commits a full batch at once, in the call that fills it', async () => {
    const { store, other } = open();
    try {
      const writes = Array.from({ length: MAX_BATCH_WRITES + 3 }, (_, i) =>
        store.saveTaskSnapshot(createTask('x', { id: `full-${i}` })),
      );
      expect(storedTasks(other)).toHaveLength(MAX_BATCH_WRITES);
      await Promise.all(writes);
      expect(storedTasks(other)).toHaveLength(MAX_BATCH_WRITES + 3);
    } finally {
      other.close();
      store.close();
    }
  });

  it('keeps the order of the writes to one task', async () => {
    const { store, other } = open();
    try {
      const saved = store.saveTaskSnapshot(createTask('x', { id: 'ordered', state: 'submitted' }));
      const first = store.appendTaskEvents(DEFAULT_OWNER, 'ordered', [status('ordered'), status('ordered')]);
      const resaved = store.saveTaskSnapshot(createTask('x', { id: 'ordered', state: 'working' }));
      const second = store.appendTaskEvents(DEFAULT_OWNER, 'ordered', [status('ordered')]);
      const last = store.saveTaskSnapshot(createTask('x', { id: 'ordered', state: 'completed' }));
      await Promise.all([saved, resaved, last]);
      expect(await first).toEqual([1, 2]);
      expect(await second).toEqual([3]);
      expect(other.prepare("SELECT state FROM task_records WHERE task_id = 'ordered'").pluck().get()).toBe(
        'completed',
      );
    } finally {
      other.close();
      store.close();
    }
  });

  it('rejects a failing write alone; the others of its batch are committed', async () => {
    const { store, other } = open();
    // A write SQLite itself refuses (the trigger stands in for a constraint), and one that fails
    // after its first statement: neither may leave anything behind, nor take the others with it.
    other.exec(`
      CREATE TRIGGER refuse_poison BEFORE INSERT ON task_records WHEN NEW.task_id = 'poison'
        BEGIN SELECT RAISE(ABORT, 'poison refused'); END;
      CREATE TRIGGER refuse_second BEFORE INSERT ON task_events
        WHEN NEW.task_row = (SELECT row_id FROM task_records WHERE task_id = 'half') AND NEW.sequence = 2
        BEGIN SELECT RAISE(ABORT, 'second event refused'); END;`);
    try {
      await store.saveTaskSnapshot(createTask('x', { id: 'half' }));
      const results = await Promise.allSettled([
        store.saveTaskSnapshot(createTask('x', { id: 'before' })),
        store.saveTaskSnapshot(createTask('x', { id: 'poison' })),
        store.appendTaskEvents(DEFAULT_OWNER, 'unknown', [status('unknown')]),
        store.appendTaskEvents(DEFAULT_OWNER, 'half', [status('half'), status('half')]),
        store.appendTaskEvents(DEFAULT_OWNER, 'before', [status('before')]),
        store.saveTaskSnapshot(createTask('x', { id: 'after' })),
      ]);
      expect(results.map((result) => result.status)).toEqual([
        'fulfilled',
        'rejected',
        'rejected',
        'rejected',
        'fulfilled',
        'fulfilled',
      ]);
      const reasons = results.map((result) => (result.status === 'rejected' ? result.reason : undefined));
      expect(reasons[1]).toBeInstanceOf(UnavailableError);
      expect(reasons[1]).toMatchObject({
        message: expect.stringMatching(/saveTaskSnapshot: poison refused/),
      });
      expect(reasons[2]).toBeInstanceOf(TaskNotFoundError);
      expect(reasons[3]).toMatchObject({ message: expect.stringMatching(/second event refused/) });
      expect(storedTasks(other)).toEqual(['after', 'before', 'half']);
      expect(storedSequences(other, 'half')).toEqual([]);
      expect(storedSequences(other, 'before')).toEqual([1]);
    } finally {
      other.close();
      store.close();
    }
  });

  it('rejects bad input in the call, before anything is queued, and only that caller', async () => {
    const { store, other } = open();
    try {
      const good = store.saveTaskSnapshot(createTask('x', { id: 'good' }));
      const bad = store.appendTaskEvents(DEFAULT_OWNER, 'good', 'not events' as never);
      const cyclic = createTask('x', { id: 'cyclic' });
      cyclic.metadata.self = cyclic;
      const raw = new SqliteRunStore({ path: ':memory:', redactionPolicy: null });
      await expect(bad).rejects.toBeInstanceOf(ValueError);
      await expect(raw.saveTaskSnapshot(cyclic)).rejects.toBeInstanceOf(ValueError);
      raw.close();
      await good;
      expect(storedTasks(other)).toEqual(['good']);
    } finally {
      other.close();
      store.close();
    }
  });

  it('lets a read see the queued writes it could see, and leaves the others queued', async () => {
    const { store, other } = open();
    try {
      const { events, context } = completedRun('task-r');
      const recorder = new RunRecorder({ context });
      for (const event of events) recorder.recordTaskEvent(event);
      const writes: Promise<unknown>[] = [
        store.saveTaskSnapshot(createTask('x', { id: 'queued', metadata: { session_id: 's' } })),
        store.saveRunReport(recorder.toReport()),
      ];
      // A read of another task has nothing to wait for: the batch stays queued.
      expect(await store.getTaskRecord('elsewhere')).toBeNull();
      expect(storedTasks(other)).toEqual([]);
      expect((await store.getTaskRecord('queued'))?.task_id).toBe('queued');
      expect(storedTasks(other)).toEqual(['queued']);

      writes.push(store.appendTaskEvents(DEFAULT_OWNER, 'queued', [status('queued')]));
      expect((await store.listTaskEvents(DEFAULT_OWNER, 'queued')).map((e) => e.sequence)).toEqual([1]);
      writes.push(store.saveTaskSnapshot(createTask('x', { id: 'listed', metadata: { session_id: 's' } })));
      expect((await store.listTaskRecords({ sessionId: 's' })).map((r) => r.task_id).sort()).toEqual([
        'listed',
        'queued',
      ]);
      expect(await store.getRunReport('run-1')).not.toBeNull();
      await Promise.all(writes);
    } finally {
      other.close();
      store.close();
    }
  });

  it('commits the queued writes on close', async () => {
    const { store, other, path } = open();
    try {
      const writes = [
        store.saveTaskSnapshot(createTask('x', { id: 'closing' })),
        store.appendTaskEvents(DEFAULT_OWNER, 'closing', [status('closing')]),
      ];
      store.close();
      await Promise.all(writes);
      expect(storedTasks(other)).toEqual(['closing']);
      const reopened = new SqliteRunStore({ path });
      expect(await reopened.listTaskEvents(DEFAULT_OWNER, 'closing')).toHaveLength(1);
      reopened.close();
      await expect(store.saveTaskSnapshot(createTask('x'))).rejects.toThrow(/closed/);
    } finally {
      other.close();
    }
  });

  it('fails the whole batch with UNAVAILABLE while another connection holds the lock, and loses nothing after', async () => {
    const { store, other } = open({ busyTimeoutMs: 0 });
    try {
      await store.saveTaskSnapshot(createTask('x', { id: 'kept' }));
      other.exec('BEGIN IMMEDIATE');
      const locked = await Promise.allSettled([
        store.saveTaskSnapshot(createTask('x', { id: 'locked-1' })),
        store.appendTaskEvents(DEFAULT_OWNER, 'kept', [status('kept')]),
        store.saveTaskSnapshot(createTask('x', { id: 'locked-2' })),
      ]);
      for (const result of locked) {
        expect(result.status).toBe('rejected');
        const error = (result as PromiseRejectedResult).reason as AgentError;
        expect(error).toBeInstanceOf(UnavailableError);
        expect(error.data).toMatchObject({ sqlite_code: 'SQLITE_BUSY' });
      }
      // Readers are not blocked by a writer in WAL mode.
      expect((await store.getTaskRecord('kept'))?.task_id).toBe('kept');
      other.exec('ROLLBACK');

      // The same writes again, as the server pipeline retries them: they all land.
      await Promise.all([
        store.saveTaskSnapshot(createTask('x', { id: 'locked-1' })),
        store.appendTaskEvents(DEFAULT_OWNER, 'kept', [status('kept')]),
        store.saveTaskSnapshot(createTask('x', { id: 'locked-2' })),
      ]);
      expect(storedTasks(other)).toEqual(['kept', 'locked-1', 'locked-2']);
      expect(storedSequences(other, 'kept')).toEqual([1]);
    } finally {
      other.close();
      store.close();
    }
  });
});

describe('SqliteGroupCommit', () => {
  it('fails every write of a batch whose transaction SQLite ended, keeping none of them', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const commit = new SqliteGroupCommit(db, { maxWrites: 10 });
    try {
      const results = await Promise.allSettled([
        commit.enqueue('first', [], () => insert.run('a')),
        // What SQLite does on some I/O errors: the whole transaction is rolled back under the write.
        commit.enqueue('second', [], () => {
          db.exec('ROLLBACK');
          throw new Error('disk I/O error');
        }),
        commit.enqueue('third', [], () => insert.run('c')),
      ]);
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(UnavailableError);
      expect((results[0] as PromiseRejectedResult).reason.message).toBe('first: disk I/O error');
      expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
      expect(db.inTransaction).toBe(false);
      // The next batch starts clean.
      await commit.enqueue('fourth', [], () => insert.run('d'));
      expect(db.prepare('SELECT v FROM t').pluck().all()).toEqual(['d']);
    } finally {
      db.close();
    }
  });

  it('runs a batch whose writes all succeed once each, without a savepoint per write', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const commit = new SqliteGroupCommit(db, { maxWrites: 10 });
    const runs: string[] = [];
    const savepointOpen: boolean[] = [];
    const write = (value: string) =>
      commit.enqueue(value, [], () => {
        runs.push(value);
        // A write inside a savepoint can release it; outside one, SQLite knows no such savepoint.
        try {
          db.exec('RELEASE batched_write');
          savepointOpen.push(true);
        } catch {
          savepointOpen.push(false);
        }
        insert.run(value);
      });
    try {
      await Promise.all([write('a'), write('b'), write('c')]);
      expect(runs).toEqual(['a', 'b', 'c']);
      expect(savepointOpen).toEqual([false, false, false]);
      expect(db.prepare('SELECT v FROM t').pluck().all()).toEqual(['a', 'b', 'c']);
    } finally {
      db.close();
    }
  });

  it('undoes all a failing write did before it threw, runs its batch again, and commits the others once', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const commit = new SqliteGroupCommit(db, { maxWrites: 10 });
    const runs: string[] = [];
    try {
      const results = await Promise.allSettled([
        commit.enqueue('first', [], () => {
          runs.push('first');
          return insert.run('a').changes;
        }),
        commit.enqueue('second', [], () => {
          runs.push('second');
          insert.run('b1');
          insert.run('b2');
          throw new ValueError('the second write fails half way');
        }),
        commit.enqueue('third', [], () => {
          runs.push('third');
          return insert.run('c').changes;
        }),
      ]);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((results[0] as PromiseFulfilledResult<number>).value).toBe(1);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(ValueError);
      // Once without savepoints up to the failure, then the whole batch again with them.
      expect(runs).toEqual(['first', 'second', 'first', 'second', 'third']);
      expect(db.prepare('SELECT v FROM t ORDER BY v').pluck().all()).toEqual(['a', 'c']);
      expect(db.inTransaction).toBe(false);
    } finally {
      db.close();
    }
  });

  it('calls afterCommit after each commit, and a throw there fails no write', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    let commits = 0;
    const commit = new SqliteGroupCommit(db, {
      maxWrites: 10,
      afterCommit: () => {
        commits += 1;
        throw new Error('an observer that breaks');
      },
    });
    try {
      await Promise.all([
        commit.enqueue('a', [], () => insert.run('a')),
        commit.enqueue('b', [], () => insert.run('b')),
      ]);
      await commit.enqueue('c', [], () => insert.run('c'));
      expect(commits).toBe(2);
      expect(db.prepare('SELECT v FROM t').pluck().all()).toEqual(['a', 'b', 'c']);
    } finally {
      db.close();
    }
  });

  it('names what its queued writes touch until they are committed', async () => {
    const db = new Database(':memory:');
    const commit = new SqliteGroupCommit(db, { maxWrites: 10 });
    try {
      const write = commit.enqueue('w', ['a'], () => 1);
      expect([commit.touches('a'), commit.touches('b'), commit.size]).toEqual([true, false, 1]);
      commit.flush();
      expect([commit.touches('a'), commit.size]).toEqual([false, 0]);
      expect(await write).toBe(1);
    } finally {
      db.close();
    }
  });
});
