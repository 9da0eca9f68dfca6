/**
 * A server under test, run as a child process of its own: the bench process only drives load and
 * reads the child's CPU time and memory through the preloaded probe (see probe.ts). Sharing a process
 * with the load generator would bill the generator's work to the server and let each starve the other.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ProbeReply, ProbeRequest } from './probe-protocol.js';

export interface ServerSpec {
  /** The server configuration as the report names it. */
  label: string;
  /** Absolute path of the built JS entry point. */
  script: string;
  /** Variables on top of the bench's environment (every AGENT_* and *_PORT variable is cleared first). */
  env?: Record<string, string>;
  nodeArgs?: string[];
}

/** The `{"event":"listening",...}` line a server prints once every transport serves. */
export interface ServerUrls {
  http: string;
  sse?: string;
  ws?: string;
  grpc?: string;
}

export interface ProbeSample {
  cpuMicros: number;
  rssBytes: number;
  maxRssBytes: number;
}

const DIST = __dirname;
const PROBE = path.join(DIST, 'probe.js');
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
const PROBE_TIMEOUT_MS = 30_000;
const STDERR_TAIL = 8192;

export const BENCH_SERVERS = {
  bareHttp: path.join(DIST, 'servers', 'bare-http.js'),
  transportHttp: path.join(DIST, 'servers', 'transport-http.js'),
  a2aSdk: path.join(DIST, 'servers', 'a2a-sdk.js'),
};

/**
 * The reference server's built entry point: through the workspace dependency when it is linked,
 * else beside this package in the repository (the same file).
 */
export function referenceServerMain(): string {
  try {
    return path.join(path.dirname(require.resolve('@agent/reference-server')), 'main.js');
  } catch {
    return path.resolve(DIST, '../../apps/reference-server/dist/main.js');
  }
}

/**
 * A task limit no benchmark reaches (its per-caller share, half of it by default, neither): the
 * bench measures speed from one address, not the limits.
 */
export const UNLIMITED_TASKS = { AGENT_MAX_CONCURRENT_TASKS: '1000000' } as const;

/** The bench's own baseline servers, each a spec for a fresh child. */
export const bareSpec = (): ServerSpec => ({ label: 'bare node:http', script: BENCH_SERVERS.bareHttp });
export const transportSpec = (): ServerSpec => ({
  label: 'HTTPTransport',
  script: BENCH_SERVERS.transportHttp,
});
export const a2aSdkSpec = (): ServerSpec => ({
  label: '@a2a-js/sdk 1.3 + express',
  script: BENCH_SERVERS.a2aSdk,
});

/**
 * The reference server's shipped `main.js` with `env` over a lifted task limit: the bench measures
 * speed (up to 512 callers, 1,000 tasks canceled at once), not how the server refuses work past its
 * default of 32 running tasks.
 */
export function referenceSpec(
  label: string,
  env: Record<string, string> = {},
  nodeArgs?: string[],
): ServerSpec {
  return {
    label: `reference server, ${label}`,
    script: referenceServerMain(),
    env: { ...UNLIMITED_TASKS, ...env },
    ...(nodeArgs ? { nodeArgs } : {}),
  };
}

/** Port 0 on every transport: the OS picks free ports, so no run collides with another or a test. */
const FREE_PORTS = { HOST: '127.0.0.1', HTTP_PORT: '0', SSE_PORT: '0', WS_PORT: '0', GRPC_PORT: '0' };

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // A setting left in the caller's shell (AGENT_AUTH, HTTP_PORT, …) would change what is measured.
    if (key.startsWith('AGENT_') || key.endsWith('_PORT') || key === 'HOST') continue;
    env[key] = value;
  }
  // A stop lets nothing finish: the bench stops a server only once its subject is done.
  return { ...env, ...FREE_PORTS, AGENT_STOP_GRACE_MS: '0', ...extra };
}

export interface ServerStartOptions {
  /** Node flags after the spec's own. */
  extraNodeArgs?: string[];
  /** A command the child runs under, `node` and its arguments appended (`['valgrind', …]`). */
  wrapper?: string[];
  /** How long to wait for the listening line; default 30 s. */
  readyTimeoutMs?: number;
  /** How long a stop waits for the child to exit after SIGTERM; default 15 s. */
  stopTimeoutMs?: number;
}

