import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createTask, UnavailableError, type AgentError } from '@agent/core';
import { SqliteRunStore } from './sqlite-run-store.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sqlite-lock-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a write meeting another process’s lock fails with UNAVAILABLE (SQLITE_BUSY) instead of waiting seconds', async () => {
  const path = join(dir, 'locked.db');
  const store = new SqliteRunStore({ path });
  // Another connection (as another process would) takes the write lock and keeps it.
  const other = new Database(path);
  other.exec('BEGIN IMMEDIATE');
  try {
    const error = (await store.saveTaskSnapshot(createTask('x')).catch((e: unknown) => e)) as AgentError;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.data).toMatchObject({ sqlite_code: 'SQLITE_BUSY' });
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
  // Once the lock is gone the same write passes.
  await store.saveTaskSnapshot(createTask('y', { id: 'after-lock' }));
  expect(await store.getTaskRecord('after-lock')).not.toBeNull();
  store.close();
});
