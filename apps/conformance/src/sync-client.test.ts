/**
 * `client.sync` blocks the calling thread over every network transport (the server runs in another
 * process: a blocked thread cannot serve its own requests).
 */
import { APIKeyAuth } from '@agent/auth';
import { AgentClient } from '@agent/client';
import { createTask, type Transport } from '@agent/core';
import { GRPCTransport } from '@agent/transport-grpc';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

jest.setTimeout(60_000);

let server: ServerProcess;
beforeAll(async () => {
  server = await startServerProcess({ AGENT_AUTH: 'apikey', AGENT_API_KEYS: 'sync-key' });
});
afterAll(async () => {
  await server.stop();
});

const transports: Array<
  [
    string,
    (url: string, auth: { authenticator: APIKeyAuth; credentials: string }) => Transport,
    'sse' | 'ws' | 'grpc',
  ]
> = [
  ['sse', (url, auth) => new SSETransport({ url, ...auth }), 'sse'],
  ['ws', (url, auth) => new WebSocketTransport({ url, ...auth }), 'ws'],
  ['grpc', (url, auth) => new GRPCTransport({ url, ...auth }), 'grpc'],
];

describe.each(transports)('client.sync over %s', (_name, make, key) => {
  it('returns a Task from a plain synchronous function and rethrows typed errors', async () => {
    const url = server.urls[key];
    const transport = make(url, {
      authenticator: new APIKeyAuth({ validKeys: { 'sync-key': [] } }),
      credentials: 'sync-key',
    });
    const client = new AgentClient({ transport, baseUrl: url });
    try {
      const echo = (text: string) => client.sync.sendTask(createTask(`echo ${text}`));
      const done = echo('blocking');
      expect(done.state).toBe('completed');
      expect(done.artifacts[0]!.parts[0]!.content).toBe('blocking');
      expect(client.sync.getAgentCard().securitySchemes).toHaveProperty('apiKey');
      expect(() => client.sync.cancelTask('no-such-task')).toThrow(
        expect.objectContaining({ code: 'TASK_NOT_FOUND' }),
      );
    } finally {
      await client.close();
      await transport.stop();
    }
  });

  it('rethrows UNAUTHENTICATED for a key the server refuses', async () => {
    const url = server.urls[key];
    const transport = make(url, {
      authenticator: new APIKeyAuth({ validKeys: { 'wrong-key': [] } }),
      credentials: 'wrong-key',
    });
    const client = new AgentClient({ transport, baseUrl: url });
    try {
      expect(() => client.sync.sendTask(createTask('echo x'))).toThrow(
        expect.objectContaining({ code: 'UNAUTHENTICATED' }),
      );
    } finally {
      await client.close();
      await transport.stop();
    }
  });
});
