/**
 * `client.sync`: the client's operations as blocking calls, for plain synchronous code (a CLI step,
 * a callback that cannot be async). The calling thread sleeps until the answer is there, so the
 * agent must live elsewhere: this example starts it in a child process (this same file, run with
 * `serve`) and calls it over HTTP with an API key.
 *
 * Run it: pnpm --filter @agent/examples run example sync-client
 */
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { APIKeyAuth } from '@agent/auth';
import { AgentClient } from '@agent/client';
import { createMessage, createTask, messageText, TaskNotFoundError, type Task } from '@agent/core';
import { Agent } from '@agent/runtime';
import { HTTPTransport } from '@agent/transport-http';

const API_KEY = 'sk-example-sync';
const auth = new APIKeyAuth({ validKeys: { [API_KEY]: [] } });

/** Plain synchronous code: no `async`, no `await`, no callbacks. */
function summarize(client: AgentClient): string {
  const card = client.sync.getAgentCard();
  const reply = client.sync.sendMessage('what time is it?');
  const task: Task = client.sync.sendTask(createTask('count the words in this sentence'));
  const events = client.sync.streamTask(createTask('stream me')); // the whole list, once the stream ended
  let unknownCancel = 'no error';
  try {
    client.sync.cancelTask('no-such-task');
  } catch (error) {
    // Sync calls throw the same typed errors as the async ones.
    if (error instanceof TaskNotFoundError) unknownCancel = `${error.code}`;
  }
  return [
    `card: ${card.name}`,
    `reply: ${messageText(reply)}`,
    `task: ${task.state} - ${messageText(task.messages.at(-1))}`,
    `stream: ${events.length} events, last ${events.at(-1)?.type}`,
    `cancel of an unknown task: ${unknownCancel}`,
  ].join('\n');
}

async function serve(): Promise<void> {
  const agent = new Agent({
    card: { name: 'word-counter' },
    execute: async (task, run) => {
      const words = messageText(task.messages.at(-1)).split(/\s+/).filter(Boolean).length;
      await run.addMessage(createMessage(`${words} words`, { role: 'agent' }));
    },
  });
  const server = new HTTPTransport({ url: 'http://127.0.0.1:0', authenticator: auth });
  server.bind(agent);
  await server.start();
  console.log(server.url); // the parent reads the real address from this line
  await once(process, 'SIGTERM');
  await server.stop();
}

async function startServerProcess(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [__filename, 'serve'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the server process exited (${code}) before it listened`)));
  });
  return { url, child };
}

async function main(): Promise<void> {
  const { url, child } = await startServerProcess();
  // client.sync rebuilds this transport in a worker thread from transport.describe(), the
  // authenticator and the credential included.
  const client = new AgentClient({
    transport: new HTTPTransport({ url, authenticator: auth, credentials: API_KEY }),
    baseUrl: url,
  });
  try {
    const summary = summarize(client);
    console.log(summary);
    assert.match(summary, /task: completed - 6 words/);
    assert.match(summary, /cancel of an unknown task: TASK_NOT_FOUND/);
  } finally {
    await client.close(); // ends the sync worker
    await client.transport.stop();
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

(process.argv[2] === 'serve' ? serve() : main()).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
