/** The CLI as a user runs it: a child process against a reference server in another child process. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, USAGE } from './cli-args.js';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

jest.setTimeout(60_000);

const CLI = path.resolve(__dirname, '../dist/cli.js');

function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('conformance CLI', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({ AGENT_AUTH: 'apikey', AGENT_API_KEYS: 'cli-key,cli-other-key' });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('prints a line per case and a table, writes JUnit XML and exits 0 when everything passes', async () => {
    const junit = path.join(mkdtempSync(path.join(tmpdir(), 'conformance-')), 'out.xml');
    const { code, stdout } = await runCli([
      '--',
      '--url',
      server.urls.http,
      '--api-key',
      'cli-key',
      '--other-api-key',
      'cli-other-key',
      '--junit',
      junit,
    ]);
    // The failing cases, with their messages, show first when something breaks.
    const lines = stdout.split('\n');
    expect(lines.filter((line, i) => line.startsWith('FAIL') || lines[i - 1]?.startsWith('FAIL'))).toEqual(
      [],
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/^PASS \[http\] http\.healthz \(\d+ ms\)$/m);
    expect(stdout).toMatch(/^\| http\s+\| task\.echo\s+\| passed/m);
    expect(stdout).toMatch(/^PASS \[http\] task\.owner\.other-principal \(\d+ ms\)$/m);
    expect(stdout).toMatch(/^conformance: \d+ passed, 0 failed$/m);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain('<testsuite name="conformance.http"');
    expect(xml).toContain('failures="0"');
    expect(xml).toMatch(/<testcase classname="conformance\.http" name="task\.echo: /);
  });

  it('exits 1 and reports the failures when the server does not behave as claimed', async () => {
    // The server demands an API key; claiming a wrong one makes the authenticated cases fail.
    const junit = path.join(mkdtempSync(path.join(tmpdir(), 'conformance-')), 'out.xml');
    const { code, stdout } = await runCli([
      '--url',
      server.urls.http,
      '--api-key',
      'not-the-key',
      '--filter',
      '^task\\.echo$',
      '--junit',
      junit,
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL \[http\] task\.echo/m);
    expect(stdout).toMatch(/UNAUTHENTICATED|Invalid API key|401/);
    expect(stdout).toMatch(/conformance: 0 passed, 1 failed/);
    expect(readFileSync(junit, 'utf8')).toContain('<failure message=');
  });

  it('runs over other transports and in-process', async () => {
    const ws = await runCli([
      '--url',
      server.urls.ws,
      '--transport',
      'ws',
      '--api-key',
      'cli-key',
      '--filter',
      '^(task|stream)\\.',
    ]);
    expect(ws.code).toBe(0);
    expect(ws.stdout).toMatch(/^PASS \[ws\] stream\.cancel/m);
    const memory = await runCli(['--transport', 'memory', '--filter', '^task\\.echo$']);
    expect(memory.code).toBe(0);
    expect(memory.stdout).toMatch(/^PASS \[memory\] task\.echo/m);
  });

  it('skips the registry cases against a server without a registry, saying so, and runs them with --registry', async () => {
    const detected = await runCli([
      '--url',
      server.urls.http,
      '--api-key',
      'cli-key',
      '--filter',
      '^(registry\\.|http\\.healthz$)',
    ]);
    expect(detected.code).toBe(0);
    expect(detected.stdout).toMatch(
      /^SKIP registry\.\* : the server serves no registry .*--registry runs them anyway$/m,
    );
    expect(detected.stdout).not.toMatch(/\] registry\./);
    const forced = await runCli([
      '--url',
      server.urls.http,
      '--api-key',
      'cli-key',
      '--registry',
      '--filter',
      '^registry\\.register$',
    ]);
    expect(forced.code).toBe(1);
    expect(forced.stdout).toMatch(/^FAIL \[http\] registry\.register/m);
    expect(forced.stdout).toMatch(/expected HTTP 201, got 404/);
  });

  it('skips the A2A cases against a server without A2A, saying so', async () => {
    const detected = await runCli([
      '--url',
      server.urls.http,
      '--api-key',
      'cli-key',
      '--filter',
      '^(a2a\\.|http\\.healthz$)',
    ]);
    expect(detected.code).toBe(0);
    expect(detected.stdout).toMatch(
      /^SKIP a2a\.\* : the server serves no A2A card .*--a2a runs them anyway$/m,
    );
    expect(detected.stdout).not.toMatch(/\] a2a\./);
  });

  it('writes --junit relative to the directory pnpm was run in (INIT_CWD) and prints the path', async () => {
    const userDir = mkdtempSync(path.join(tmpdir(), 'conformance-cwd-'));
    const { code, stdout } = await runCli(
      [
        '--url',
        server.urls.http,
        '--api-key',
        'cli-key',
        '--filter',
        '^http\\.healthz$',
        '--junit',
        'reports/c.xml',
      ],
      { INIT_CWD: userDir },
    );
    expect(code).toBe(0);
    const written = path.join(userDir, 'reports', 'c.xml');
    expect(stdout).toContain(`JUnit XML written to ${written}\n`);
    expect(readFileSync(written, 'utf8')).toContain('name="http.healthz: ');
  });
});

/** What a user who got something wrong sees: one line on stderr, no stack, exit 2, nothing run. */
async function expectOneLineError(args: string[], message: RegExp, env: Record<string, string> = {}) {
  const { code, stdout, stderr } = await runCli(args, env);
  expect({ code, stdout, lines: stderr.trimEnd().split('\n').length }).toEqual({
    code: 2,
    stdout: '',
    lines: 1,
  });
  expect(stderr).toMatch(/^conformance: /);
  expect(stderr).toMatch(message);
}

