/**
 * The configured run store is the one the task API reads: every transport records its tasks there,
 * within the configured bounds, and a SQLite file keeps them across a restart. The demo agent's
 * `count` command shows whether a resubmitted id ran again.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  AgentError,
  CLIENT_OPERATIONS,
  createTask,
  messageText,
  type Task,
  type TaskList,
  type Transport,
} from '@agent/core';
import { GRPCTransport } from '@agent/transport-grpc';
import { HTTPTransport } from '@agent/transport-http';
import { type ServerConfig } from './config.js';
import { TEST_CONFIG } from './test-support/test-config.js';
import { startReferenceServer, type ReferenceServer } from './server.js';

jest.setTimeout(60_000);

function configWith(overrides: Partial<ServerConfig>): ServerConfig {
  return { ...TEST_CONFIG, ...overrides };
}

/** One HTTP and one gRPC client of a started server, stopped with it. */
async function serve(config: ServerConfig, run: (s: Clients) => Promise<void>): Promise<void> {
  const server = await startReferenceServer(config);
  const http = new HTTPTransport({ url: server.urls.http });
  const grpc = new GRPCTransport({ url: server.urls.grpc });
  try {
    await run({ server, http, grpc });
  } finally {
    await Promise.all([http.stop(), grpc.stop()]);
    await server.stop();
  }
}

interface Clients {
  server: ReferenceServer;
  http: Transport;
  grpc: Transport;
}

function send(client: Transport, url: string, task: Task): Promise<Task> {
  return client.send<Task>(CLIENT_OPERATIONS.send_task, url, task);
}

function getTask(client: Transport, url: string, taskId: string): Promise<Task> {
  return client.send<Task>(CLIENT_OPERATIONS.get_task, url, { task_id: taskId });
}

function reply(task: Task): string {
  return messageText([...task.messages].reverse().find((m) => m.role === 'agent'));
}

async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (error instanceof AgentError) return error.code;
    throw error;
  }
  throw new Error('expected the call to fail');
}

it('records tasks from every transport in the configured store, within its maxTasks', async () => {
  await serve(configWith({ runStoreLimits: { maxTasks: 2 } }), async ({ server, http, grpc }) => {
    const tasks = [createTask('echo one'), createTask('echo two'), createTask('echo three')];
    for (const task of tasks) {
      await send(http, server.urls.http, task);
      // Newest first is by update time: tasks saved within one millisecond tie.
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    expect(await getTask(grpc, server.urls.grpc, tasks[2]!.id)).toMatchObject({ state: 'completed' });
    expect(await codeOf(getTask(grpc, server.urls.grpc, tasks[0]!.id))).toBe('TASK_NOT_FOUND');
    const listed = await grpc.send<TaskList>(CLIENT_OPERATIONS.list_tasks, server.urls.grpc, {});
    expect(listed.tasks.map((task) => task.id)).toEqual([tasks[2]!.id, tasks[1]!.id]);
  });
});

it('answers a resubmitted count task from the store without counting again', async () => {
  await serve(configWith({}), async ({ server, http, grpc }) => {
    const task = createTask('count resubmitted');
    const first = await send(http, server.urls.http, task);
    expect(reply(first)).toBe('1');
    expect(await send(grpc, server.urls.grpc, task)).toEqual(first);
    expect(reply(await send(http, server.urls.http, createTask('count resubmitted')))).toBe('2');
    expect(reply(await send(http, server.urls.http, createTask('count another')))).toBe('1');
    const bad = await send(http, server.urls.http, createTask('count'));
    expect(bad).toMatchObject({ state: 'failed', metadata: { error: { code: 'VALUE_ERROR' } } });
  });
});

it('keeps tasks in a SQLite file across a restart, and answers their resubmission from it', async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'reference-tasks-')), 'tasks.db');
  const config = configWith({ runStore: `sqlite:${file}` });
  const task = createTask('count restarted');
  let first: Task | undefined;
  await serve(config, async ({ server, http }) => {
    first = await send(http, server.urls.http, task);
    expect(reply(first)).toBe('1');
  });
  await serve(config, async ({ server, http, grpc }) => {
    expect(await getTask(grpc, server.urls.grpc, task.id)).toEqual(first);
    expect(await send(http, server.urls.http, task)).toEqual(first);
    // The counters live in memory: a run after the restart starts again at 1.
    expect(reply(await send(http, server.urls.http, createTask('count restarted')))).toBe('1');
  });
});
