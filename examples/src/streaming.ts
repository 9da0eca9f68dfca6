/**
 * Streaming a task's events with `client.streamTask`, and the two ways to stop one:
 *   1. cancel the task (`client.cancelTask`): the agent stops, and the stream ends with its one
 *      final `task.status`, state `canceled`;
 *   2. stop reading (an `AbortSignal`): the client gets `TaskCanceledError`, but leaving a stream is
 *      not a cancel, so the task goes on running on the server until it is canceled.
 * The agent reports progress and sends its result in artifact chunks.
 *
 * Run it: pnpm --filter @agent/examples run example streaming
 */
import { strict as assert } from 'node:assert';
import { AgentClient } from '@agent/client';
import {
  createArtifact,
  createTask,
  messageText,
  TaskCanceledError,
  type Artifact,
  type TaskEvent,
} from '@agent/core';
import { Agent } from '@agent/runtime';
import { HTTPTransport } from '@agent/transport-http';

const agent = new Agent({
  card: { name: 'counter' },
  // `count <n>`: n artifact chunks, 50 ms apart, with progress along the way.
  execute: async (task, run) => {
    const n = Number(/count (\d+)/.exec(messageText(task.messages.at(-1)))?.[1] ?? 3);
    for (let i = 1; i <= n; i += 1) {
      await run.sleep(50); // rejects with TaskCanceledError once the task is canceled
      await run.progress(i / n, `chunk ${i} of ${n}`);
      await run.addArtifact(createArtifact(`${i} `, { name: 'numbers' }), {
        append: i > 1,
        lastChunk: i === n,
      });
    }
  },
});

function artifactText(artifact: Artifact): string {
  return artifact.parts.map((part) => (part.type === 'text' ? String(part.content) : '')).join('');
}

function describeEvent(event: TaskEvent): string {
  switch (event.type) {
    case 'task.status':
      return `status ${event.state}${event.final ? ' (final)' : ''}`;
    case 'task.progress':
      return `progress ${String(event.message)}`;
    case 'task.artifact':
      return `artifact ${artifactText(event.artifact)}`;
    default:
      return event.type;
  }
}

async function main(): Promise<void> {
  const server = new HTTPTransport({ url: 'http://127.0.0.1:0' });
  server.bind(agent);
  await server.start();
  const transport = new HTTPTransport({ url: server.url });
  const client = new AgentClient({ transport, baseUrl: server.url });
  try {
    console.log('-- a stream to its end');
    const events: TaskEvent[] = [];
    for await (const event of client.streamTask(createTask('count 3'))) {
      console.log(describeEvent(event));
      events.push(event);
    }
    assert.equal(describeEvent(events.at(-1)!), 'status completed (final)');

    console.log('-- canceling the task while it streams');
    const long = createTask('count 100');
    let last: TaskEvent | undefined;
    for await (const event of client.streamTask(long)) {
      last = event;
      if (event.type === 'task.artifact' && artifactText(event.artifact) === '2 ') {
        const canceled = await client.cancelTask(long.id, 'seen enough');
        console.log(`cancelTask answered: ${canceled.state}`);
      }
    }
    console.log(`the stream ended with: ${describeEvent(last!)}`);
    assert.equal(last?.type === 'task.status' && last.state, 'canceled');

    console.log('-- leaving a stream (abort): the task keeps running');
    const abandoned = createTask('count 100');
    const reading = new AbortController();
    try {
      for await (const event of client.streamTask(abandoned, { signal: reading.signal })) {
        if (event.type === 'task.artifact') reading.abort();
      }
    } catch (error) {
      if (!(error instanceof TaskCanceledError)) throw error;
      console.log(`the client stopped reading: ${error.code}`);
    }
    const canceled = await client.cancelTask(abandoned.id, 'nobody is reading');
    console.log(`the task was still running; cancelTask answered: ${canceled.state}`);
    assert.equal(canceled.state, 'canceled');
  } finally {
    await transport.stop();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
