/**
 * Checkpoints a database's write-ahead log from a worker thread. In WAL mode the commit that takes
 * the log past its limit copies every page the log holds into the file and syncs it, on the thread
 * that committed: for a busy store, tens of milliseconds of the event loop several times a second.
 * A second connection, in a thread of its own, does that copy instead; SQLite lets it run beside
 * the writer (a PASSIVE checkpoint takes no lock a writer waits for), and the writer's own
 * automatic checkpoint, set higher meanwhile, is left the short tail and restarting the log.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * The worker: its own connection to the file; a PASSIVE checkpoint whenever the log changed since
 * the last look. A checkpoint that fails (the file is busy or gone) is tried again at the next look.
 * Plain JavaScript evaluated in the worker, so it runs the same from sources and from the build.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true, timeout: 0 });
const log = workerData.path + '-wal';
let seen = '';
const timer = setInterval(() => {
  let stamp;
  try {
    const stat = statSync(log);
    stamp = stat.size + ':' + stat.mtimeMs;
  } catch {
    return;
  }
  if (stamp === seen) return;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    seen = stamp;
  } catch {}
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointerOptions {
  /** The database file (not `:memory:`). */
  path: string;
  /** How often the worker looks at the log, in milliseconds. */
  intervalMs: number;
  /** The log size, in bytes, at which a store starts the worker (a store that writes little never does). */
  startAtBytes: number;
  /** Called when the worker starts, and when it stops early (it failed): the writer's own checkpoint size follows. */
  onRunning?: (running: boolean) => void;
}

/** Commits between two looks at the log's size before the worker is started. */
const COMMITS_PER_LOOK = 64;

const load = createRequire(__filename);

export class WalCheckpointer {
  readonly #options: WalCheckpointerOptions;
  /** Resolved now: a worker started later must open this file even if the process changed directory. */
  readonly #path: string;
  #worker: Worker | undefined;
  #exited: Promise<void> = Promise.resolve();
  #commits = 0;
  /** Set once the worker was started, failed or was closed: it is never started again. */
  #settled = false;

  constructor(options: WalCheckpointerOptions) {
    this.#options = options;
    this.#path = resolve(options.path);
  }

  /** True while the worker runs. */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** After a commit: once the log has grown past `startAtBytes`, starts the worker. */
  noteCommit(): void {
    if (this.#settled || ++this.#commits < COMMITS_PER_LOOK) return;
    this.#commits = 0;
    let size: number;
    try {
      size = statSync(`${this.#path}-wal`).size;
    } catch {
      return;
    }
    if (size >= this.#options.startAtBytes) this.start();
  }

  /** Starts the worker now (once). A worker that cannot start or fails leaves checkpoints to the writer. */
  start(): void {
    if (this.#settled) return;
    this.#settled = true;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          module: load.resolve('better-sqlite3'),
          path: this.#path,
          intervalMs: this.#options.intervalMs,
        },
      });
    } catch {
      return;
    }
    // A process ends when its work does: the checkpoints are an optimization, never a reason to stay.
    worker.unref();
    this.#worker = worker;
    this.#exited = new Promise((resolve) => {
      worker.once('exit', () => {
        if (this.#worker === worker) {
          this.#worker = undefined;
          this.#options.onRunning?.(false);
        }
        resolve();
      });
    });
    // The worker's own failure (a file it cannot open) ends it; the writer checkpoints as before.
    worker.on('error', () => undefined);
    this.#options.onRunning?.(true);
  }

  /**
   * Stops the worker: it closes its connection and ends. Resolves once it has (at once when it never
   * ran). Idempotent.
   */
  close(): Promise<void> {
    this.#settled = true;
    const worker = this.#worker;
    this.#worker = undefined;
    worker?.postMessage('close');
    return this.#exited;
  }
}
