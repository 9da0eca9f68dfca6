import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createTask, UnavailableError, ValueError, type AgentCard } from '@agent/core';
import { SQLITE_SCHEMA_VERSION, SqliteRunStore } from '../store/sqlite-run-store.js';
import { describeRegistryStore } from '../testing/registry-store-suite.js';
import { REGISTRY_SCHEMA_VERSION, SqliteRegistryStore } from './sqlite-registry-store.js';

let dir: string;
let counter = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'registry-store-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeRegistryStore('SqliteRegistryStore', {
  open: (options) => new SqliteRegistryStore({ ...options, path: join(dir, `suite-${(counter += 1)}.db`) }),
});

const ALICE = { tenant: 'acme', principal_id: 'alice' };
const LIMITS = { ttlMs: 60_000, maxEntries: 100 };
const card = (name: string): AgentCard => ({
  name,
  description: name,
  url: `http://127.0.0.1:1/${name}`,
  skills: [{ id: `${name}-skill`, name, tags: ['shared'] }],
});

describe('SqliteRegistryStore file behaviour', () => {
  it('uses WAL, its own table keyed by (tenant, name), and its own schema row, not user_version', () => {
    const path = join(dir, 'schema.db');
    const store = new SqliteRegistryStore({ path });
    expect(store.journalMode).toBe('wal');
    store.close();
    const db = new Database(path, { readonly: true });
    try {
      const key = (
        db.prepare("SELECT name, pk FROM pragma_table_info('registry_entries') WHERE pk > 0").all() as {
          name: string;
          pk: number;
        }[]
      )
        .sort((a, b) => a.pk - b.pk)
        .map((column) => column.name);
      expect(key).toEqual(['tenant', 'name']);
      expect(db.prepare('SELECT component, version FROM schema_versions').all()).toEqual([
        { component: 'registry', version: REGISTRY_SCHEMA_VERSION },
      ]);
      expect(db.pragma('user_version', { simple: true })).toBe(0);
      // A page reads the primary key in order: no sort step, however many entries.
      const plan = db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT * FROM registry_entries WHERE tenant = 'a' AND expires_at > 'x' AND name > 'b'
           ORDER BY name LIMIT 51`,
        )
        .all() as { detail: string }[];
      expect(plan.map((row) => row.detail).join('\n')).not.toMatch(/TEMP B-TREE/);
    } finally {
      db.close();
    }
  });

  it('keeps entries, with their deadlines, across close and reopen', async () => {
    const path = join(dir, 'reopen.db');
    let now = Date.parse('2026-04-01T00:00:00Z');
    const first = new SqliteRegistryStore({ path, now: () => now });
    const { entry } = (await first.createEntry(ALICE, card('writer'), { ttlMs: 1000, maxEntries: 10 })) as {
      entry: unknown;
    };
    await first.createEntry(ALICE, card('reader'), LIMITS);
    first.close();
    const second = new SqliteRegistryStore({ path, now: () => now });
    try {
      expect(await second.getEntry('acme', 'writer')).toEqual(entry);
      expect(await second.countEntries()).toBe(2);
      expect(await second.createEntry(ALICE, card('writer'), LIMITS)).toEqual({ refused: 'exists' });
      now += 1000;
      expect(await second.getEntry('acme', 'writer')).toBeNull();
      expect(
        (await second.listEntries({ tenant: 'acme', skill: 'shared' })).entries.map((e) => e.name),
      ).toEqual(['reader']);
    } finally {
      second.close();
    }
  });

  it('shares one file with a SqliteRunStore, whichever opens it first, and both keep their rows', async () => {
    for (const registryFirst of [true, false]) {
      const path = join(dir, `shared-${registryFirst ? 'registry' : 'runs'}-first.db`);
      const open = () => {
        if (registryFirst) {
          const registry = new SqliteRegistryStore({ path });
          return { registry, runs: new SqliteRunStore({ path }) };
        }
        const runs = new SqliteRunStore({ path });
        return { registry: new SqliteRegistryStore({ path }), runs };
      };
      const first = open();
      await first.runs.saveTaskSnapshot(createTask('hello', { id: 'task-1', state: 'completed' }), {
        owner: ALICE,
      });
      expect(await first.registry.createEntry(ALICE, card('writer'), LIMITS)).toMatchObject({
        entry: { name: 'writer' },
      });
      await first.runs.appendTaskEvents(ALICE, 'task-1', [
        {
          type: 'task.status',
          task_id: 'task-1',
          state: 'completed',
          final: true,
          timestamp: '2026-04-01T00:00:00Z',
        },
      ]);
      expect(await first.registry.heartbeatEntry(ALICE, 'writer', 60_000)).not.toBeNull();
      expect(first.runs.journalMode).toBe('wal');
      expect(first.registry.journalMode).toBe('wal');
      first.registry.close();
      first.runs.close();

      const raw = new Database(path, { readonly: true });
      try {
        expect(raw.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
        expect(
          raw.prepare('SELECT version FROM schema_versions WHERE component = ?').pluck().get('registry'),
        ).toBe(REGISTRY_SCHEMA_VERSION);
      } finally {
        raw.close();
      }

      const second = open();
      try {
        expect(await second.runs.getTaskRecord('task-1', ALICE)).toMatchObject({ state: 'completed' });
        expect(await second.runs.listTaskEvents(ALICE, 'task-1')).toHaveLength(1);
        expect(await second.registry.getEntry('acme', 'writer')).toMatchObject({ principal_id: 'alice' });
        expect(await second.registry.countEntries()).toBe(1);
        // A read-only run store reader opens the shared file too.
        const reader = new SqliteRunStore({ path, readonly: true });
        expect(await reader.getTaskRecord('task-1', ALICE)).not.toBeNull();
        reader.close();
      } finally {
        second.registry.close();
        second.runs.close();
      }
    }
  });

  it('counts maxEntries across two stores on one file', async () => {
    const path = join(dir, 'two-connections.db');
    const a = new SqliteRegistryStore({ path });
    const b = new SqliteRegistryStore({ path });
    try {
      const limits = { ttlMs: 60_000, maxEntries: 5 };
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? a : b).createEntry(ALICE, card(`agent-${i}`), limits),
        ),
      );
      expect(results.filter((result) => 'entry' in result)).toHaveLength(5);
      expect(await a.countEntries()).toBe(5);
      expect(await b.createEntry(ALICE, card('agent-0'), limits)).toEqual({ refused: 'exists' });
      expect(await b.deleteEntry(ALICE, 'agent-0')).not.toBeNull();
      expect(await a.getEntry('acme', 'agent-0')).toBeNull();
    } finally {
      a.close();
      b.close();
    }
  });

  it('hides expired rows from reads at once and deletes them on the next write', async () => {
    const path = join(dir, 'purge.db');
    let now = Date.parse('2026-04-01T00:00:00Z');
    const store = new SqliteRegistryStore({ path, now: () => now });
    const raw = new Database(path, { readonly: true });
    const rows = () => raw.prepare('SELECT name FROM registry_entries ORDER BY name').pluck().all();
    try {
      await store.createEntry(ALICE, card('short'), { ttlMs: 1000, maxEntries: 10 });
      await store.createEntry({ tenant: 'globex', principal_id: 'bob' }, card('other'), {
        ttlMs: 1000,
        maxEntries: 10,
      });
      await store.createEntry(ALICE, card('long'), LIMITS);
      now += 1000;
      expect(await store.countEntries()).toBe(1);
      expect(await store.getEntry('acme', 'short')).toBeNull();
      expect(rows()).toEqual(['long', 'other', 'short']);
      // Any write purges every tenant's expired rows, even one that answers null.
      expect(await store.heartbeatEntry(ALICE, 'absent', 1000)).toBeNull();
      expect(rows()).toEqual(['long']);
    } finally {
      raw.close();
      store.close();
    }
  });

  it('refuses a file whose registry schema is newer', () => {
    const path = join(dir, 'future.db');
    new SqliteRegistryStore({ path }).close();
    const db = new Database(path);
    db.prepare('UPDATE schema_versions SET version = ? WHERE component = ?').run(
      REGISTRY_SCHEMA_VERSION + 1,
      'registry',
    );
    db.close();
    expect(() => new SqliteRegistryStore({ path })).toThrow(ValueError);
    expect(() => new SqliteRegistryStore({ path })).toThrow(/registry schema 2; this library reads up to 1/);
    // The run store does not look at the registry's version.
    new SqliteRunStore({ path }).close();
  });

  it('rejects bad options and unopenable paths with typed errors', () => {
    expect(() => new SqliteRegistryStore({ path: '' })).toThrow(ValueError);
    expect(() => new SqliteRegistryStore(undefined as never)).toThrow(ValueError);
    expect(() => new SqliteRegistryStore({ path: ':memory:', busyTimeoutMs: -1 })).toThrow(ValueError);
    expect(() => new SqliteRegistryStore({ path: ':memory:', now: 5 as never })).toThrow(ValueError);
    expect(() => new SqliteRegistryStore({ path: join(dir, 'no', 'such', 'dir', 'x.db') })).toThrow(
      UnavailableError,
    );
    expect(() => new SqliteRegistryStore({ path: join(dir, 'no', 'such', 'dir', 'x.db') })).toThrow(
      /^SqliteRegistryStore cannot open/,
    );
  });

  it('maps SQLite failures to UnavailableError', async () => {
    const path = join(dir, 'locked.db');
    const store = new SqliteRegistryStore({ path, busyTimeoutMs: 0 });
    const blocker = new Database(path);
    try {
      blocker.prepare('BEGIN IMMEDIATE').run();
      const error = await store.createEntry(ALICE, card('writer'), LIMITS).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ data: { sqlite_code: 'SQLITE_BUSY' } });
      expect((error as Error).message).toMatch(/^SqliteRegistryStore.createEntry: /);
      blocker.prepare('ROLLBACK').run();
      expect(await store.createEntry(ALICE, card('writer'), LIMITS)).toMatchObject({
        entry: { name: 'writer' },
      });
    } finally {
      blocker.close();
      store.close();
    }
  });

  it('works in memory', async () => {
    const store = new SqliteRegistryStore({ path: ':memory:' });
    expect(await store.createEntry(ALICE, card('m'), LIMITS)).toMatchObject({ entry: { name: 'm' } });
    expect(await store.getEntry('acme', 'm')).not.toBeNull();
    store.close();
  });
});
