import { APIKeyAuth } from '@agent/auth';
import { CLIENT_OPERATIONS, UnauthenticatedError, UnavailableError, type Task } from '@agent/core';
import { request } from 'node:https';
import { createTestPki, type TestPki } from '@agent/test-support';
import { client, closeAll, collect, serve, task } from './test-support/harness.js';

let pki: TestPki;

beforeAll(async () => {
  pki = await createTestPki();
});
afterEach(closeAll);

function httpsGet(url: string, ca: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
      );
    })
      .on('error', reject)
      .end();
  });
}

describe('wss', () => {
  it('serves tasks, streams and health probes over TLS to a client that trusts the CA', async () => {
    const { server } = await serve({
      url: 'wss://127.0.0.1:0',
      tls: { cert: pki.serverCert, key: pki.serverKey },
    });
    expect(server.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/);
    const transport = client({ tls: { ca: pki.ca } });
    await expect(
      transport.send<Task>(CLIENT_OPERATIONS.send_task, server.url, task('echo secure')),
    ).resolves.toMatchObject({ state: 'completed' });
    const events = await collect(transport.subscribe(server.url, task('stream 2')));
    expect(events.at(-1)).toMatchObject({ final: true, state: 'completed' });
    expect(await httpsGet(`${server.url.replace('wss://', 'https://')}/readyz`, pki.ca)).toEqual({
      status: 200,
      body: { status: 'ready' },
    });
  });

  it('refuses a server certificate the client does not trust', async () => {
    const { server, handler } = await serve({
      url: 'wss://127.0.0.1:0',
      tls: { cert: pki.serverCert, key: pki.serverKey },
    });
    await expect(client().send(CLIENT_OPERATIONS.get_card, server.url)).rejects.toThrow(UnavailableError);
    expect(handler.contexts).toHaveLength(0);
  });
});

describe('mutual TLS', () => {
  const mtls = () => ({ cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestClientCert: true });

  it('accepts a client certificate signed by the CA, then runs the authenticator', async () => {
    const auth = new APIKeyAuth({ validKeys: { 'k-123456789': [] } });
    const { server, handler } = await serve({ url: 'wss://127.0.0.1:0', tls: mtls(), authenticator: auth });
    const tls = { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey };
    const good = client({ url: 'wss://127.0.0.1:0', tls, authenticator: auth, credentials: 'k-123456789' });
    await expect(
      good.send<Task>(CLIENT_OPERATIONS.send_task, server.url, task('echo both')),
    ).resolves.toMatchObject({ state: 'completed' });
    // TLS passes, the application credential is still required.
    await expect(
      client({ url: 'wss://127.0.0.1:0', tls }).send(CLIENT_OPERATIONS.get_card, server.url),
    ).rejects.toThrow(UnauthenticatedError);
    expect(handler.contexts).toHaveLength(1);
  });

  it('refuses a client without a certificate, or with one from another CA, before any upgrade', async () => {
    const { server, handler } = await serve({ url: 'wss://127.0.0.1:0', tls: mtls() });
    await expect(
      client({ tls: { ca: pki.ca } }).send(CLIENT_OPERATIONS.get_card, server.url),
    ).rejects.toThrow(UnavailableError);
    // A client certificate goes with a wss:// client URL (a ws:// one would never use it).
    const stranger = client({
      url: 'wss://127.0.0.1:0',
      tls: { ca: pki.ca, cert: pki.strangerCert, key: pki.strangerKey },
    });
    await expect(stranger.send(CLIENT_OPERATIONS.get_card, server.url)).rejects.toThrow(UnavailableError);
    expect(handler.contexts).toHaveLength(0);
  });
});
