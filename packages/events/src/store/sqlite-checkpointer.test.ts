import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WalCheckpointer } from './sqlite-checkpointer.js';

let dir: string;
let files = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sqlite-checkpointer-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A WAL file and a writer connection that never checkpoints on its own. */
function writer(): { path: string; db: Database.Database; write: (kib: number) => void } {
  const path = join(dir, `db-${(files += 1)}.db`);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (v TEXT)');
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  const write = (kib: number) => {
    for (let i = 0; i < kib / 8; i += 1) insert.run(`${i}`.padEnd(8 * 1024, 'x'));
  };
  return { path, db, write };
}

/** Resolves once `check` holds; fails the test after 10 s (a worker thread that never did its work). */
async function eventually(check: () => boolean): Promise<void> {
  const until = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > until) throw new Error('the condition never held');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('WalCheckpointer', () => {
  it('copies a log another connection writes into the file from its worker thread, and stops on close', async () => {
    const { path, db, write } = writer();
    const running: boolean[] = [];
    const checkpointer = new WalCheckpointer({
      path,
      intervalMs: 10,
      startAtBytes: 0,
      onRunning: (value) => running.push(value),
    });
    try {
      write(2048);
      const before = statSync(path).size;
      expect(statSync(`${path}-wal`).size).toBeGreaterThan(2 * 1024 * 1024);
      checkpointer.start();
      expect(checkpointer.running).toBe(true);
      // The writer never checkpoints: only the worker can have grown the file.
      await eventually(() => statSync(path).size > before + 2 * 1024 * 1024);
      // And again for what is written later.
      const after = statSync(path).size;
      write(1024);
      await eventually(() => statSync(path).size > after + 1024 * 1024 - 64 * 1024);
      await checkpointer.close();
      expect(checkpointer.running).toBe(false);
      expect(running).toEqual([true]);
      expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(384);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  it('starts only once the log has grown past its size, looking every 64 commits', async () => {
    const { path, db, write } = writer();
    const checkpointer = new WalCheckpointer({ path, intervalMs: 10, startAtBytes: 4 * 1024 * 1024 });
    try {
      write(64);
      expect(statSync(`${path}-wal`).size).toBeLessThan(4 * 1024 * 1024);
      for (let i = 0; i < 192; i += 1) checkpointer.noteCommit();
      expect(checkpointer.running).toBe(false);
      write(4096);
      for (let i = 0; i < 63; i += 1) checkpointer.noteCommit();
      expect(checkpointer.running).toBe(false);
      checkpointer.noteCommit();
      expect(checkpointer.running).toBe(true);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  it('opens the file its path named when it was made, whatever the directory is when it starts', async () => {
    const { path, db, write } = writer();
    const home = process.cwd();
    process.chdir(dir);
    const checkpointer = new WalCheckpointer({
      path: path.slice(dir.length + 1),
      intervalMs: 10,
      startAtBytes: 0,
    });
    process.chdir(home);
    try {
      write(1024);
      const before = statSync(path).size;
      checkpointer.start();
      await eventually(() => statSync(path).size > before + 1024 * 1024 - 64 * 1024);
    } finally {
      process.chdir(home);
      await checkpointer.close();
      db.close();
    }
  });

  it('lets a worker that cannot open its file end, says so, and never starts again', async () => {
    const running: boolean[] = [];
    const checkpointer = new WalCheckpointer({
      path: join(dir, 'missing', 'nothing.db'),
      intervalMs: 10,
      startAtBytes: 0,
      onRunning: (value) => running.push(value),
    });
    checkpointer.start();
    await eventually(() => !checkpointer.running);
    expect(running).toEqual([true, false]);
    checkpointer.start();
    expect(checkpointer.running).toBe(false);
    await checkpointer.close();
  });

  it('closes at once when it never ran', async () => {
    const checkpointer = new WalCheckpointer({
      path: join(dir, 'never.db'),
      intervalMs: 10,
      startAtBytes: 0,
    });
    await checkpointer.close();
    checkpointer.start();
    expect(checkpointer.running).toBe(false);
  });
});
