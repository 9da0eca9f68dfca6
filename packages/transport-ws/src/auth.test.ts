import { APIKeyAuth, SecurityContext } from '@agent/auth';
import { type AgentError, CLIENT_OPERATIONS, UnauthenticatedError, type Task } from '@agent/core';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { client, closeAll, collect, rawSocket, serve, task } from './test-support/harness.js';

afterEach(closeAll);

const KEY = 'secret-key-0123456789';

function apiKeyAuth(): APIKeyAuth {
  return new APIKeyAuth({ validKeys: { [KEY]: ['tasks'] } });
}

/** Opens a raw socket expecting the handshake to be refused; resolves with the HTTP status and body. */
function refusedHandshake(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; opened: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on('error', () => undefined);
    socket.once('open', () => {
      socket.terminate();
      resolve({ status: 101, body: null, opened: true });
    });
    socket.once('unexpected-response', (_req, res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        socket.terminate();
        try {
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
            opened: false,
          });
        } catch (error) {
          reject(error as Error);
        }
      });
    });
  });
}

describe('handshake authentication', () => {
  it('accepts a client whose lazy credentials pass, and hands the security context to the handler', async () => {
    const { server, handler } = await serve({ authenticator: apiKeyAuth() });
    const transport = client({ authenticator: apiKeyAuth(), credentials: KEY });
    await expect(
      transport.send<Task>(CLIENT_OPERATIONS.send_task, server.url, task('echo hi')),
    ).resolves.toMatchObject({ state: 'completed' });
    const events = await collect(transport.subscribe(server.url, task('stream 2')));
    expect(events.at(-1)).toMatchObject({ type: 'task.status', final: true });
    expect(handler.contexts.map((ctx) => ctx.security?.principalId)).toEqual([
      'api-key-secret-k',
      'api-key-secret-k',
    ]);
  });

  it('refuses a client without credentials with UnauthenticatedError carrying 401, before any handler runs', async () => {
    const { server, handler } = await serve({ authenticator: apiKeyAuth() });
    const error = await client()
      .send(CLIENT_OPERATIONS.send_task, server.url, task('echo hi'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect((error as AgentError).httpStatus).toBe(401);
    await expect(collect(client().subscribe(server.url, task('stream 1')))).rejects.toThrow(
      UnauthenticatedError,
    );
    expect(handler.contexts).toHaveLength(0);
  });

  it('refuses a wrong credential on the control connection too', async () => {
    const { server, handler } = await serve({ authenticator: apiKeyAuth() });
    // The client-side authenticator accepts anything, so the wrong key reaches the server.
    const permissive = new (class extends APIKeyAuth {
      override async authenticate(credentials: string): Promise<SecurityContext> {
        return new SecurityContext({ principalId: 'me', token: credentials });
      }
    })({ validKeys: {} });
    const transport = client({ authenticator: permissive, credentials: 'wrong-key' });
    await expect(transport.send(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: 't' })).rejects.toThrow(
      UnauthenticatedError,
    );
    await expect(transport.send(CLIENT_OPERATIONS.get_card, server.url)).rejects.toThrow(
      UnauthenticatedError,
    );
    expect(handler.contexts).toHaveLength(0);
  });

  it('answers a failed upgrade with HTTP 401, a JSON error body and no socket (headers)', async () => {
    const { server } = await serve({ authenticator: apiKeyAuth() });
    const attempts: Array<Record<string, string>> = [
      {},
      { 'X-API-Key': 'nope' },
      { Authorization: 'Bearer nope' },
    ];
    for (const headers of attempts) {
      const result = await refusedHandshake(server.url, headers);
      expect(result).toEqual({
        status: 401,
        opened: false,
        body: { error: { code: 'UNAUTHENTICATED', message: expect.any(String) } },
      });
      expect(JSON.stringify(result.body)).not.toContain('nope');
    }
    expect(await refusedHandshake(`${server.url}/control`, { 'X-API-Key': 'nope' })).toMatchObject({
      status: 401,
      opened: false,
    });
  });

  it('reads query credentials (api_key, apikey, token) when headers carry none', async () => {
    const { server, handler } = await serve({ authenticator: apiKeyAuth() });
    for (const name of ['api_key', 'apikey', 'token']) {
      expect(await refusedHandshake(`${server.url}/?${name}=wrong`)).toMatchObject({
        status: 401,
        opened: false,
      });
      const raw = await rawSocket(`${server.url}/?${name}=${KEY}`);
      raw.send({ op: 'agent.card', id: name });
      expect(await raw.next((f) => f.id === name)).toMatchObject({ op: 'result', card: { name: 'demo' } });
    }
    expect(handler.contexts.map((ctx) => ctx.security?.principalId)).toEqual([
      'api-key-secret-k',
      'api-key-secret-k',
      'api-key-secret-k',
    ]);
  });

  it('authenticates lazily once and reuses the context across connections', async () => {
    const { server } = await serve({ authenticator: apiKeyAuth() });
    let calls = 0;
    const counting = new (class extends APIKeyAuth {
      override async authenticate(credentials: string): Promise<SecurityContext> {
        calls += 1;
        return super.authenticate(credentials);
      }
    })({ validKeys: { [KEY]: [] } });
    const transport = client({ authenticator: counting, credentials: KEY });
    expect(calls).toBe(0);
    await Promise.all([
      transport.send(CLIENT_OPERATIONS.get_card, server.url),
      transport.send(CLIENT_OPERATIONS.cancel_task, server.url, { task_id: 'x' }).catch(() => undefined),
      transport.send(CLIENT_OPERATIONS.get_card, server.url),
    ]);
    expect(calls).toBe(1);
  });

  it('reports a client-side authentication failure as UnauthenticatedError without connecting', async () => {
    const { server, handler } = await serve({ authenticator: apiKeyAuth() });
    const transport = client({ authenticator: apiKeyAuth(), credentials: 'not-a-key' });
    await expect(transport.send(CLIENT_OPERATIONS.get_card, server.url)).rejects.toThrow(
      UnauthenticatedError,
    );
    expect(handler.contexts).toHaveLength(0);
  });

  it('authenticate() sets the context used by later handshakes', async () => {
    const { server } = await serve({ authenticator: apiKeyAuth() });
    const transport = client({ authenticator: apiKeyAuth() });
    await expect(transport.send(CLIENT_OPERATIONS.get_card, server.url)).rejects.toThrow(
      UnauthenticatedError,
    );
    await expect(transport.authenticate('bad')).rejects.toThrow(UnauthenticatedError);
    const context = await transport.authenticate(KEY);
    expect(context.principalId).toBe('api-key-secret-k');
    await expect(transport.send(CLIENT_OPERATIONS.get_card, server.url)).resolves.toMatchObject({
      name: 'demo',
    });
  });
});
