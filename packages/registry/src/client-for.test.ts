import { APIKeyAuth } from '@agent/auth';
import { ValueError } from '@agent/core';
import { AgentClient } from '@agent/client';
import { HTTPTransport } from '@agent/transport-http';
import { WebSocketTransport } from '@agent/transport-ws';
import { GRPCTransport } from '@agent/transport-grpc';
import { clientFor } from './client-for.js';
import { card, entryOf } from './test-support/cards.js';

describe('clientFor', () => {
  it('picks the transport the card URL names, from an entry or from a card', async () => {
    const cases = [
      ['http://127.0.0.1:8080', HTTPTransport],
      ['https://agent.example:8443/base', HTTPTransport],
      ['ws://127.0.0.1:8082', WebSocketTransport],
      ['wss://agent.example', WebSocketTransport],
      ['grpc://127.0.0.1:50051', GRPCTransport],
    ] as const;
    for (const [url, Transport] of cases) {
      for (const source of [entryOf(card('a', { url })), card('a', { url })]) {
        const client = clientFor(source);
        expect(client).toBeInstanceOf(AgentClient);
        expect(client.transport).toBeInstanceOf(Transport);
        expect(client.baseUrl).toBe(url);
        await client.close();
      }
    }
  });

  it('hands the credentials, tenant and timeout to the transport it builds', async () => {
    const authenticator = new APIKeyAuth({ validKeys: { 'agent-key-000001': [] } });
    const client = clientFor(card('a'), {
      credentials: 'agent-key-000001',
      authenticator,
      tenant: 'team-a',
      timeoutMs: 4321,
    });
    const transport = client.transport as HTTPTransport;
    expect(transport.tenant).toBe('team-a');
    expect(transport.timeoutMs).toBe(4321);
    expect(transport.authenticator).toBe(authenticator);
    await client.close();
  });

  it('close() stops the transport it built', async () => {
    const client = clientFor(card('a'));
    const stop = jest.spyOn(client.transport, 'stop');
    await client.close();
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('refuses what it cannot reach', () => {
    expect(() => clientFor(card('a', { url: 'ftp://files.example' }))).toThrow(/ftp/);
    expect(() => clientFor(card('a', { url: 'not a url' }))).toThrow(ValueError);
    expect(() => clientFor({ name: 'a' } as never)).toThrow(/url/);
    expect(() => clientFor(null as never)).toThrow(ValueError);
    expect(() => clientFor(card('a'), { retries: 3 } as never)).toThrow(/retries/);
  });
});
