/**
 * The server under test: the built reference server (`dist/main.js` of @agent/reference-server) as
 * a child process on loopback, every port 0, with the environment given and nothing else of ours.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface Urls {
  http: string;
  sse: string;
  ws: string;
  grpc: string;
}

/** The built server's entry: beside the package's `dist/index.js`. */
export function serverMain(): string {
  return path.join(path.dirname(require.resolve('@agent/reference-server')), 'main.js');
}

const START_TIMEOUT_MS = 20_000;
/** The end of stderr kept for the report (an uncaught error's stack lands there). */
const STDERR_TAIL = 16 * 1024;

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Servers still running: killed if the harness itself exits, so none outlives it. */
const LIVE = new Set<ServerUnderTest>();
process.on('exit', () => {
  for (const server of LIVE) if (server.alive) server.child.kill('SIGKILL');
});

export class ServerUnderTest {
  /** Set once the process is gone, whoever ended it. */
  exit: ExitInfo | undefined;
  private stderrTail = '';
  private expectingExit = false;
  private readonly exited: Promise<ExitInfo>;

  private constructor(
    readonly child: ChildProcess,
    readonly urls: Urls,
    exited: Promise<ExitInfo>,
  ) {
    this.exited = exited;
  }

  static async start(env: Record<string, string> = {}): Promise<ServerUnderTest> {
    const child = spawn(process.execPath, [serverMain()], {
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        HTTP_PORT: '0',
        SSE_PORT: '0',
        WS_PORT: '0',
        GRPC_PORT: '0',
        AGENT_LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    let server: ServerUnderTest | undefined;
    child.stderr!.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-STDERR_TAIL);
      if (server) server.stderrTail = tail;
    });
    const exited = (once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>).then(
      ([code, signal]) => {
        const info = { code, signal };
        if (server) server.exit = info;
        return info;
      },
    );
    const lines = createInterface({ input: child.stdout! });
    const listening = new Promise<Urls>((resolve) => {
      lines.on('line', (line) => {
        try {
          const record = JSON.parse(line) as { event?: string } & Urls;
          if (record.event === 'listening')
            resolve({ http: record.http, sse: record.sse, ws: record.ws, grpc: record.grpc });
        } catch {
          // not one of the server's JSON lines
        }
      });
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const urls = await Promise.race([
        listening,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the server did not start: ${tail}`)), START_TIMEOUT_MS);
        }),
        exited.then((info) => {
          throw new Error(`the server exited (${JSON.stringify(info)}) before listening: ${tail}`);
        }),
      ]);
      server = new ServerUnderTest(child, urls, exited);
      LIVE.add(server);
      void exited.then(() => LIVE.delete(server!));
      server.stderrTail = tail;
      return server;
    } catch (error) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.exit === undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** True when the process exited without being asked to. */
  get crashed(): boolean {
    return !this.alive && !this.expectingExit;
  }

  stderr(): string {
    return this.stderrTail;
  }

  /** Resident set size of the child in KiB (VmRSS of /proc/<pid>/status), or undefined once gone. */
  rssKiB(): number | undefined {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
      return match ? Number(match[1]) : undefined;
    } catch {
      return undefined;
    }
  }

  /** `GET /healthz` answered 200 within `timeoutMs`. */
  healthy(timeoutMs = 3000): Promise<boolean> {
    if (!this.alive) return Promise.resolve(false);
    return new Promise((resolve) => {
      const req = request(`${this.urls.http}/healthz`, { agent: false, timeout: timeoutMs }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
        res.on('error', () => resolve(false));
      });
      req.on('timeout', () => {
        req.destroy();
        resolve(false);
      });
      req.on('error', () => resolve(false));
      req.end();
    });
  }

  /** Sends `signal` (SIGTERM: the graceful stop) and waits for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<ExitInfo> {
    this.expectingExit = true;
    if (this.alive) this.child.kill(signal);
    const timer = setTimeout(() => {
      if (this.alive) this.child.kill('SIGKILL');
    }, timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
