import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { createTask, UnavailableError, type Task } from '@agent/core';
import { RedactionPolicy } from '../redaction.js';
import { RunRecorder } from '../run-recorder.js';
import { completedRun, runContext } from '../test-support/fixtures.js';
import type { TaskRecord } from './run-store.js';
import { SQLITE_SCHEMA_VERSION, SqliteRunStore } from './sqlite-run-store.js';

const run = promisify(execFile);
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'run-store-migration-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The schema-1 DDL exactly as the schema-1 store created it: a fixture, never to be edited. */
const SCHEMA_1 = `
CREATE TABLE IF NOT EXISTS task_records (
  task_id    TEXT PRIMARY KEY,
  state      TEXT NOT NULL,
  run_id     TEXT,
  session_id TEXT,
  trace_id   TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  task       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS task_records_state ON task_records (state);
CREATE INDEX IF NOT EXISTS task_records_run_id ON task_records (run_id);
CREATE INDEX IF NOT EXISTS task_records_session_id ON task_records (session_id, updated_at);
CREATE INDEX IF NOT EXISTS task_records_trace_id ON task_records (trace_id);
CREATE INDEX IF NOT EXISTS task_records_agent_name ON task_records (agent_name);
CREATE INDEX IF NOT EXISTS task_records_created_at ON task_records (created_at);
CREATE INDEX IF NOT EXISTS task_records_updated_at ON task_records (updated_at);
CREATE TABLE IF NOT EXISTS run_reports (
  run_id     TEXT PRIMARY KEY,
  task_id    TEXT,
  session_id TEXT,
  trace_id   TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  report     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_reports_session_id ON run_reports (session_id, created_at);
CREATE INDEX IF NOT EXISTS run_reports_trace_id ON run_reports (trace_id);
CREATE INDEX IF NOT EXISTS run_reports_agent_name ON run_reports (agent_name);
CREATE INDEX IF NOT EXISTS run_reports_task_id ON run_reports (task_id);
CREATE INDEX IF NOT EXISTS run_reports_created_at ON run_reports (created_at);
`;

/** The schema-2 DDL as the schema-2 store left a file: a fixture, never to be edited. */
const SCHEMA_2 = `
CREATE TABLE task_records (
  tenant TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  state TEXT NOT NULL,
  run_id TEXT,
  session_id TEXT,
  trace_id TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  task TEXT NOT NULL,
  PRIMARY KEY (tenant, principal_id, task_id)
);
CREATE INDEX task_records_state ON task_records (state);
CREATE INDEX task_records_run_id ON task_records (run_id);
CREATE INDEX task_records_session_id ON task_records (session_id, updated_at);
CREATE INDEX task_records_trace_id ON task_records (trace_id);
CREATE INDEX task_records_agent_name ON task_records (agent_name);
CREATE INDEX task_records_created_at ON task_records (created_at);
CREATE INDEX task_records_updated_at ON task_records (updated_at);
CREATE INDEX task_records_owner_page ON task_records (tenant, principal_id, updated_at DESC, task_id);
CREATE TABLE run_reports (
  run_id     TEXT PRIMARY KEY,
  task_id    TEXT,
  session_id TEXT,
  trace_id   TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  report     TEXT NOT NULL
);
CREATE INDEX run_reports_session_id ON run_reports (session_id, created_at);
CREATE INDEX run_reports_trace_id ON run_reports (trace_id);
CREATE INDEX run_reports_agent_name ON run_reports (agent_name);
CREATE INDEX run_reports_task_id ON run_reports (task_id);
CREATE INDEX run_reports_created_at ON run_reports (created_at);
CREATE TABLE task_events (
  tenant       TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  task_id      TEXT NOT NULL,
  sequence     INTEGER NOT NULL,
  event        TEXT NOT NULL,
  PRIMARY KEY (tenant, principal_id, task_id, sequence)
) WITHOUT ROWID;
`;

