import { CLIENT_OPERATIONS, TaskNotFoundError, ValueError, type CallContext } from '@agent/core';
import type { GRPCTransport } from './grpc-transport.js';
import type { GRPCTransportOptions } from './options.js';
import { Harness, apiKeyAuth, API_KEY, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

const TENANT = 'acme.eu:team_1-a';

/** Every operation once, unary (Invoke) and streaming (Stream), each reaching the handler. */
async function everyOperation(transport: GRPCTransport, url: string, contexts: CallContext[]): Promise<void> {
  await transport.send(CLIENT_OPERATIONS.send_task, url, task('echo hi'));
  await transport.send(CLIENT_OPERATIONS.get_card, url);
  await expect(
    transport.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: 'no-such-task' }),
  ).rejects.toBeInstanceOf(TaskNotFoundError);
  for await (const event of transport.subscribe(url, task('stream 2'))) void event;
  expect(contexts).toHaveLength(4);
}

describe('GRPCTransport tenant', () => {
  it('sends the x-tenant metadata with every call, unary and streaming', async () => {
    const { handler, url } = await harness.server();
    await everyOperation(harness.client({ tenant: TENANT }), url, handler.contexts);
    for (const ctx of handler.contexts) {
      expect(ctx.headers['x-tenant']).toBe(TENANT);
      expect(ctx.tenant).toBe(TENANT);
    }
  });

  it('sends x-tenant beside the credential metadata', async () => {
    const { handler, url } = await harness.server({ authenticator: apiKeyAuth() });
    const transport = harness.client({ authenticator: apiKeyAuth(), credentials: API_KEY, tenant: TENANT });
    await everyOperation(transport, url, handler.contexts);
    for (const ctx of handler.contexts) {
      expect(ctx.tenant).toBe(TENANT);
      expect(ctx.security?.principalId).toBeDefined();
    }
  });

  it('sends no x-tenant metadata for the default tenant', async () => {
    const { handler, url } = await harness.server();
    const transport = harness.client();
    expect(transport.tenant).toBe('');
    await everyOperation(transport, url, handler.contexts);
    for (const ctx of handler.contexts) {
      expect(ctx.headers['x-tenant']).toBeUndefined();
      expect(ctx.tenant).toBe('');
    }
  });

  it('refuses a tenant that is not at most 128 characters of [A-Za-z0-9._:-] at construction', () => {
    for (const tenant of ['x'.repeat(129), 'a b', 'tenant/1', 'ünï', 'a\nb', 42, null]) {
      expect(() => harness.client({ tenant } as unknown as GRPCTransportOptions)).toThrow(ValueError);
    }
    expect(harness.client({ tenant: 'x'.repeat(128) }).tenant).toBe('x'.repeat(128));
  });

  it('describe() keeps the tenant, so a rebuilt client names the same one', () => {
    const descriptor = structuredClone(harness.client({ tenant: TENANT }).describe());
    expect(descriptor.$component.options).toMatchObject({ tenant: TENANT });
    const rebuilt = harness.client(descriptor.$component.options as unknown as GRPCTransportOptions);
    expect(rebuilt.tenant).toBe(TENANT);
    expect(harness.client().describe().$component.options).not.toHaveProperty('tenant');
  });
});
