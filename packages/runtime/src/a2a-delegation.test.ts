/**
 * An Agent delegating to an A2A agent through `outbound: new A2ATransport()`: outside a run
 * (`sendMessageTo`) and inside one (`run.sendTaskTo`, an `agent.call` action), over real sockets.
 */
import { APIKeyAuth } from '@agent/auth';
import { createMessage, createTask, handlerFromFunction, messageText, type Task } from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';
import { A2AServer, A2ATransport } from '@agent/a2a';
import { Agent } from './agent.js';

const KEY = 'sk-delegate-0001';

describe('Agent delegation over A2A', () => {
  let server: HTTPTransport;
  let a2a: A2AServer;
  const seen: Task[] = [];

  beforeAll(async () => {
    a2a = new A2AServer();
    server = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }),
      routes: [a2a],
    });
    server.bind(
      handlerFromFunction(
        async (task) => {
          seen.push(task);
          const reply = createMessage(`translated: ${messageText(task)}`, { role: 'agent' });
          return { ...task, state: 'completed', messages: [...task.messages, reply] };
        },
        { card: { name: 'translator', description: 'Translates', url: '' } },
      ),
    );
    await server.start();
  });

  afterAll(async () => {
    await a2a.close();
    await server.stop();
  });

  function caller(): Agent {
    const credentials = new APIKeyAuth({ validKeys: { [KEY]: [] } });
    return new Agent({
      card: { name: 'caller' },
      outbound: new A2ATransport({ authenticator: credentials, credentials: KEY }),
      execute: async (task, run) => {
        const child = await run.sendTaskTo(server.url, createTask(createMessage(messageText(task))));
        await run.addMessage(createMessage(`via a2a: ${messageText(child)}`, { role: 'agent' }));
      },
    });
  }

  it('sendMessageTo answers the A2A agent reply', async () => {
    const agent = caller();
    try {
      const reply = await agent.sendMessageTo(server.url, 'bonjour');
      expect(messageText(reply)).toBe('translated: bonjour');
    } finally {
      await agent.stop();
    }
  });

  it('run.sendTaskTo delegates inside a run, with the child context carried along', async () => {
    const agent = caller();
    try {
      const parent = createTask(createMessage('hola'));
      parent.metadata.session_id = 'conversation-7';
      const done = await agent.handleTask(parent);
      expect(done.state).toBe('completed');
      expect(messageText(done)).toBe('via a2a: translated: hola');
      // The child context keeps the parent's session, which the A2A agent gets as its contextId.
      expect((done.metadata.run_context as { session_id: string }).session_id).toBe('conversation-7');
      expect(seen.at(-1)!.metadata.session_id).toBe('conversation-7');
    } finally {
      await agent.stop();
    }
  });
});