/** The schema-3 DDL as the schema-3 store left a new file: a fixture, never to be edited. */
const SCHEMA_3 = `
CREATE TABLE task_records (
  row_id INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  state TEXT NOT NULL,
  run_id TEXT,
  session_id TEXT,
  trace_id TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  task TEXT NOT NULL,
  UNIQUE (tenant, principal_id, task_id)
);
CREATE INDEX task_records_state ON task_records (state);
CREATE INDEX task_records_run_id ON task_records (run_id);
CREATE INDEX task_records_session_id ON task_records (session_id, updated_at);
CREATE INDEX task_records_trace_id ON task_records (trace_id);
CREATE INDEX task_records_agent_name ON task_records (agent_name);
CREATE INDEX task_records_created_at ON task_records (created_at);
CREATE INDEX task_records_updated_at ON task_records (updated_at);
CREATE INDEX task_records_owner_page ON task_records (tenant, principal_id, updated_at DESC, task_id);
CREATE TABLE run_reports (
  run_id     TEXT PRIMARY KEY,
  task_id    TEXT,
  session_id TEXT,
  trace_id   TEXT,
  agent_name TEXT,
  created_at TEXT NOT NULL,
  report     TEXT NOT NULL
);
CREATE INDEX run_reports_session_id ON run_reports (session_id, created_at);
CREATE INDEX run_reports_trace_id ON run_reports (trace_id);
CREATE INDEX run_reports_agent_name ON run_reports (agent_name);
CREATE INDEX run_reports_task_id ON run_reports (task_id);
CREATE INDEX run_reports_created_at ON run_reports (created_at);
CREATE TABLE task_events (
  task_row INTEGER NOT NULL,
  sequence INTEGER NOT NULL,
  event    TEXT NOT NULL
);
CREATE UNIQUE INDEX task_events_key ON task_events (task_row, sequence);
`;

/** The schema-1 upserts, as the schema-1 store ran them. */
const UPSERT_TASK_1 = `
  INSERT INTO task_records (task_id, state, run_id, session_id, trace_id, agent_name, created_at, updated_at, task)
  VALUES (@task_id, @state, @run_id, @session_id, @trace_id, @agent_name, @created_at, @updated_at, @task)
  ON CONFLICT (task_id) DO UPDATE SET
    state = excluded.state, run_id = excluded.run_id, session_id = excluded.session_id,
    trace_id = excluded.trace_id, agent_name = excluded.agent_name, created_at = excluded.created_at,
    updated_at = excluded.updated_at, task = excluded.task`;
const UPSERT_REPORT_1 = `
  INSERT INTO run_reports (run_id, task_id, session_id, trace_id, agent_name, created_at, report)
  VALUES (@run_id, @task_id, @session_id, @trace_id, @agent_name, @created_at, @report)
  ON CONFLICT (run_id) DO UPDATE SET
    task_id = excluded.task_id, session_id = excluded.session_id, trace_id = excluded.trace_id,
    agent_name = excluded.agent_name, created_at = excluded.created_at, report = excluded.report`;

/** A schema-1 row: a record before owners existed. */
type V1Task = Omit<TaskRecord, 'tenant' | 'principal_id'>;

const policy = RedactionPolicy.default();

function v1Tasks(): V1Task[] {
  const context = runContext({ run_id: 'run-a', session_id: 'sess-1' });
  const a = createTask('first', {
    id: 'a',
    state: 'completed',
    metadata: { run_context: context, api_key: 'k' },
  });
  const b = createTask('second', { id: 'b', state: 'working', metadata: { session_id: 'sess-1' } });
  const c = createTask('third', { id: 'c', state: 'failed' });
  const row = (task: Task, updatedAt: string, ids: Partial<V1Task>): V1Task => ({
    task_id: task.id,
    state: task.state,
    run_id: null,
    session_id: null,
    trace_id: null,
    agent_name: null,
    created_at: new Date(task.created_at).toISOString(),
    updated_at: updatedAt,
    task: policy.redact(task) as Task,
    ...ids,
  });
  return [
    row(a, '2026-01-01T00:00:03.000Z', {
      run_id: 'run-a',
      session_id: 'sess-1',
      trace_id: context.trace_id,
      agent_name: 'writer',
    }),
    row(b, '2026-01-01T00:00:02.000Z', { session_id: 'sess-1' }),
    row(c, '2026-01-01T00:00:02.000Z', {}),
  ];
}

/**
 * Writes the report of a completed run `runId` (of task `task-of-<runId>`) as every schema so far
 * keeps it: the `run_reports` table has not changed since schema 1.
 */
function insertReport(db: Database.Database, runId: string, sessionId: string | null): void {
  const context = runContext({ run_id: runId, session_id: sessionId });
  const recorder = new RunRecorder({ context });
  for (const event of completedRun(`task-of-${runId}`, context).events) recorder.recordTaskEvent(event);
  const report = recorder.toReport();
  db.prepare(UPSERT_REPORT_1).run({
    run_id: report.runId,
    task_id: report.taskId,
    session_id: report.sessionId,
    trace_id: report.traceId,
    agent_name: report.agentName,
    created_at: new Date(report.createdAt).toISOString(),
    report: JSON.stringify(report.toDict({ redactionPolicy: policy })),
  });
}

