/** Task ownership over real HTTP: one API key's tasks are invisible to another key. */
import { AgentClient } from '@agent/client';
import { AgentError, createTask, newId } from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';
import { DEFAULT_CONFIG, type ServerConfig } from './config.js';
import { TEST_CONFIG } from './test-support/test-config.js';
import { createAuthenticator, startReferenceServer } from './server.js';

jest.setTimeout(60_000);

async function refusal(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AgentError) return error;
    throw error;
  }
  throw new Error('expected the call to be refused');
}

/** What a caller sees of a refusal, with the id it asked about blanked out. */
function seen(error: AgentError, taskId: string): unknown {
  return JSON.parse(JSON.stringify(error.toJSON()).split(taskId).join('<id>'));
}

it("one API key cannot cancel another key's running task, and learns no more than for an unknown id", async () => {
  // APIKeyAuth names a principal by the key's first 8 characters, so these two are two principals.
  const keyA = 'sk-alice-key';
  const keyB = 'sk-bob-key';
  const config: ServerConfig = {
    ...TEST_CONFIG,
    auth: { ...DEFAULT_CONFIG.auth, mode: 'apikey', apiKeys: [keyA, keyB] },
  };
  const server = await startReferenceServer(config);
  const transports: HTTPTransport[] = [];
  const client = (credentials: string): AgentClient => {
    const transport = new HTTPTransport({
      url: server.urls.http,
      credentials,
      authenticator: createAuthenticator(config)!,
    });
    transports.push(transport);
    return new AgentClient({ transport, baseUrl: server.urls.http });
  };
  try {
    const alice = client(keyA);
    const bob = client(keyB);
    const task = createTask('sleep 60000');
    const running = alice.sendTask(task);
    while (!server.agent.activeTaskIds.includes(task.id)) await new Promise((r) => setTimeout(r, 10));

    const unknownId = newId();
    const unknown = await refusal(bob.cancelTask(unknownId, 'probe'));
    expect(unknown.code).toBe('TASK_NOT_FOUND');
    const stranger = await refusal(bob.cancelTask(task.id, 'probe'));
    expect(seen(stranger, task.id)).toEqual(seen(unknown, unknownId));
    expect(server.agent.activeTaskIds).toEqual([task.id]);

    const canceled = await alice.cancelTask(task.id, 'alice stops it');
    expect(canceled).toMatchObject({ id: task.id, state: 'canceled' });
    const finished = await running;
    expect(finished).toMatchObject({ state: 'canceled', metadata: { cancel_reason: 'alice stops it' } });
  } finally {
    await Promise.all(transports.map((transport) => transport.stop()));
    await server.stop();
  }
});
