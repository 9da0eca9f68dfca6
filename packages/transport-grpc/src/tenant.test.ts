import { CLIENT_OPERATIONS } from '@agent/core';
import { describeTenantOption, type TestAgent } from '@agent/test-support';
import { GRPCTransport } from './grpc-transport.js';
import type { GRPCTransportOptions } from './options.js';
import { Harness, apiKeyAuth, API_KEY, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

const TENANT = 'acme.eu:team_1-a';

/** Every operation once, unary (Invoke) and streaming (Stream), each reaching the handler. */
async function everyOperation(transport: GRPCTransport, url: string, handler: TestAgent): Promise<void> {
  await transport.send(CLIENT_OPERATIONS.send_task, url, task('echo hi'));
  await transport.send(CLIENT_OPERATIONS.get_card, url);
  // A cancel reaches the handler only for a running task of the caller's own.
  const held = task('hold');
  const answer = transport.send(CLIENT_OPERATIONS.send_task, url, held);
  await handler.whenRunning(held.id);
  await transport.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: held.id });
  await answer;
  for await (const event of transport.subscribe(url, task('stream 2'))) void event;
  expect(handler.contexts).toHaveLength(5);
}

describeTenantOption('GRPCTransport', {
  server: () => new GRPCTransport({ url: 'grpc://127.0.0.1:0' }),
  client: (url, options) => new GRPCTransport({ url, ...options } as GRPCTransportOptions),
});

describe('GRPCTransport tenant with credentials', () => {
  it('sends x-tenant beside the credential metadata', async () => {
    const { handler, url } = await harness.server({ authenticator: apiKeyAuth() });
    const transport = harness.client({ authenticator: apiKeyAuth(), credentials: API_KEY, tenant: TENANT });
    await everyOperation(transport, url, handler);
    for (const ctx of handler.contexts) {
      expect(ctx.tenant).toBe(TENANT);
      expect(ctx.security?.principalId).toBeDefined();
    }
  });
});
