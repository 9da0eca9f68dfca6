import { CLIENT_OPERATIONS, TaskNotFoundError, ValueError, createTask } from '@agent/core';
import type { TestAgent } from '@agent/test-support';
import type { RuntimeTransportOptions } from './options.js';
import { RuntimeTransport } from './runtime-transport.js';
import { createEchoAgent } from './test-support/handlers.js';

const TENANT = 'acme.eu:team_1-a';

/**
 * Every operation once on `alpha`, unary and streaming: three reach the handler (a cancel of an id the
 * caller does not own is answered before it).
 */
async function everyOperation(transport: RuntimeTransport, agent: TestAgent): Promise<void> {
  await transport.send(CLIENT_OPERATIONS.send_task, 'alpha', createTask('ping'));
  await transport.send(CLIENT_OPERATIONS.get_card, 'alpha');
  await expect(
    transport.send(CLIENT_OPERATIONS.cancel_task, 'alpha', { task_id: 'no-such-task' }),
  ).rejects.toBeInstanceOf(TaskNotFoundError);
  for await (const event of transport.subscribe('runtime://alpha', createTask('two words'))) void event;
  expect(agent.contexts).toHaveLength(3);
}

describe('RuntimeTransport tenant', () => {
  let server: RuntimeTransport;
  let agent: TestAgent;

  beforeEach(async () => {
    server = new RuntimeTransport();
    agent = createEchoAgent('alpha');
    server.registerAgent(agent);
    await server.start();
  });

  afterEach(() => server.stop());

  it('hands every call the x-tenant header of its tenant option, unary and streaming', async () => {
    await everyOperation(server.client({ tenant: TENANT }), agent);
    for (const ctx of agent.contexts) {
      expect(ctx.headers['x-tenant']).toBe(TENANT);
      expect(ctx.tenant).toBe(TENANT);
    }
  });

  it('names the tenant of the transport that registered the agent when it calls itself', async () => {
    const own = new RuntimeTransport({ tenant: TENANT });
    const self = createEchoAgent('alpha');
    own.registerAgent(self);
    await own.start();
    try {
      await everyOperation(own, self);
      expect(self.contexts.map((ctx) => ctx.tenant)).toEqual([TENANT, TENANT, TENANT]);
    } finally {
      await own.stop();
    }
  });

  it('sends no x-tenant header for the default tenant, and a client view does not inherit the tenant', async () => {
    const view = new RuntimeTransport({ tenant: TENANT }).client();
    expect(view.tenant).toBe('');
    const plain = server.client();
    await everyOperation(plain, agent);
    for (const ctx of agent.contexts) {
      expect(ctx.headers['x-tenant']).toBeUndefined();
      expect(ctx.tenant).toBe('');
    }
  });

  it('refuses a tenant that is not at most 128 characters of [A-Za-z0-9._:-], in a view too', () => {
    for (const tenant of ['x'.repeat(129), 'a b', 'tenant/1', 'ünï', 'a\nb', 42, null]) {
      const options = { tenant } as unknown as RuntimeTransportOptions;
      expect(() => new RuntimeTransport(options)).toThrow(ValueError);
      expect(() => server.client(options)).toThrow(ValueError);
    }
    expect(server.client({ tenant: 'x'.repeat(128) }).tenant).toBe('x'.repeat(128));
  });
});