describe('conformance CLI errors', () => {
  it('says nothing answers at an unreachable address', async () => {
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    closed.close();
    await once(closed, 'close');
    await expectOneLineError(
      ['--url', `http://127.0.0.1:${port}`],
      new RegExp(
        `nothing answers at http://127\\.0\\.0\\.1:${port} \\(connection refused\\); is the server running\\?`,
      ),
    );
  });

  it('says which transport a URL fits', async () => {
    await expectOneLineError(
      ['--url', 'ws://127.0.0.1:8082'],
      /--url ws:\/\/127\.0\.0\.1:8082 does not fit --transport http, which takes http:\/\/ or https:\/\/ URLs; for this URL use --transport ws$/m,
    );
    await expectOneLineError(
      ['--url', 'localhost:50051', '--transport', 'grpc'],
      /does not start with grpc:\/\/ or grpcs:\/\//,
    );
  });

  it('names an unknown option, a missing value and a missing --url', async () => {
    await expectOneLineError(
      ['--url', 'http://127.0.0.1:8080', '--bogus'],
      /unknown option --bogus; the options are --url, /,
    );
    await expectOneLineError(['--url'], /--url needs a value$/m);
    await expectOneLineError(['--', '--api-key', 'k'], /--url is required with --transport http$/m);
    await expectOneLineError(
      ['--transport', 'carrier-pigeon'],
      /unknown transport carrier-pigeon; use one of http, memory, sse, ws, grpc$/m,
    );
  });

  it('names a bad reference-server setting for --transport memory', async () => {
    await expectOneLineError(['--transport', 'memory'], /AGENT_AUTH/, { AGENT_AUTH: 'carrier-pigeon' });
  });

  it('says when the JUnit file cannot be written, before running any case', async () => {
    await expectOneLineError(
      ['--transport', 'memory', '--junit', '/dev/null/out.xml'],
      /^conformance: cannot write the JUnit XML to \/dev\/null\/out\.xml: /,
    );
  });

  it('prints the usage for --help and exits 0', async () => {
    const { code, stdout } = await runCli(['--', '--help']);
    expect(code).toBe(0);
    expect(stdout).toBe(`${USAGE}\n`);
  });
});

