import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { APIKeyAuth } from '@agent/auth';
import { ValueError } from '@agent/core';
import { Agent } from './agent.js';
import { loadTransport, TRANSPORT_NAMES } from './load-transport.js';

const runtimeDist = resolve(__dirname, '..', 'dist', 'index.js');
// A project of the workspace that depends on every transport (the runtime itself does not).
const referenceServer = resolve(__dirname, '..', '..', '..', 'apps', 'reference-server');
// pnpm's jest launcher sets NODE_PATH to the store's shared node_modules; a user's program has no such path.
const { NODE_PATH: _storePath, ...userEnv } = process.env;

/** A throwaway project whose node_modules holds one hand-written package. */
function projectWith(packageName: string, source: string): { main: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'agent-transport-'));
  const dir = join(root, 'node_modules', ...packageName.split('/'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: packageName, main: 'index.js' }));
  writeFileSync(join(dir, 'index.js'), source);
  return { main: join(root, 'main.js'), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

describe('transport by name', () => {
  it('serves every transport by name from a project that has the packages, with the real card URL after start', async () => {
    // What a user's program does: runs from its project, where the transport packages are installed.
    const program = `
      const { Agent } = require(${JSON.stringify(runtimeDist)});
      const urls = { http: 'http://127.0.0.1:0', sse: 'http://127.0.0.1:0', ws: 'ws://127.0.0.1:0', grpc: 'grpc://127.0.0.1:0', memory: undefined };
      (async () => {
        const seen = {};
        for (const [name, url] of Object.entries(urls)) {
          const agent = new Agent({ card: { name: name + '-agent', url }, transport: name, execute: () => undefined });
          await agent.start();
          seen[name] = { kind: agent.transport.kind, url: agent.card.url, transportUrl: agent.transport.url };
          await agent.stop();
        }
        console.log(JSON.stringify(seen));
      })().catch((error) => { console.error(error); process.exitCode = 1; });`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', program], {
      cwd: referenceServer,
      env: userEnv,
    });
    const seen = JSON.parse(stdout) as Record<string, { kind: string; url: string; transportUrl: string }>;
    expect(Object.keys(seen)).toEqual([...TRANSPORT_NAMES]);
    for (const [name, entry] of Object.entries(seen)) {
      expect(entry.kind).toBe(name);
      expect(entry.url).toBe(entry.transportUrl);
    }
    for (const name of ['http', 'sse', 'ws', 'grpc'])
      expect(seen[name]!.url).toMatch(/^(http|ws|grpc):\/\/127\.0\.0\.1:[1-9]\d*$/);
    expect(seen.memory!.url).toBe('runtime://memory-agent');
  });

  it('a name whose package is not installed is a ValueError naming the package to add', async () => {
    // In a child process: jest's own resolver would find the workspace's packages from anywhere.
    const empty = mkdtempSync(join(tmpdir(), 'agent-empty-'));
    const program = `
      const { loadTransport } = require(${JSON.stringify(join(runtimeDist, '..', 'load-transport.js'))});
      const { ValueError } = require('@agent/core');
      try {
        loadTransport('grpc', { url: 'grpc://127.0.0.1:0' }, [${JSON.stringify(join(empty, 'main.js'))}]);
      } catch (error) {
        console.log(JSON.stringify({ valueError: error instanceof ValueError, message: error.message, data: error.data }));
      }`;
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['-e', program], {
        cwd: resolve(runtimeDist, '..', '..'),
        env: userEnv,
      });
      const error = JSON.parse(stdout) as { valueError: boolean; message: string; data: unknown };
      expect(error.valueError).toBe(true);
      expect(error.message).toBe(
        `transport: 'grpc' needs the @agent/transport-grpc package, which is not installed where this program runs (looked from ${empty}): add it to your project, e.g. pnpm add @agent/transport-grpc`,
      );
      expect(error.data).toEqual({ transport: 'grpc', package: '@agent/transport-grpc' });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('a package that is there but fails to load says so, with the cause', () => {
    const broken = projectWith('@agent/transport-ws', "throw new Error('ws is missing');");
    try {
      expect(() => loadTransport('ws', { url: 'ws://127.0.0.1:0' }, [broken.main])).toThrow(
        "transport: 'ws' found @agent/transport-ws but could not load it: ws is missing",
      );
    } finally {
      broken.cleanup();
    }
    const empty = projectWith('@agent/transport-sse', 'module.exports = {};');
    try {
      expect(() => loadTransport('sse', { url: 'http://127.0.0.1:0' }, [empty.main])).toThrow(
        '@agent/transport-sse does not export SSETransport',
      );
    } finally {
      empty.cleanup();
    }
  });

  it('hands card.url, the authenticator and the credentials to the transport (no URL to memory)', () => {
    const source = (className: string): string =>
      `exports.${className} = class { constructor(options) { this.options = options; } };`;
    const http = projectWith('@agent/transport-http', source('HTTPTransport'));
    const memory = projectWith('@agent/transport-memory', source('RuntimeTransport'));
    try {
      const authenticator = new APIKeyAuth({ validKeys: { k: [] } });
      const built = loadTransport('http', { url: 'http://127.0.0.1:0', authenticator, credentials: 'k' }, [
        http.main,
      ]) as unknown as { options: unknown };
      expect(built.options).toEqual({ url: 'http://127.0.0.1:0', authenticator, credentials: 'k' });
      const inProcess = loadTransport('memory', { url: 'http://ignored' }, [memory.main]) as unknown as {
        options: unknown;
      };
      expect(inProcess.options).toEqual({});
    } finally {
      http.cleanup();
      memory.cleanup();
    }
  });

  it('a network transport needs card.url; an unknown name or a non-transport is a ValueError', () => {
    expect(() => new Agent({ card: { name: 'x' }, transport: 'grpc' })).toThrow(
      "transport: 'grpc' needs card.url (the address to serve, e.g. grpc://127.0.0.1:50051)",
    );
    expect(() => new Agent({ card: { name: 'x' }, transport: 'tcp' as never })).toThrow(
      "transport must be a Transport or one of 'http', 'sse', 'ws', 'grpc', 'memory'; got 'tcp'",
    );
    expect(() => new Agent({ card: { name: 'x' }, transport: {} as never })).toThrow(ValueError);
  });
});