export class ServerChild {
  readonly pid: number;
  private stderrTail = '';
  private nextProbe = 1;
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private stopping = false;
  /** Settles when the child has exited and its stdio pipes are closed (all its output read). */
  private readonly closed: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly spec: ServerSpec,
    readonly urls: ServerUrls,
    private readonly stopTimeoutMs: number,
  ) {
    this.pid = child.pid ?? -1;
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      };
      if (child.exitCode !== null || child.signalCode !== null) done(child.exitCode, child.signalCode);
      else child.once('exit', done);
    });
  }

  static async start(spec: ServerSpec, options: ServerStartOptions = {}): Promise<ServerChild> {
    const args = [
      ...(spec.nodeArgs ?? []),
      ...(options.extraNodeArgs ?? []),
      '--require',
      PROBE,
      spec.script,
    ];
    const [command, ...commandArgs] = [...(options.wrapper ?? []), process.execPath, ...args];
    const readyTimeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
    const child = spawn(command!, commandArgs, {
      env: childEnv(spec.env ?? {}),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let tail = '';
    // Both pipes are read to the end: a child whose pipe fills up blocks on its next write.
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      tail = (tail + chunk).slice(-STDERR_TAIL);
    });
    const urls = await new Promise<ServerUrls>((resolve, reject) => {
      let buffered = '';
      const timer = setTimeout(
        () => fail(new Error(`not listening after ${readyTimeoutMs} ms`)),
        readyTimeoutMs,
      );
      const fail = (error: Error) => {
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new Error(`${spec.label}: ${error.message}\n${tail}`));
      };
      const onExit = (code: number | null) => fail(new Error(`exited with code ${code} before listening`));
      child.once('exit', onExit);
      child.once('error', fail);
      child.stdout!.setEncoding('utf8');
      const onData = (chunk: string) => {
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) !== -1) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          const record = parseLine(line);
          if (record?.event !== 'listening' || typeof record.http !== 'string') continue;
          clearTimeout(timer);
          child.off('exit', onExit);
          child.stdout!.off('data', onData);
          child.stdout!.resume();
          resolve({
            http: record.http,
            ...(typeof record.sse === 'string' ? { sse: record.sse } : {}),
            ...(typeof record.ws === 'string' ? { ws: record.ws } : {}),
            ...(typeof record.grpc === 'string' ? { grpc: record.grpc } : {}),
          });
          return;
        }
      };
      child.stdout!.on('data', onData);
    });
    const server = new ServerChild(child, spec, urls, options.stopTimeoutMs ?? STOP_TIMEOUT_MS);
    server.stderrTail = tail;
    child.stderr!.on('data', (chunk: string) => {
      server.stderrTail = (server.stderrTail + chunk).slice(-STDERR_TAIL);
    });
    return server;
  }

  /** The child's CPU time so far and its memory; `gc` forces a collection first (needs --expose-gc). */
  probe(gc = false): Promise<ProbeSample> {
    this.assertAlive();
    const id = this.nextProbe++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.child.off('message', onMessage);
        reject(new Error(`${this.spec.label}: no probe answer after ${PROBE_TIMEOUT_MS} ms`));
      }, PROBE_TIMEOUT_MS);
      const onMessage = (message: unknown) => {
        const reply = message as ProbeReply;
        if (reply?.type !== 'probe' || reply.id !== id) return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve({ cpuMicros: reply.cpuMicros, rssBytes: reply.rssBytes, maxRssBytes: reply.maxRssBytes });
      };
      this.child.on('message', onMessage);
      const request: ProbeRequest = { type: 'probe', id, gc };
      this.child.send(request);
    });
  }

  /** Throws when the server died while it was measured: its numbers would mean nothing. */
  assertAlive(): void {
    if (this.exitInfo && !this.stopping)
      throw new Error(
        `${this.spec.label}: server exited (code ${this.exitInfo.code}, signal ${this.exitInfo.signal})\n${this.stderrTail}`,
      );
  }

  /**
   * The end of what the child wrote to stderr, once its pipes are closed: after a stop, the last it
   * wrote, a wrapper's summary at exit included.
   */
  async stderrAtClose(): Promise<string> {
    await this.closed;
    return this.stderrTail;
  }

  /** SIGTERM, then SIGKILL if it has not exited in time (15 s by default); rejects when it exited with an error. */
  async stop(): Promise<void> {
    this.assertAlive();
    this.stopping = true;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const forced = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.stopTimeoutMs);
    });
    const outcome = await Promise.race([this.exited, forced]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      this.child.kill('SIGKILL');
      await this.exited;
      throw new Error(`${this.spec.label}: did not stop within ${this.stopTimeoutMs} ms of SIGTERM`);
    }
    if (outcome.code !== 0)
      throw new Error(`${this.spec.label}: stopped with exit code ${outcome.code}\n${this.stderrTail}`);
  }

  /** Last resort after a failure elsewhere: the child must not outlive the bench. */
  kill(): void {
    this.stopping = true;
    if (!this.exitInfo) this.child.kill('SIGKILL');
  }
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
