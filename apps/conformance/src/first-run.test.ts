/**
 * A newcomer's first run, as the root README tells it: a fresh clone, the install, `pnpm start` in
 * the background until its listening line, `pnpm conformance -- --url http://127.0.0.1:8080`
 * against it, then Ctrl-C. The README promises the default ports, so they must be free here.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

// A fresh clone builds every package the server and the suite use: a minute or two on a CI machine.
jest.setTimeout(10 * 60_000);

const PORTS = { http: 8080, sse: 8081, ws: 8082, grpc: 50051 };

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

// What the surrounding pnpm, turbo and jest set and a user's shell does not have.
const RUNNER_VARIABLES =
  /^(npm_(?!config_)|npm_config_user_agent$|INIT_CWD$|PNPM_SCRIPT_SRC_DIR$|TURBO_|JEST_|NODE_ENV$)/;

function userEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !RUNNER_VARIABLES.test(name)));
}

function git(args: string[], cwd: string, input?: Buffer): Buffer {
  return execFileSync('git', args, {
    cwd,
    input,
    maxBuffer: 512 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs a command to its end, collecting its output. */
function run(command: string, args: string[], cwd: string): Promise<Finished> {
  const child = spawn(command, args, { cwd, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  return finished(child);
}

function finished(child: ChildProcess): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function portTaken(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' ? resolve(true) : reject(error),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}

/**
 * A clone of this checkout's HEAD plus its uncommitted changes: in CI (a fresh clone) exactly what
 * a newcomer gets; on a developer's machine, what they would get once the changes are committed.
 */
function cloneCheckout(into: string): void {
  const root = git(['rev-parse', '--show-toplevel'], __dirname).toString().trim();
  git(['clone', '--quiet', root, into], tmpdir());
  const diff = git(['diff', 'HEAD', '--binary'], root);
  if (diff.length > 0) git(['apply', '--binary', '--whitespace=nowarn', '-'], into, diff);
  const untracked = git(['ls-files', '--others', '--exclude-standard', '-z'], root).toString();
  for (const file of untracked.split('\0').filter(Boolean)) {
    mkdirSync(path.dirname(path.join(into, file)), { recursive: true });
    copyFileSync(path.join(root, file), path.join(into, file));
  }
}

describe('a fresh clone, as the README says', () => {
  let work: string;
  let repo: string;
  let server: ChildProcess | undefined;

  beforeAll(async () => {
    const taken: string[] = [];
    for (const [transport, port] of Object.entries(PORTS))
      if (await portTaken(port)) taken.push(`${port} (${transport})`);
    if (taken.length > 0)
      throw new Error(
        `port ${taken.join(', ')} on 127.0.0.1 is taken; this test runs the README's pnpm start, which listens on ` +
          `${Object.values(PORTS).join(', ')}: stop whatever uses it (a pnpm start of your own?) and run again`,
      );
    work = mkdtempSync(path.join(tmpdir(), 'first-run-'));
    repo = path.join(work, 'repo');
    cloneCheckout(repo);
  });

  afterAll(async () => {
    if (server?.pid && server.exitCode === null && server.signalCode === null) {
      const exited = once(server, 'close');
      process.kill(-server.pid, 'SIGKILL');
      await exited;
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('installs without a warning, starts, passes the conformance suite over HTTP and stops on Ctrl-C', async () => {
    // The CI's own install has filled the pnpm store; without it the packages come from the registry.
    let install = await run('pnpm', ['install', '--frozen-lockfile', '--offline'], repo);
    if (install.code !== 0) {
      process.stderr.write(`offline install failed, installing from the registry:\n${install.stderr}\n`);
      install = await run('pnpm', ['install', '--frozen-lockfile'], repo);
    }
    expect(install).toMatchObject({ code: 0 });
    expect(`${install.stdout}${install.stderr}`).not.toMatch(/WARN|Warning/);

    // Its own process group, so that the stop below reaches pnpm, the build and the server, as
    // Ctrl-C in a terminal does.
    server = spawn('pnpm', ['start'], {
      cwd: repo,
      env: userEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = finished(server);
    const listening = await new Promise<Record<string, string>>((resolve, reject) => {
      createInterface({ input: server!.stdout! }).on('line', (line) => {
        if (line.startsWith('{"event":"listening"')) resolve(JSON.parse(line) as Record<string, string>);
      });
      void started.then(
        (end) =>
          reject(
            new Error(
              `pnpm start ended (${end.code ?? end.signal}) without listening:\n${end.stdout}${end.stderr}`,
            ),
          ),
        reject,
      );
    });
    expect(listening).toMatchObject({
      http: `http://127.0.0.1:${PORTS.http}`,
      sse: `http://127.0.0.1:${PORTS.sse}`,
      ws: `ws://127.0.0.1:${PORTS.ws}`,
      grpc: `grpc://127.0.0.1:${PORTS.grpc}`,
    });

    const conformance = await run('pnpm', ['conformance', '--', '--url', 'http://127.0.0.1:8080'], repo);
    expect({ code: conformance.code, output: `${conformance.stdout}${conformance.stderr}` }).toMatchObject({
      code: 0,
    });
    expect(conformance.stdout).toMatch(/^conformance: [1-9]\d* passed, 0 failed$/m);
    // Build progress goes to stderr, the report alone to stdout.
    expect(conformance.stderr).toMatch(/^conformance: building @agent\/conformance /m);

    process.kill(-server.pid!, 'SIGINT');
    const end = await started;
    expect({ code: end.code, signal: end.signal }).toEqual({ code: 0, signal: null });
    expect(end.stderr).toMatch(/^start: building @agent\/reference-server /m);
    expect(end.stderr).toMatch(/^start: built \d+ packages in /m);
    expect(end.stdout).toMatch(/^\{"event":"stopped"\}$/m);
    expect(`${end.stdout}${end.stderr}`).not.toMatch(/ELIFECYCLE|ERR_PNPM/);
  });
});
