import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { AgentError, createTask, UnavailableError, ValueError, type TaskEvent } from '@agent/core';
import { requireOptionalPeer } from '../optional-peer.js';
import { RunRecorder } from '../run-recorder.js';
import type { RunReport } from '../run-report.js';
import { completedRun, runContext } from '../test-support/fixtures.js';
import { describeRunStore, describeTaskWrites } from '../testing/run-store-suite.js';
import type { RunStoreOptions } from './in-memory-run-store.js';
import { DEFAULT_OWNER } from './run-store.js';
import { SQLITE_SCHEMA_VERSION, SqliteRunStore } from './sqlite-run-store.js';
import { WAL_CHECKPOINT_PAGES } from './sqlite-support.js';

const run = promisify(execFile);
let dir: string;
let counter = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'run-store-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const harness = {
  open: (options?: RunStoreOptions) =>
    new SqliteRunStore({ ...options, path: join(dir, `suite-${(counter += 1)}.db`) }),
};
describeRunStore('SqliteRunStore', harness);
describeTaskWrites('SqliteRunStore', harness);

describe('SqliteRunStore file behaviour', () => {
  it('uses WAL and indexes the documented columns', () => {
    const path = join(dir, 'schema.db');
    const store = new SqliteRunStore({ path });
    expect(store.journalMode).toBe('wal');
    store.close();
    const db = new Database(path, { readonly: true });
    try {
      const indexed = (table: string) =>
        (db.prepare(`SELECT name FROM pragma_index_list('${table}')`).all() as { name: string }[]).flatMap(
          ({ name }) =>
            (db.prepare(`SELECT name FROM pragma_index_info('${name}')`).all() as { name: string }[]).map(
              (c) => c.name,
            ),
        );
      expect(new Set(indexed('task_records'))).toEqual(
        new Set([
          'tenant',
          'principal_id',
          'task_id',
          'state',
          'run_id',
          'session_id',
          'trace_id',
          'agent_name',
          'updated_at',
        ]),
      );
      expect(new Set(indexed('run_reports'))).toEqual(
        new Set(['run_id', 'session_id', 'trace_id', 'agent_name', 'task_id', 'created_at']),
      );
      expect(indexed('task_events')).toEqual(['task_row', 'sequence']);
      // Keyset pages of one owner read the rows in index order, without a sort step.
      const plan = db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT * FROM task_records WHERE tenant = 'a' AND principal_id = 'b'
           AND (updated_at < 'x' OR (updated_at = 'x' AND task_id > 'y')) ORDER BY updated_at DESC, task_id ASC LIMIT 51`,
        )
        .all() as { detail: string }[];
      expect(plan.map((row) => row.detail).join('\n')).toMatch(/USING INDEX task_records_owner_page/);
      expect(plan.map((row) => row.detail).join('\n')).not.toMatch(/TEMP B-TREE/);
      expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    } finally {
      db.close();
    }
  });

  it('survives closing and reopening the file', async () => {
    const path = join(dir, 'reopen.db');
    const first = new SqliteRunStore({ path });
    const { events, context } = completedRun('task-reopen');
    const recorder = new RunRecorder({ context });
    for (const event of events) recorder.recordTaskEvent(event);
    await first.saveTaskSnapshot(
      createTask('persist me', { id: 'task-reopen', metadata: { run_context: context } }),
    );
    await first.saveRunReport(recorder.toReport());
    first.close();

    const second = new SqliteRunStore({ path });
    try {
      expect(await second.getTaskRecord('task-reopen')).toMatchObject({
        task_id: 'task-reopen',
        run_id: 'run-1',
        session_id: 'session-1',
      });
      const report = await second.getRunReport('run-1');
      expect(report?.eventCount).toBe(events.length);
      expect(report?.status).toBe('completed');
    } finally {
      second.close();
    }
  });

  it('keeps the last save of a task whose ids change, whatever each writer saved before', async () => {
    const path = join(dir, 'changing-ids.db');
    const a = new SqliteRunStore({ path });
    const b = new SqliteRunStore({ path });
    const task = (state: 'working' | 'completed', runId?: string) =>
      createTask('hi', {
        id: 'moving',
        state,
        created_at: '2026-05-01T00:00:00.000Z',
        metadata: runId === undefined ? {} : { run_context: runContext({ run_id: runId }) },
      });
    const saved = async () => {
      const record = await a.getTaskRecord('moving');
      const byRun = async (runId: string) => (await a.listTaskRecords({ runId })).map((r) => r.task_id);
      return {
        state: record?.state,
        run_id: record?.run_id,
        run1: await byRun('run-1'),
        run2: await byRun('run-2'),
      };
    };
    try {
      await a.saveTaskSnapshot(task('working'));
      await a.saveTaskSnapshot(task('working', 'run-1'));
      expect(await saved()).toEqual({ state: 'working', run_id: 'run-1', run1: ['moving'], run2: [] });
      // Another writer changes the ids; the first still remembers its own.
      await b.saveTaskSnapshot(task('working', 'run-2'));
      await a.saveTaskSnapshot(task('completed', 'run-1'));
      expect(await saved()).toEqual({ state: 'completed', run_id: 'run-1', run1: ['moving'], run2: [] });
      await b.saveTaskSnapshot(task('completed', 'run-2'));
      expect(await saved()).toEqual({ state: 'completed', run_id: 'run-2', run1: [], run2: ['moving'] });
    } finally {
      a.close();
      b.close();
    }
  });

  it('lets a second process read what this one wrote', async () => {
    const path = join(dir, 'shared.db');
    const store = new SqliteRunStore({ path });
    try {
      await store.saveTaskSnapshot(
        createTask('cross', { id: 'task-x', state: 'completed', metadata: { session_id: 'sx' } }),
      );
      // The writer stays open: WAL readers in another process must see committed rows.
      const script = `
        const { SqliteRunStore } = require(${JSON.stringify(join(__dirname, '..', '..', 'dist', 'index.js'))});
        const store = new SqliteRunStore({ path: process.argv[1], readonly: true });
        store.listTaskRecords({ sessionId: 'sx' }).then((records) => {
          process.stdout.write(JSON.stringify(records.map((r) => [r.task_id, r.state])));
          store.close();
        });`;
      const { stdout } = await run(process.execPath, ['-e', script, path], {
        cwd: join(__dirname, '..', '..'),
      });
      expect(JSON.parse(stdout)).toEqual([['task-x', 'completed']]);
    } finally {
      store.close();
    }
  });

  it('refuses a file written by a newer schema', () => {
    const path = join(dir, 'future.db');
    const db = new Database(path);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => new SqliteRunStore({ path })).toThrow(
      `schema ${SQLITE_SCHEMA_VERSION + 1}; this library reads up to ${SQLITE_SCHEMA_VERSION}`,
    );
    expect(() => new SqliteRunStore({ path, readonly: true })).toThrow(ValueError);
  });

  it('rejects bad options and unopenable paths with typed errors', () => {
    expect(() => new SqliteRunStore({ path: '' })).toThrow(ValueError);
    expect(() => new SqliteRunStore({} as never)).toThrow(ValueError);
    expect(() => new SqliteRunStore({ path: join(dir, 'x.db'), busyTimeoutMs: -1 })).toThrow(ValueError);
    expect(() => new SqliteRunStore({ path: join(dir, 'no', 'such', 'dir', 'x.db') })).toThrow(
      UnavailableError,
    );
    expect(() => new SqliteRunStore({ path: join(dir, 'absent.db'), readonly: true })).toThrow(
      UnavailableError,
    );
  });

  it('maps SQLite failures to typed errors', async () => {
    const path = join(dir, 'readonly.db');
    new SqliteRunStore({ path }).close();
    const reader = new SqliteRunStore({ path, readonly: true });
    try {
      await expect(reader.saveTaskSnapshot(createTask('x', { id: 'ro' }))).rejects.toThrow(UnavailableError);
      await expect(reader.saveTaskSnapshot(createTask('x', { id: 'ro' }))).rejects.toThrow(/readonly/);
      expect(await reader.getTaskRecord('ro')).toBeNull();
    } finally {
      reader.close();
    }
    const empty = join(dir, 'empty.db');
    new Database(empty).close();
    expect(() => new SqliteRunStore({ path: empty, readonly: true })).toThrow(/no such table/);
  });

  it('refuses a task that is not JSON when stored raw', async () => {
    const store = new SqliteRunStore({ path: ':memory:', redactionPolicy: null });
    const task = createTask('x', { id: 'cyclic' });
    task.metadata.self = task;
    await expect(store.saveTaskSnapshot(task)).rejects.toThrow(/not JSON-serializable/);
    await expect(store.saveTaskSnapshot(task)).rejects.toThrow(ValueError);
    store.close();
  });

  it('deletes expired finished tasks on the next write, and hides them from reads before that', async () => {
    const path = join(dir, 'ttl.db');
    let now = Date.parse('2026-05-01T00:00:00Z');
    const store = new SqliteRunStore({ path, taskRetentionMs: 60_000, now: () => now });
    const reader = new SqliteRunStore({ path, readonly: true, taskRetentionMs: 60_000, now: () => now });
    const raw = new Database(path, { readonly: true });
    const count = (table: string) => raw.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
    try {
      await store.saveTaskSnapshot(createTask('x', { id: 'done', state: 'completed' }));
      await store.saveTaskSnapshot(createTask('x', { id: 'live', state: 'working' }));
      await store.appendTaskEvents(DEFAULT_OWNER, 'done', [
        {
          type: 'task.status',
          task_id: 'done',
          state: 'completed',
          final: true,
          timestamp: '2026-05-01T00:00:00Z',
        },
      ]);
      now += 60_001;
      expect(await store.getTaskRecord('done')).toBeNull();
      expect(await reader.getTaskRecord('done')).toBeNull();
      expect(await reader.listTaskEvents(DEFAULT_OWNER, 'done')).toEqual([]);
      expect(count('task_records')).toBe(2);
      expect(count('task_events')).toBe(1);
      await store.saveTaskSnapshot(createTask('x', { id: 'live', state: 'working' }));
      expect(count('task_records')).toBe(1);
      expect(count('task_events')).toBe(0);
    } finally {
      raw.close();
      reader.close();
      store.close();
    }
  });

  it('keeps finished tasks without taskRetentionMs', async () => {
    let now = Date.parse('2026-05-01T00:00:00Z');
    const store = new SqliteRunStore({ path: ':memory:', now: () => now });
    await store.saveTaskSnapshot(createTask('x', { id: 'done', state: 'completed' }));
    now += 365 * 24 * 3600_000;
    await store.saveTaskSnapshot(createTask('x', { id: 'next', state: 'completed' }));
    expect(await store.getTaskRecord('done')).not.toBeNull();
    store.close();
  });

  it('works in memory', async () => {
    const store = new SqliteRunStore({ path: ':memory:' });
    await store.saveTaskSnapshot(createTask('m', { id: 'mem' }));
    expect((await store.getTaskRecord('mem'))?.task_id).toBe('mem');
    store.close();
  });
});

function completedReport(runId: string): RunReport {
  const { events, context } = completedRun(`task-${runId}`, runContext({ run_id: runId }));
  const recorder = new RunRecorder({ context });
  for (const event of events) recorder.recordTaskEvent(event);
  return recorder.toReport();
}

describe('SqliteRunStore writeTask in a batch', () => {
  const event = (taskId: string, note: string): TaskEvent =>
    ({
      type: 'task.status',
      task_id: taskId,
      state: 'working',
      final: false,
      timestamp: '2026-05-01T00:00:00.000Z',
      note,
    }) as TaskEvent;

  it('undoes a whole group the database refuses midway, and keeps the other writes of its batch', async () => {
    const path = join(dir, 'write-task.db');
    const store = new SqliteRunStore({ path });
    // A refusal that only the database makes, after the group's first writes have run.
    const raw = new Database(path);
    raw.exec(`CREATE TRIGGER refuse_boom BEFORE INSERT ON task_events WHEN NEW.event LIKE '%boom%'
              BEGIN SELECT RAISE(ABORT, 'boom refused'); END`);
    raw.close();
    try {
      // Queued in one turn, so committed in one batch.
      const results = await Promise.allSettled([
        store.saveTaskSnapshot(createTask('hi', { id: 'kept' })),
        store.writeTask(DEFAULT_OWNER, 'undone', [
          { snapshot: createTask('hi', { id: 'undone' }) },
          { events: [event('undone', 'fine')] },
          { events: [event('undone', 'boom')] },
        ]),
        store.writeTask(DEFAULT_OWNER, 'kept', [
          { events: [event('kept', 'fine')] },
          { snapshot: createTask('hi', { id: 'kept', state: 'completed' }) },
        ]),
      ]);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(AgentError);
      expect(String((results[1] as PromiseRejectedResult).reason.message)).toMatch(/boom refused/);
      expect(await store.getTaskRecord('undone')).toBeNull();
      expect(await store.listTaskEvents(DEFAULT_OWNER, 'undone')).toEqual([]);
      expect((await store.getTaskRecord('kept'))!.state).toBe('completed');
      expect((await store.listTaskEvents(DEFAULT_OWNER, 'kept')).map((e) => e.sequence)).toEqual([1]);
    } finally {
      store.close();
    }
  });
});

describe('SqliteRunStore stored reports', () => {
  it('writes a report in its compact form and reads reports of both forms', async () => {
    const path = join(dir, 'report-forms.db');
    const store = new SqliteRunStore({ path });
    const other = new Database(path);
    try {
      const report = completedReport('run-forms');
      await store.saveRunReport(report);
      const stored = other
        .prepare('SELECT report FROM run_reports WHERE run_id = ?')
        .pluck()
        .get('run-forms') as string;
      expect(JSON.parse(stored)).toMatchObject({ form: 'compact', run_id: 'run-forms' });
      expect((await store.getRunReport('run-forms'))!.toDict()).toEqual(report.toDict());
      // A row as earlier versions wrote it: the report's plain dict.
      other
        .prepare('UPDATE run_reports SET report = ? WHERE run_id = ?')
        .run(JSON.stringify(report.toDict()), 'run-forms');
      expect((await store.getRunReport('run-forms'))!.toDict()).toEqual(report.toDict());
      expect((await store.listRunReports({ taskId: report.taskId! })).map((r) => r.toDict())).toEqual([
        report.toDict(),
      ]);
    } finally {
      other.close();
      store.close();
    }
  });
});

describe('SqliteRunStore write-ahead log', () => {
  it("lets the log grow past SQLite's default 1,000 pages before checkpointing, and checkpoints by its own limit", async () => {
    const path = join(dir, 'checkpoint.db');
    const store = new SqliteRunStore({ path, backgroundCheckpoints: false });
    const walPages = () => statSync(`${path}-wal`).size / 4096;
    try {
      // Each snapshot is its own commit, with ~16 KiB of text: five pages or so of the log.
      const text = 'x'.repeat(16 * 1024);
      for (let i = 0; i < 400; i += 1)
        await store.saveTaskSnapshot(createTask(`${text}${i}`, { id: `wal-${i}` }));
      expect(walPages()).toBeGreaterThan(1_500);
      expect(walPages()).toBeLessThan(WAL_CHECKPOINT_PAGES * 1.1);
      for (let i = 400; i < 3_000; i += 1)
        await store.saveTaskSnapshot(createTask(`${text}${i}`, { id: `wal-${i}` }));
      // Past the limit a commit copied the log into the file and the log started over.
      expect(walPages()).toBeLessThan(WAL_CHECKPOINT_PAGES * 1.1);
      expect(statSync(path).size).toBeGreaterThan(1_000 * 4096);
    } finally {
      store.close();
    }
  });
});

describe('SqliteRunStore background checkpoints', () => {
  it('checkpoints a busy file from a worker thread, before its own writer would', async () => {
    const path = join(dir, 'background.db');
    const store = new SqliteRunStore({ path });
    try {
      const text = 'x'.repeat(16 * 1024);
      // ~3,200 pages of log: past the 4 MiB that starts the worker, short of the writer's 4,000 pages.
      for (let i = 0; i < 200; i += 1)
        await store.saveTaskSnapshot(createTask(`${text}${i}`, { id: `bg-${i}` }));
      expect(statSync(`${path}-wal`).size / 4096).toBeLessThan(WAL_CHECKPOINT_PAGES);
      // The 3.2 MiB of text reach the file only through a checkpoint, which the writer did not run.
      const until = Date.now() + 10_000;
      while (statSync(path).size < 3.2 * 1024 * 1024 && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(statSync(path).size).toBeGreaterThan(3.2 * 1024 * 1024);
      expect((await store.getTaskRecord('bg-199'))?.task.messages[0]?.parts[0]).toMatchObject({
        content: `${text}199`,
      });
    } finally {
      store.close();
    }
    // Closed, with its worker: the file opens again and holds everything.
    const again = new SqliteRunStore({ path, backgroundCheckpoints: false });
    try {
      expect(await again.listTaskRecords()).toHaveLength(200);
    } finally {
      again.close();
    }
  });

  it('refuses a backgroundCheckpoints that is not a boolean', () => {
    expect(
      () => new SqliteRunStore({ path: join(dir, 'bad-option.db'), backgroundCheckpoints: 'yes' as never }),
    ).toThrow(ValueError);
  });
});

describe('optional peers', () => {
  it('explains how to install a missing one', () => {
    expect(() => requireOptionalPeer('definitely-not-installed-pkg', 'SqliteRunStore', '^12')).toThrow(
      UnavailableError,
    );
    expect(() => requireOptionalPeer('definitely-not-installed-pkg', 'SqliteRunStore', '^12')).toThrow(
      'SqliteRunStore needs the optional peer dependency definitely-not-installed-pkg@^12; install it with `pnpm add definitely-not-installed-pkg@^12`',
    );
  });
});
