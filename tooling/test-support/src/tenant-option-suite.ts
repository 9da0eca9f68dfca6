/**
 * The client-side `tenant` option of a transport whose wire carries it as `x-tenant` (the HTTP
 * header, or gRPC metadata, which the handler sees among its headers):
 * sent with every call, unary and streaming; absent for the default tenant; checked at construction;
 * kept by `describe()`. Runs under jest against a real server on 127.0.0.1 port 0.
 */
import { CLIENT_OPERATIONS, ValueError, createTask, type CallContext } from '@agent/core';
import type { Transport } from '@agent/core';
import { createTestAgent, type TestAgent } from './test-agent.js';

/** A transport with the members the suite reads: its URL and its client-side tenant. */
export type TenantTransport = Transport & { readonly url: string; readonly tenant: string };

export interface TenantOptionHarness {
  /** A server on 127.0.0.1 port 0 (not started). */
  server(): TenantTransport;
  /** A client of `url` built with `options` merged in (the suite passes malformed values on purpose). */
  client(url: string, options: Record<string, unknown>): TenantTransport;
}

const TENANT = 'acme.eu:team_1-a';

export function describeTenantOption(name: string, harness: TenantOptionHarness): void {
  describe(`${name} tenant`, () => {
    let server: TenantTransport;
    let agent: TestAgent;
    const clients: TenantTransport[] = [];

    function client(options: Record<string, unknown> = {}): TenantTransport {
      const transport = harness.client(server.url, options);
      clients.push(transport);
      return transport;
    }

    /** Every operation once, unary and streaming, so each context below is one call's. */
    async function everyOperation(transport: TenantTransport): Promise<CallContext[]> {
      await transport.send(CLIENT_OPERATIONS.send_task, server.url, createTask('ping'));
      await transport.send(CLIENT_OPERATIONS.get_card, server.url);
      // A cancel reaches the handler only for a running task of the caller's own.
      const held = createTask('hold');
      const answer = transport.send(CLIENT_OPERATIONS.send_task, server.url, held);
      await agent.whenRunning(held.id);
      await transport.send(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: held.id });
      await answer;
      for await (const event of transport.subscribe(server.url, createTask('stream 2'))) void event;
      return agent.contexts;
    }

    beforeEach(async () => {
      agent = createTestAgent({ announceWorking: false });
      server = harness.server();
      server.bind(agent);
      await server.start();
    });

    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.stop()));
      await server.stop();
    });

    it('sends x-tenant with every call, unary and streaming', async () => {
      const contexts = await everyOperation(client({ tenant: TENANT }));
      expect(contexts).toHaveLength(5);
      for (const ctx of contexts) {
        expect(ctx.headers['x-tenant']).toBe(TENANT);
        expect(ctx.tenant).toBe(TENANT);
      }
    });

    it('sends no x-tenant for the default tenant', async () => {
      const transport = client();
      expect(transport.tenant).toBe('');
      const contexts = await everyOperation(transport);
      expect(contexts).toHaveLength(5);
      for (const ctx of contexts) {
        expect(ctx.headers['x-tenant']).toBeUndefined();
        expect(ctx.tenant).toBe('');
      }
    });

    it('refuses a tenant that is not at most 128 characters of [A-Za-z0-9._:-] at construction', () => {
      for (const tenant of ['x'.repeat(129), 'a b', 'tenant/1', 'ünï', 'a\nb', 42, null]) {
        expect(() => client({ tenant })).toThrow(ValueError);
      }
      expect(client({ tenant: 'x'.repeat(128) }).tenant).toBe('x'.repeat(128));
      expect(client({ tenant: '' }).tenant).toBe('');
    });

    it('describe() keeps the tenant, so a rebuilt client names the same one', () => {
      const descriptor = structuredClone(client({ tenant: TENANT }).describe!());
      expect(descriptor.$component.options).toMatchObject({ tenant: TENANT });
      const rebuilt = client(descriptor.$component.options);
      expect(rebuilt.tenant).toBe(TENANT);
      expect(client().describe!().$component.options).not.toHaveProperty('tenant');
    });
  });
}
