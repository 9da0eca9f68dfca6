/** The CLI as a user runs it: a child process against a reference server in another child process. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from './cli.js';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

jest.setTimeout(60_000);

const CLI = path.resolve(__dirname, '../dist/cli.js');

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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
    server = await startServerProcess({ AGENT_AUTH: 'apikey', AGENT_API_KEYS: 'cli-key' });
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

  it('exits 2 with usage on bad arguments', async () => {
    const { code, stderr } = await runCli(['--transport', 'carrier-pigeon']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown transport carrier-pigeon/);
    expect(stderr).toMatch(/usage: conformance/);
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
  it('rejects missing values and a missing --url', () => {
    expect(() => parseArgs(['--url'])).toThrow(/--url needs a value/);
    expect(() => parseArgs(['--transport', 'http'])).toThrow(/--url is required/);
    expect(() => parseArgs(['--bogus'])).toThrow(/unknown argument --bogus/);
  });
});
