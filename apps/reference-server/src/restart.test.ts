/**
 * A SQLite run store outlives its process: after a kill -9, the next process on the same file
 * finishes what the dead one left running (`failed`, PROCESS_RESTARTED: one task.error, one final
 * status) before it serves, so nothing stays `working` forever and a cancel answers as for any
 * finished task.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTask, type Task } from '@agent/core';
import { startServerProcess } from './test-support/server-process.js';

jest.setTimeout(60_000);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'reference-restart-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function call<T>(base: string, route: string, body?: unknown): Promise<{ status: number; json: T }> {
  const response = await fetch(`${base}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as T };
}

it('finishes the tasks a killed process left running, PROCESS_RESTARTED, and keeps the finished ones', async () => {
  const env = { AGENT_RUN_STORE: `sqlite:${path.join(dir, 'tasks.db')}` };
  const first = await startServerProcess(env);
  const done = await call<Task>(first.urls.http, '/tasks/', createTask('echo kept', { id: 'kept' }));
  expect(done.json.state).toBe('completed');
  const running = createTask('sleep 600000', { id: 'interrupted' });
  void call(first.urls.http, '/tasks/', running).catch(() => undefined);
  for (;;) {
    const { json } = await call<Task>(first.urls.http, '/tasks/interrupted');
    if (json.state === 'working') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await first.stop('SIGKILL');

  const second = await startServerProcess(env);
  try {
    const ended = await call<Task>(second.urls.http, '/tasks/interrupted');
    expect(ended.json.state).toBe('failed');
    expect(ended.json.metadata.error).toMatchObject({ code: 'PROCESS_RESTARTED' });
    const canceled = await call<{ error: { code: string } }>(second.urls.http, '/tasks/cancel', {
      task_id: 'interrupted',
    });
    expect(canceled).toMatchObject({ status: 409, json: { error: { code: 'TASK_NOT_CANCELABLE' } } });
    expect((await call<Task>(second.urls.http, '/tasks/kept')).json).toEqual(done.json);
  } finally {
    await second.stop();
  }
});
