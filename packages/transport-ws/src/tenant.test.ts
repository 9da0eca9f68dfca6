import type { IncomingMessage } from 'node:http';
import { CLIENT_OPERATIONS, ValueError, type CallContext } from '@agent/core';
import type { TestAgent } from '@agent/test-support';
import { APIKeyAuth } from '@agent/auth';
import WebSocket from 'ws';
import type { WebSocketTransportOptions } from './options.js';
import { client, closeAll, collect, rawSocket, serve, task } from './test-support/harness.js';
import type { WebSocketTransport } from './websocket-transport.js';

afterEach(closeAll);

const TENANT = 'acme.eu:team_1-a';
const KEY = 'tenant-test-key-0123456789';

/**
 * Every operation once, unary and streaming, each reaching the handler: the cancel (on the control
 * connection) stops a running task of the caller, since an id it does not own is answered before
 * the handler.
 */
async function everyOperation(transport: WebSocketTransport, url: string, handler: TestAgent): Promise<void> {
  await transport.send(CLIENT_OPERATIONS.send_task, url, task('echo hi'));
  await transport.send(CLIENT_OPERATIONS.get_card, url);
  const held = task('hold');
  const events = collect(transport.subscribe(url, held));
  await handler.whenRunning(held.id);
  await transport.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: held.id });
  await expect(events).resolves.toContainEqual(expect.objectContaining({ final: true, state: 'canceled' }));
}

/** The HTTP status of a handshake the server refuses. */
function refusedStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on('error', () => undefined);
    socket.once('open', () => {
      socket.terminate();
      reject(new Error('the handshake was accepted'));
    });
    socket.once('unexpected-response', (_req, res: IncomingMessage) => {
      res.resume();
      res.on('end', () => {
        socket.terminate();
        resolve(res.statusCode ?? 0);
      });
    });
  });
}

/** Runs a card and a task on one raw socket, as a browser would (frames after one handshake). */
async function twoCallsOnRawSocket(url: string, headers: Record<string, string> = {}): Promise<void> {
  const raw = await rawSocket(url, { headers });
  raw.send({ op: 'agent.card', id: 'card' });
  raw.send({ op: 'task.send', id: 'send', task: task('echo hi') });
  await raw.next((frame) => frame.id === 'card' && frame.op === 'result');
  await raw.next((frame) => frame.id === 'send' && frame.op === 'result');
}

describe('WebSocketTransport tenant', () => {
  it('sends X-Tenant in the handshake of the data and the control connection: every call carries it', async () => {
    const { server, handler } = await serve();
    await everyOperation(client({ tenant: TENANT }), server.url, handler);
    expect(handler.contexts).toHaveLength(4);
    for (const ctx of handler.contexts) {
      expect(ctx.headers['x-tenant']).toBe(TENANT);
      expect(ctx.tenant).toBe(TENANT);
    }
  });

  it('sends no X-Tenant header for the default tenant', async () => {
    const { server, handler } = await serve();
    const transport = client();
    expect(transport.tenant).toBe('');
    await everyOperation(transport, server.url, handler);
    expect(handler.contexts).toHaveLength(4);
    for (const ctx of handler.contexts) {
      expect(ctx.headers['x-tenant']).toBeUndefined();
      expect(ctx.tenant).toBe('');
    }
  });

  it('takes the tenant from the handshake query `tenant` (browsers cannot set headers), for every frame', async () => {
    const { server, handler } = await serve();
    await twoCallsOnRawSocket(`${server.url}/?tenant=${TENANT}`);
    expect(handler.contexts.map((ctx: CallContext) => ctx.tenant)).toEqual([TENANT, TENANT]);
  });

  it('prefers the X-Tenant header over the query', async () => {
    const { server, handler } = await serve();
    await twoCallsOnRawSocket(`${server.url}/?tenant=other`, { 'x-tenant': TENANT });
    expect(handler.contexts.map((ctx: CallContext) => ctx.tenant)).toEqual([TENANT, TENANT]);
  });

  it('refuses a handshake with more than one tenant query, or a malformed one, with 400', async () => {
    const { server, handler } = await serve();
    expect(await refusedStatus(`${server.url}/?tenant=a&tenant=b`)).toBe(400);
    expect(await refusedStatus(`${server.url}/?tenant=${encodeURIComponent('a b')}`)).toBe(400);
    expect(await refusedStatus(`${server.url}/control?tenant=${'x'.repeat(129)}`)).toBe(400);
    expect(handler.contexts).toHaveLength(0);
  });

  it('authenticates before it looks at the tenant query: no credential, 401 whatever the tenant', async () => {
    const { server } = await serve({ authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }) });
    expect(await refusedStatus(`${server.url}/?tenant=a&tenant=b`)).toBe(401);
    expect(await refusedStatus(`${server.url}/?tenant=a&tenant=b&api_key=${KEY}`)).toBe(400);
  });

  it('refuses a tenant that is not at most 128 characters of [A-Za-z0-9._:-] at construction', () => {
    for (const tenant of ['x'.repeat(129), 'a b', 'tenant/1', 'ünï', 'a\nb', 42, null]) {
      expect(() => client({ tenant } as unknown as WebSocketTransportOptions)).toThrow(ValueError);
    }
    expect(client({ tenant: 'x'.repeat(128) }).tenant).toBe('x'.repeat(128));
  });

  it('describe() keeps the tenant, so a rebuilt client names the same one', () => {
    const descriptor = structuredClone(client({ tenant: TENANT }).describe());
    expect(descriptor.$component.options).toMatchObject({ tenant: TENANT });
    const rebuilt = client(descriptor.$component.options as unknown as WebSocketTransportOptions);
    expect(rebuilt.tenant).toBe(TENANT);
    expect(client().describe().$component.options).not.toHaveProperty('tenant');
  });
});