describe('parseArgs', () => {
  it('reads every option and ignores a lone --', () => {
    expect(
      parseArgs(['--', '--url', 'grpc://h:1', '--transport', 'grpc', '--bearer', 'jwt', '--timeout-ms', '5']),
    ).toMatchObject({
      url: 'grpc://h:1',
      transport: 'grpc',
      credentials: { kind: 'bearer', value: 'jwt' },
      timeoutMs: 5,
    });
    expect(parseArgs(['--transport', 'memory', '--basic', 'a:b']).credentials).toEqual({
      kind: 'basic',
      value: 'a:b',
    });
  });
  it("reads a second principal's credential of the first one's kind", () => {
    const base = ['--transport', 'memory'];
    expect(parseArgs([...base, '--api-key', 'k1', '--other-api-key', 'k2']).otherCredentials).toEqual({
      kind: 'apikey',
      value: 'k2',
    });
    expect(parseArgs([...base, '--bearer', 'j1', '--other-bearer=j2']).otherCredentials).toEqual({
      kind: 'bearer',
      value: 'j2',
    });
    expect(parseArgs([...base, '--basic', 'a:1', '--other-basic', 'b:2']).otherCredentials).toEqual({
      kind: 'basic',
      value: 'b:2',
    });
    expect(() => parseArgs([...base, '--other-api-key', 'k2'])).toThrow(
      /^--other-api-key is a second principal's credential: it needs --api-key for the first one$/,
    );
    expect(() => parseArgs([...base, '--bearer', 'j', '--other-api-key', 'k'])).toThrow(/needs --api-key/);
    expect(() => parseArgs([...base, '--api-key', 'k', '--other-api-key', 'k'])).toThrow(
      /^--other-api-key must differ from --api-key: it names a second principal$/,
    );
    expect(() => parseArgs([...base, '--basic', 'a:1', '--other-basic', 'bob'])).toThrow(
      /^--other-basic needs USER:PASS$/,
    );
    expect(() =>
      parseArgs([...base, '--api-key', 'k', '--other-api-key', 'k2', '--other-bearer', 'j']),
    ).toThrow(/^give one of --other-api-key, --other-bearer, --other-basic, not /);
  });
  it('reads --registry, a flag of --transport http', () => {
    expect(parseArgs(['--url', 'http://h:1', '--registry']).registry).toBe(true);
    expect(parseArgs(['--url', 'http://h:1']).registry).toBeUndefined();
    expect(() => parseArgs(['--url', 'ws://h:1', '--transport', 'ws', '--registry'])).toThrow(
      /^--registry: the registry is served over HTTP; its cases run with --transport http$/,
    );
    expect(() => parseArgs(['--url', 'http://h:1', '--registry=yes'])).toThrow(/^--registry takes no value$/);
    expect(() => parseArgs(['--url', 'http://h:1', '--registry', 'yes'])).toThrow(
      /^unexpected argument yes; /,
    );
    expect(() => parseArgs(['--url', 'http://h:1', '--registry', '--registry'])).toThrow(
      /^--registry is given twice$/,
    );
  });
  it('reads --a2a, a flag of --transport http', () => {
    expect(parseArgs(['--url', 'http://h:1', '--a2a']).a2a).toBe(true);
    expect(parseArgs(['--url', 'http://h:1']).a2a).toBeUndefined();
    expect(() => parseArgs(['--url', 'ws://h:1', '--transport', 'ws', '--a2a'])).toThrow(
      /^--a2a: A2A is served over HTTP; its cases run with --transport http$/,
    );
    expect(() => parseArgs(['--url', 'http://h:1', '--a2a=yes'])).toThrow(/^--a2a takes no value$/);
    expect(() => parseArgs(['--url', 'http://h:1', '--a2a', '--a2a'])).toThrow(/^--a2a is given twice$/);
  });
  it('reads --name=value, and resolves --junit against the given directory', () => {
    expect(parseArgs(['--url=http://h:1', '--junit=out/x.xml'], '/home/me')).toEqual({
      transport: 'http',
      url: 'http://h:1',
      junit: path.resolve('/home/me', 'out/x.xml'),
    });
    expect(parseArgs(['--transport', 'memory', '--junit', '/abs/x.xml'], '/home/me').junit).toBe(
      '/abs/x.xml',
    );
  });
  it('rejects missing values, unknown options and a missing --url', () => {
    expect(() => parseArgs(['--url'])).toThrow(/^--url needs a value$/);
    expect(() => parseArgs(['--url', '--transport', 'ws'])).toThrow(/^--url needs a value$/);
    expect(() => parseArgs(['--url='])).toThrow(/^--url needs a value$/);
    expect(() => parseArgs(['--transport', 'http'])).toThrow(/^--url is required with --transport http$/);
    expect(() => parseArgs(['--bogus'])).toThrow(/^unknown option --bogus; the options are /);
    expect(() => parseArgs(['http://h:1'])).toThrow(/^unexpected argument http:\/\/h:1; /);
    expect(() => parseArgs(['--url', 'http://h:1', '--url', 'http://h:2'])).toThrow(/^--url is given twice$/);
  });
  it('rejects a URL the transport does not speak and options that do not apply', () => {
    expect(() => parseArgs(['--url', 'http://h:1', '--transport', 'grpc'])).toThrow(
      /^--url http:\/\/h:1 does not fit --transport grpc, which takes grpc:\/\/ or grpcs:\/\/ URLs; for this URL use --transport http or sse$/,
    );
    expect(() => parseArgs(['--url', 'h:1'])).toThrow(
      /^--url h:1 does not start with http:\/\/ or https:\/\/$/,
    );
    expect(() => parseArgs(['--url', '8080'])).toThrow(/does not start with http:\/\//);
    expect(() => parseArgs(['--transport', 'memory', '--url', 'http://h:1'])).toThrow(/takes no --url/);
    expect(() => parseArgs(['--url', 'ws://h:1', '--transport', 'ws', '--http-url', 'http://h:2'])).toThrow(
      /--http-url is for the wire cases, which run only with --transport http/,
    );
    expect(() => parseArgs(['--url', 'http://h:1', '--http-url', 'ws://h:2'])).toThrow(
      /^--http-url ws:\/\/h:2 does not fit --transport http, which takes http:\/\/ or https:\/\/ URLs$/,
    );
  });
  it('rejects bad values', () => {
    const base = ['--transport', 'memory'];
    expect(() => parseArgs([...base, '--api-key', 'k', '--bearer', 'j'])).toThrow(
      /^give one of --api-key, --bearer, --basic, not --api-key and --bearer$/,
    );
    expect(() => parseArgs([...base, '--basic', 'alice'])).toThrow(/^--basic needs USER:PASS$/);
    expect(() => parseArgs([...base, '--timeout-ms', '5s'])).toThrow(/^--timeout-ms needs a whole number/);
    expect(() => parseArgs([...base, '--timeout-ms', '0'])).toThrow(/^--timeout-ms needs a whole number/);
    expect(() => parseArgs([...base, '--filter', '('])).toThrow(/^--filter \( is not a regular expression: /);
    expect(() => parseArgs([...base, '--filter', '^nothing$'])).toThrow(
      /^--filter \^nothing\$ matches no case id/,
    );
  });
  it('has a usage that names exactly the options it reads', () => {
    const accepted = (() => {
      try {
        parseArgs(['--bogus']);
      } catch (error) {
        return (error as Error).message.split('the options are ')[1]!.split(', ');
      }
      throw new Error('--bogus was accepted');
    })();
    expect([...new Set(USAGE.match(/--[a-z0-9-]+/g))].sort()).toEqual(accepted.sort());
  });
});
