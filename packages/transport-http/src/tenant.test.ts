import { CLIENT_OPERATIONS, TaskNotFoundError, ValueError, createTask, type CallContext } from '@agent/core';
import { createTestAgent, type TestAgent } from '@agent/test-support';
import { HTTPTransport } from './http-transport.js';
import type { HTTPTransportOptions } from './options.js';

const TENANT = 'acme.eu:team_1-a';

describe('HTTPTransport tenant', () => {
  let server: HTTPTransport;
  let agent: TestAgent;
  const clients: HTTPTransport[] = [];

  function client(options: Partial<HTTPTransportOptions> = {}): HTTPTransport {
    const transport = new HTTPTransport({ url: server.url, ...options });
    clients.push(transport);
    return transport;
  }

  /** Every operation once, unary and streaming, so each context below is one call's. */
  async function everyOperation(transport: HTTPTransport): Promise<CallContext[]> {
    await transport.send(CLIENT_OPERATIONS.send_task, server.url, createTask('ping'));
    await transport.send(CLIENT_OPERATIONS.get_card, server.url);
    await expect(
      transport.send(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: 'no-such-task' }),
    ).rejects.toBeInstanceOf(TaskNotFoundError);
    for await (const event of transport.subscribe(server.url, createTask('stream 2'))) void event;
    return agent.contexts;
  }

  beforeEach(async () => {
    agent = createTestAgent({ announceWorking: false });
    server = new HTTPTransport({ url: 'http://127.0.0.1:0' });
    server.bind(agent);
    await server.start();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.stop()));
    await server.stop();
  });

  it('sends the X-Tenant header with every call, unary and streaming', async () => {
    const contexts = await everyOperation(client({ tenant: TENANT }));
    expect(contexts).toHaveLength(4);
    for (const ctx of contexts) {
      expect(ctx.headers['x-tenant']).toBe(TENANT);
      expect(ctx.tenant).toBe(TENANT);
    }
  });

  it('sends no X-Tenant header for the default tenant', async () => {
    const transport = client();
    expect(transport.tenant).toBe('');
    const contexts = await everyOperation(transport);
    expect(contexts).toHaveLength(4);
    for (const ctx of contexts) {
      expect(ctx.headers['x-tenant']).toBeUndefined();
      expect(ctx.tenant).toBe('');
    }
  });

  it('refuses a tenant that is not at most 128 characters of [A-Za-z0-9._:-] at construction', () => {
    for (const tenant of ['x'.repeat(129), 'a b', 'tenant/1', 'ünï', 'a\nb', 42, null]) {
      expect(() => client({ tenant } as unknown as HTTPTransportOptions)).toThrow(ValueError);
    }
    expect(client({ tenant: 'x'.repeat(128) }).tenant).toBe('x'.repeat(128));
    expect(client({ tenant: '' }).tenant).toBe('');
  });

  it('describe() keeps the tenant, so a rebuilt client names the same one', () => {
    const descriptor = structuredClone(client({ tenant: TENANT }).describe());
    expect(descriptor.$component.options).toMatchObject({ tenant: TENANT });
    const rebuilt = client(descriptor.$component.options as unknown as HTTPTransportOptions);
    expect(rebuilt.tenant).toBe(TENANT);
    expect(client().describe().$component.options).not.toHaveProperty('tenant');
  });
});
