/**
 * A2A agents in the registry: an A2A 1.0 card is registered as it is (checked by the A2A card
 * schema), found by skill like any card, and `clientFor` reaches the agent over A2A.
 */
import { createMessage, createTask, handlerFromFunction, type Task } from '@agent/core';
import { A2AServer } from '@agent/a2a';
import { HTTPTransport } from '@agent/transport-http';
import { clientFor } from './client-for.js';
import { ALICE_KEY, BOB_KEY, serveRegistry, type RegistryServer } from './test-support/registry-server.js';

function reply(task: Task): Task {
  const text = String(task.messages.at(-1)?.parts[0]?.content);
  return {
    ...task,
    state: 'completed',
    messages: [...task.messages, createMessage(`a2a says ${text}`, { role: 'agent' })],
  };
}

describe('A2A cards in the registry', () => {
  let registry: RegistryServer;
  let agent: HTTPTransport;
  let a2aCard: Record<string, unknown>;

  beforeAll(async () => {
    registry = await serveRegistry();
    agent = new HTTPTransport({ url: 'http://127.0.0.1:0', routes: [new A2AServer()] });
    agent.bind(
      handlerFromFunction(async (task) => reply(task), {
        card: { name: 'translator', description: 'Translates', url: '' },
      }),
    );
    await agent.start();
    const response = await fetch(`${agent.url}/.well-known/agent-card.json`);
    a2aCard = (await response.json()) as Record<string, unknown>;
    a2aCard.skills = [{ id: 'translate', name: 'Translate', description: 'Translates', tags: ['fr'] }];
  });

  afterAll(async () => {
    await agent.stop();
    await registry.stop();
  });

  it('registers an A2A card as it is and finds it by skill and tag', async () => {
    const entry = await registry.client(ALICE_KEY).register(a2aCard as never);
    expect(entry.card).toEqual(a2aCard);
    const bySkill = await registry.client(BOB_KEY).list({ skill: 'translate' });
    expect(bySkill.agents.map((found) => found.name)).toEqual([a2aCard.name]);
    const byTag = await registry.client(BOB_KEY).list({ skill: 'fr' });
    expect(byTag.agents).toHaveLength(1);
  });

  it('refuses a malformed A2A card with the pointers of what is wrong', async () => {
    const broken = {
      ...a2aCard,
      name: 'broken',
      securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
      supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC' }],
    };
    const response = await registry.raw('/registry/agents', { key: ALICE_KEY, body: broken });
    expect(response.status).toBe(422);
    const error = (response.json as { error: { code: string; data: { errors: { pointer: string }[] } } })
      .error;
    expect(error.code).toBe('VALIDATION_FAILED');
    const pointers = error.data.errors.map((issue) => issue.pointer);
    expect(pointers).toEqual(
      expect.arrayContaining(['/securitySchemes/key', '/supportedInterfaces/0/protocolVersion']),
    );
  });

  it('sends a task to the found agent over A2A through clientFor', async () => {
    const [entry] = (await registry.client(BOB_KEY).list({ skill: 'translate' })).agents;
    const client = clientFor(entry!);
    try {
      const done = await client.sendTask(createTask(createMessage('bonjour')));
      expect(done.state).toBe('completed');
      expect(done.messages.at(-1)?.parts[0]?.content).toBe('a2a says bonjour');
      // The server minted the id: the answer is the agent's task, readable through the same client.
      const again = await client.getTask(done.id);
      expect(again.id).toBe(done.id);
    } finally {
      await client.close();
    }
  });
});
