import { CLIENT_OPERATIONS, TaskNotFoundError, type CallContext } from '@agent/core';
import { describeTenantOption } from '@agent/test-support';
import { GRPCTransport } from './grpc-transport.js';
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

describeTenantOption('GRPCTransport', {
  server: () => new GRPCTransport({ url: 'grpc://127.0.0.1:0' }),
  client: (url, options) => new GRPCTransport({ url, ...options } as GRPCTransportOptions),
});

describe('GRPCTransport tenant with credentials', () => {
  it('sends x-tenant beside the credential metadata', async () => {
    const { handler, url } = await harness.server({ authenticator: apiKeyAuth() });
    const transport = harness.client({ authenticator: apiKeyAuth(), credentials: API_KEY, tenant: TENANT });
    await everyOperation(transport, url, handler.contexts);
    for (const ctx of handler.contexts) {
      expect(ctx.tenant).toBe(TENANT);
      expect(ctx.security?.principalId).toBeDefined();
    }
  });
});