/** A file as the schema-1 store left it: WAL, the schema-1 tables, rows, `user_version = 1`. */
function writeSchema1File(path: string, tasks: V1Task[], extraDdl = ''): string[] {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.transaction(() => {
    db.exec(SCHEMA_1);
    db.pragma('user_version = 1');
  })();
  const upsert = db.prepare(UPSERT_TASK_1);
  for (const task of tasks) upsert.run({ ...task, task: JSON.stringify(task.task) });
  const runIds: string[] = [];
  for (const runId of ['run-a', 'run-z']) {
    insertReport(db, runId, 'sess-1');
    runIds.push(runId);
  }
  if (extraDdl !== '') db.exec(extraDdl);
  db.close();
  return runIds;
}

function indexes(path: string): Record<string, string[]> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db
      .prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
      .all() as { name: string; tbl_name: string }[];
    return Object.fromEntries(
      rows.map(({ name, tbl_name }) => [
        `${tbl_name}.${name}`,
        (db.prepare(`SELECT name FROM pragma_index_info('${name}')`).all() as { name: string }[]).map(
          (c) => c.name,
        ),
      ]),
    );
  } finally {
    db.close();
  }
}

describe('SqliteRunStore schema migration', () => {
  it('opens a schema-1 file and reads every row back under the default owner', async () => {
    const path = join(dir, 'v1.db');
    const tasks = v1Tasks();
    const runIds = writeSchema1File(path, tasks);
    const before = indexes(path);

    const store = new SqliteRunStore({ path });
    try {
      for (const task of tasks) {
        expect(await store.getTaskRecord(task.task_id)).toEqual({
          tenant: '',
          principal_id: 'anonymous',
          ...task,
        });
      }
      expect((await store.listTaskRecords()).map((r) => r.task_id)).toEqual(['a', 'b', 'c']);
      expect((await store.listTaskRecords({ sessionId: 'sess-1' })).map((r) => r.task_id)).toEqual([
        'a',
        'b',
      ]);
      expect((await store.pageTaskRecords({ pageSize: 2 })).records.map((r) => r.task_id)).toEqual([
        'a',
        'b',
      ]);
      expect((await store.getTaskRecord('a'))!.task.metadata.api_key).toBe('[REDACTED]');
      for (const runId of runIds) expect((await store.getRunReport(runId))?.status).toBe('completed');
      expect((await store.listRunReports()).map((r) => r.runId).sort()).toEqual(runIds);
      // The migrated file takes the new features.
      expect(await store.appendTaskEvents({ tenant: '', principal_id: 'anonymous' }, 'b', [])).toEqual([]);
      await store.saveTaskSnapshot(createTask('x', { id: 'a' }), {
        owner: { tenant: 't', principal_id: 'p' },
      });
      expect((await store.getTaskRecord('a'))!.state).toBe('completed');
    } finally {
      store.close();
    }

    const after = indexes(path);
    for (const [name, columns] of Object.entries(before)) {
      if (name.startsWith('task_records.sqlite_')) continue;
      // Schema 4 drops it: no query reads task records by creation time.
      if (name === 'task_records.task_records_created_at') continue;
      expect(after[name]).toEqual(columns);
    }
    expect(after['task_records.task_records_created_at']).toBeUndefined();
    expect(after['task_records.task_records_owner_page']).toEqual([
      'tenant',
      'principal_id',
      'updated_at',
      'task_id',
    ]);
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(
        db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'task_records_v2'").pluck().get(),
      ).toBe(0);
    } finally {
      db.close();
    }

    const again = new SqliteRunStore({ path, readonly: true });
    try {
      expect(await again.listTaskRecords()).toHaveLength(3);
    } finally {
      again.close();
    }
  });

  it("opens a schema-2 file and keys every task log by its task's new row id", async () => {
    const path = join(dir, 'v2.db');
    const ownerA = { tenant: 't', principal_id: 'a' };
    const ownerB = { tenant: 't', principal_id: 'b' };
    const status = (state: string, n: number) => ({
      type: 'task.status',
      task_id: 'job',
      state,
      final: false,
      timestamp: `2026-01-01T00:00:0${n}.000Z`,
    });
    const raw = new Database(path);
    raw.pragma('journal_mode = WAL');
    raw.transaction(() => {
      raw.exec(SCHEMA_2);
      raw.pragma('user_version = 2');
      const task = JSON.stringify(createTask('x', { id: 'job' }));
      const insertTask = raw.prepare(
        `INSERT INTO task_records VALUES (?, ?, 'job', 'working', NULL, NULL, NULL, NULL,
           '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', ?)`,
      );
      insertTask.run('t', 'a', task);
      insertTask.run('t', 'b', task);
      const insertEvent = raw.prepare('INSERT INTO task_events VALUES (?, ?, ?, ?, ?)');
      // Written out of order: the log is read by sequence, not by the order rows went in.
      for (const [owner, sequence] of [
        [ownerB, 2],
        [ownerA, 3],
        [ownerA, 1],
        [ownerB, 1],
        [ownerA, 2],
      ] as const)
        insertEvent.run(
          owner.tenant,
          owner.principal_id,
          'job',
          sequence,
          JSON.stringify(status(owner === ownerA ? 'working' : 'submitted', sequence)),
        );
    })();
    raw.close();

    const store = new SqliteRunStore({ path });
    try {
      expect(await store.listTaskEvents(ownerA, 'job')).toEqual(
        [1, 2, 3].map((sequence) => ({ sequence, event: status('working', sequence) })),
      );
      expect(await store.listTaskEvents(ownerB, 'job')).toEqual(
        [1, 2].map((sequence) => ({ sequence, event: status('submitted', sequence) })),
      );
      expect(await store.listTaskEvents(ownerA, 'job', { after: 1, limit: 1 })).toEqual([
        { sequence: 2, event: status('working', 2) },
      ]);
      // The numbering goes on from the migrated log.
      expect(await store.appendTaskEvents(ownerA, 'job', [status('working', 4) as never])).toEqual([4]);
      expect(await store.appendTaskEvents(ownerB, 'job', [status('working', 3) as never])).toEqual([3]);
    } finally {
      store.close();
    }

    const db = new Database(path);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v3'").pluck().get()).toBe(0);
      // Each task has a row id, and its events are keyed by it.
      const rows = db.prepare('SELECT row_id, principal_id FROM task_records ORDER BY row_id').all() as {
        row_id: number;
        principal_id: string;
      }[];
      expect(rows.map((row) => row.principal_id).sort()).toEqual(['a', 'b']);
      const counts = db
        .prepare('SELECT task_row, count(*) AS n FROM task_events GROUP BY task_row ORDER BY task_row')
        .all() as { task_row: number; n: number }[];
      expect(Object.fromEntries(counts.map((c) => [c.task_row, c.n]))).toEqual(
        Object.fromEntries(rows.map((row) => [row.row_id, row.principal_id === 'a' ? 4 : 3])),
      );
      const [key] = db
        .prepare('SELECT name, "unique" AS isUnique FROM pragma_index_list(\'task_events\')')
        .all() as { name: string; isUnique: number }[];
      expect(key).toEqual({ name: 'task_events_key', isUnique: 1 });
      expect(db.prepare("SELECT name FROM pragma_index_info('task_events_key')").pluck().all()).toEqual([
        'task_row',
        'sequence',
      ]);
      // The record's columns are what they were, plus the row id; its key is still unique.
      expect(db.prepare("SELECT name FROM pragma_table_info('task_records')").pluck().all()).toEqual([
        'row_id',
        'tenant',
        'principal_id',
        'task_id',
        'state',
        'run_id',
        'session_id',
        'trace_id',
        'agent_name',
        'created_at',
        'updated_at',
        'task',
      ]);
      expect(() =>
        db
          .prepare(
            `INSERT INTO task_records (tenant, principal_id, task_id, state, created_at, updated_at, task)
               VALUES ('t', 'a', 'job', 'working', 'x', 'x', '{}')`,
          )
          .run(),
      ).toThrow(/UNIQUE constraint failed/);
      // A log read walks the key index, never the whole table, and sorts nothing.
      const plan = (
        db
          .prepare(
            `EXPLAIN QUERY PLAN SELECT e.sequence, e.event FROM task_records r JOIN task_events e ON e.task_row = r.row_id
               WHERE r.tenant = 't' AND r.principal_id = 'a' AND r.task_id = 'job' AND e.sequence > 0 ORDER BY e.sequence`,
          )
          .all() as { detail: string }[]
      )
        .map((row) => row.detail)
        .join('\n');
      expect(plan).toMatch(/USING INDEX task_events_key/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    } finally {
      db.close();
    }
  });

  it('opens a schema-3 file: no index on creation time, and session indexes only of rows with a session', async () => {
    const path = join(dir, 'v3.db');
    const owner = { tenant: 't', principal_id: 'p' };
    const raw = new Database(path);
    raw.pragma('journal_mode = WAL');
    const runIds: string[] = [];
    raw.transaction(() => {
      raw.exec(SCHEMA_3);
      raw.pragma('user_version = 3');
      const insertTask = raw.prepare(
        `INSERT INTO task_records (tenant, principal_id, task_id, state, session_id, created_at, updated_at, task)
           VALUES ('t', 'p', ?, 'completed', ?, ?, ?, ?)`,
      );
      insertTask.run(
        'in-session',
        'sess-1',
        '2026-01-01T00:00:01.000Z',
        '2026-01-01T00:00:02.000Z',
        '{"id":"in-session"}',
      );
      insertTask.run('alone', null, '2026-01-01T00:00:03.000Z', '2026-01-01T00:00:04.000Z', '{"id":"alone"}');
      raw
        .prepare('INSERT INTO task_events VALUES (1, 1, ?)')
        .run(JSON.stringify({ type: 'task.status', task_id: 'in-session', state: 'completed', final: true }));
      for (const sessionId of ['sess-1', null]) {
        const runId = `run-${sessionId ?? 'alone'}`;
        insertReport(raw, runId, sessionId);
        runIds.push(runId);
      }
    })();
    raw.close();

    const store = new SqliteRunStore({ path });
    try {
      expect((await store.listTaskRecords({ owner, sessionId: 'sess-1' })).map((r) => r.task_id)).toEqual([
        'in-session',
      ]);
      expect((await store.listTaskRecords({ owner })).map((r) => r.task_id)).toEqual(['alone', 'in-session']);
      expect((await store.listTaskEvents(owner, 'in-session')).map((e) => e.sequence)).toEqual([1]);
      expect((await store.listRunReports({ sessionId: 'sess-1' })).map((r) => r.runId)).toEqual([runIds[0]]);
      expect((await store.listRunReports()).map((r) => r.runId).sort()).toEqual([...runIds].sort());
      // New rows go on as before, with and without a session.
      await store.saveTaskSnapshot(createTask('x', { id: 'later', metadata: { session_id: 'sess-1' } }), {
        owner,
      });
      await store.saveTaskSnapshot(createTask('y', { id: 'later-alone' }), { owner });
      expect(
        (await store.listTaskRecords({ owner, sessionId: 'sess-1' })).map((r) => r.task_id).sort(),
      ).toEqual(['in-session', 'later']);
    } finally {
      store.close();
    }

    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const after = indexes(path);
      expect(after['task_records.task_records_created_at']).toBeUndefined();
      expect(after['task_records.task_records_session_id']).toEqual(['session_id', 'updated_at']);
      expect(after['run_reports.run_reports_session_id']).toEqual(['session_id', 'created_at']);
      const partial = (table: string) =>
        db.prepare(`SELECT name FROM pragma_index_list('${table}') WHERE partial = 1`).pluck().all();
      expect(partial('task_records')).toEqual(['task_records_session_id']);
      expect(partial('run_reports')).toEqual(['run_reports_session_id']);
      // Only rows with a session are in them, and a lookup by session still reads the index.
      const entries = (index: string, table: string) =>
        db
          .prepare(`SELECT count(*) FROM ${table} INDEXED BY ${index} WHERE session_id IS NOT NULL`)
          .pluck()
          .get();
      expect(entries('task_records_session_id', 'task_records')).toBe(2);
      expect(entries('run_reports_session_id', 'run_reports')).toBe(1);
      const plan = (
        db
          .prepare(
            'EXPLAIN QUERY PLAN SELECT report FROM run_reports WHERE session_id = ? ORDER BY created_at DESC LIMIT 10',
          )
          .all('sess-1') as { detail: string }[]
      )
        .map((row) => row.detail)
        .join('\n');
      expect(plan).toMatch(/USING INDEX run_reports_session_id/);
    } finally {
      db.close();
    }
  });

  it('refuses a read-only open of a schema-1 file with a clear error, leaving it as it was', () => {
    const path = join(dir, 'v1-readonly.db');
    writeSchema1File(path, v1Tasks());
    const attempt = () => new SqliteRunStore({ path, readonly: true });
    expect(attempt).toThrow(UnavailableError);
    expect(attempt).toThrow(
      `${path} has run store schema 1; this library needs ${SQLITE_SCHEMA_VERSION}. Open it once without readonly to upgrade it.`,
    );
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });

  it('migrates in one transaction: a failed step leaves the schema-1 file intact', async () => {
    const path = join(dir, 'v1-blocked.db');
    const tasks = v1Tasks();
    // A table in the way of the rebuild makes the second step fail halfway through.
    writeSchema1File(path, tasks, 'CREATE TABLE task_records_v2 (x TEXT);');
    expect(() => new SqliteRunStore({ path })).toThrow(UnavailableError);
    const db = new Database(path);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(1);
      expect(db.prepare('SELECT task_id FROM task_records ORDER BY task_id').pluck().all()).toEqual([
        'a',
        'b',
        'c',
      ]);
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'task_events'").pluck().get()).toBe(
        0,
      );
      db.exec('DROP TABLE task_records_v2');
    } finally {
      db.close();
    }
    const store = new SqliteRunStore({ path });
    try {
      expect(await store.listTaskRecords()).toHaveLength(3);
    } finally {
      store.close();
    }
  });

  it('lets two store instances share a new file, numbering one task log between them', async () => {
    const path = join(dir, 'two-instances.db');
    const first = new SqliteRunStore({ path });
    const second = new SqliteRunStore({ path });
    const owner = { tenant: 't', principal_id: 'p' };
    const event = {
      type: 'task.status',
      task_id: 'task',
      state: 'working',
      final: false,
      timestamp: '2026-01-01T00:00:00Z',
    } as const;
    try {
      await first.saveTaskSnapshot(createTask('x', { id: 'task' }), { owner });
      const sequences = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? first : second).appendTaskEvents(owner, 'task', [event]),
        ),
      );
      expect(sequences.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      expect((await second.listTaskEvents(owner, 'task')).map((e) => e.sequence)).toEqual(
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
    } finally {
      first.close();
      second.close();
    }
  });

  it('lets several processes open and write a new file at once without corrupting it', async () => {
    const path = join(dir, 'race.db');
    const writers = 8;
    // Each child opens the fresh file (so all race to create the schema), then writes under its own owner.
    const script = `
      const { SqliteRunStore } = require(${JSON.stringify(join(__dirname, '..', '..', 'dist', 'index.js'))});
      const id = process.argv[2];
      const owner = { tenant: 'race', principal_id: 'p' + id };
      const store = new SqliteRunStore({ path: process.argv[1] });
      (async () => {
        await store.saveTaskSnapshot({ id: 'task', state: 'working', created_at: new Date().toISOString(), messages: [], artifacts: [], metadata: {} }, { owner });
        const seqs = await store.appendTaskEvents(owner, 'task', [1, 2, 3].map(() => ({ type: 'task.status', task_id: 'task', state: 'working', final: false, timestamp: new Date().toISOString() })));
        await store.saveTaskSnapshot({ id: 'shared', state: 'working', created_at: new Date().toISOString(), messages: [], artifacts: [], metadata: {} });
        await store.appendTaskEvents({ tenant: '', principal_id: 'anonymous' }, 'shared', [{ type: 'task.status', task_id: 'shared', state: 'working', final: false, timestamp: new Date().toISOString() }]);
        process.stdout.write(JSON.stringify(seqs));
        store.close();
      })().catch((error) => { console.error(error); process.exit(1); });`;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        run(process.execPath, ['-e', script, path, String(i)], { cwd: join(__dirname, '..', '..') }),
      ),
    );
    for (const { stdout } of results) expect(JSON.parse(stdout)).toEqual([1, 2, 3]);

    const store = new SqliteRunStore({ path });
    try {
      for (let i = 0; i < writers; i += 1) {
        const owner = { tenant: 'race', principal_id: `p${i}` };
        expect(await store.getTaskRecord('task', owner)).toMatchObject({ state: 'working' });
        expect((await store.listTaskEvents(owner, 'task')).map((e) => e.sequence)).toEqual([1, 2, 3]);
      }
      const shared = await store.listTaskEvents({ tenant: '', principal_id: 'anonymous' }, 'shared');
      expect(shared.map((e) => e.sequence)).toEqual(Array.from({ length: writers }, (_, i) => i + 1));
    } finally {
      store.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    } finally {
      db.close();
    }
  });
});
