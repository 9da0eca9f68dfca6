/** The real process: listening line, graceful SIGTERM with a task in flight, config errors. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { createTask, isFinalEvent, type TaskEvent } from '@agent/core';
import { SSETransport } from '@agent/transport-sse';

jest.setTimeout(60_000);

const MAIN = path.resolve(__dirname, '../dist/main.js');
const BASE_ENV = {
  PATH: process.env.PATH ?? '',
  HTTP_PORT: '0',
  SSE_PORT: '0',
  WS_PORT: '0',
  GRPC_PORT: '0',
};

function start(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...BASE_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const reader = createInterface({ input: child.stdout! });
  const waiters: Array<() => void> = [];
  reader.on('line', (line) => {
    lines.push(line);
    waiters.splice(0).forEach((w) => w());
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const nextRecord = async (event: string): Promise<Record<string, string>> => {
    for (;;) {
      const found = lines.map((l) => JSON.parse(l) as Record<string, string>).find((r) => r.event === event);
      if (found) return found;
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${stderr}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return {
    child,
    nextRecord,
    stderr: () => stderr,
    exit: once(child, 'exit') as Promise<[number | null, string | null]>,
  };
}

it('prints one listening line, serves, and exits 0 on SIGTERM after canceling in-flight work', async () => {
  const server = start();
  const listening = await server.nextRecord('listening');
  expect(Object.keys(listening).sort()).toEqual(['auth', 'backend', 'event', 'grpc', 'http', 'sse', 'ws']);
  expect(listening.http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(listening.ws).toMatch(/^ws:\/\//);

  const health = await fetch(`${listening.http}/healthz`);
  expect(await health.json()).toEqual({ status: 'ok' });

  // A streamed sleep: once its first progress event arrives the task is surely registered.
  const sse = new SSETransport({ url: listening.sse });
  const events: TaskEvent[] = [];
  const iterator = sse.subscribe(listening.sse, createTask('sleep 30000'))[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    expect(next.done).toBe(false);
    events.push(next.value as TaskEvent);
    if ((next.value as TaskEvent).type === 'task.progress') break;
  }
  server.child.kill('SIGTERM');
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    events.push(next.value);
  }
  await sse.stop();
  const finals = events.filter(isFinalEvent);
  expect(finals).toHaveLength(1);
  expect(finals[0]!.state).toBe('canceled');
  expect(finals[0]!.task?.metadata.cancel_reason).toBe('server shutting down');
  const [code] = await server.exit;
  expect(code).toBe(0);
});

it('exits 1 with a JSON error line naming a bad setting', async () => {
  const server = start({ HTTP_PORT: 'eighty' });
  const [code] = await server.exit;
  expect(code).toBe(1);
  const line = JSON.parse(server.stderr().trim().split('\n').pop()!) as {
    event: string;
    code: string;
    message: string;
  };
  expect(line).toMatchObject({ event: 'error', code: 'VALUE_ERROR' });
  expect(line.message).toContain('HTTP_PORT');
});
