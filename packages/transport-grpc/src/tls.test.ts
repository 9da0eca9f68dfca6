import { CLIENT_OPERATIONS, isFinalEvent, UnavailableError, ValueError, type TaskEvent } from '@agent/core';
import { createTestPki, type TestPki } from '@agent/test-support';
import { apiKeyAuth, API_KEY, Harness, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

let pki: TestPki;
beforeAll(async () => {
  pki = await createTestPki();
});

const TLS_URL = 'grpcs://127.0.0.1:0';

describe('GRPCTransport over grpcs://', () => {
  it('serves TLS; a client trusting the CA gets unary and streamed results', async () => {
    const { url } = await harness.server({
      url: TLS_URL,
      tls: { cert: pki.serverCert, key: pki.serverKey },
    });
    expect(url).toMatch(/^grpcs:\/\/127\.0\.0\.1:\d+$/);
    const client = harness.client({ tls: { ca: pki.ca } });
    await expect(client.send(CLIENT_OPERATIONS.get_card, url)).resolves.toMatchObject({ name: 'demo' });
    const events: TaskEvent[] = [];
    for await (const event of client.subscribe(url, task('stream 3'))) events.push(event);
    expect(events.filter((event) => event.type === 'task.artifact')).toHaveLength(3);
    expect(events.filter(isFinalEvent)).toHaveLength(1);
  });

  it('a client that does not trust the server certificate cannot connect (UNAVAILABLE)', async () => {
    const { url } = await harness.server({
      url: TLS_URL,
      tls: { cert: pki.serverCert, key: pki.serverKey },
    });
    await expect(
      harness.client({ timeoutMs: 5000 }).send(CLIENT_OPERATIONS.get_card, url),
    ).rejects.toBeInstanceOf(UnavailableError);
  });

  it('a plaintext client cannot talk to a TLS server', async () => {
    const { url } = await harness.server({
      url: TLS_URL,
      tls: { cert: pki.serverCert, key: pki.serverKey },
    });
    await expect(
      harness.client({ timeoutMs: 2000 }).send(CLIENT_OPERATIONS.get_card, url.replace('grpcs:', 'grpc:')),
    ).rejects.toMatchObject({
      code: expect.stringMatching(/UNAVAILABLE|INTERNAL|DEADLINE_EXCEEDED/),
    });
  });

  it('rejectUnauthorized: false skips verification; servername verifies another name', async () => {
    const { url, server } = await harness.server({
      url: TLS_URL,
      tls: { cert: pki.serverCert, key: pki.serverKey },
    });
    await expect(
      harness.client({ tls: { rejectUnauthorized: false } }).send(CLIENT_OPERATIONS.get_card, url),
    ).resolves.toMatchObject({ name: 'demo' });
    await expect(
      harness.client({ tls: { ca: pki.ca, servername: 'localhost' } }).send(CLIENT_OPERATIONS.get_card, url),
    ).resolves.toMatchObject({ name: 'demo' });
    await expect(
      harness
        .client({ tls: { ca: pki.ca, servername: 'other.example' }, timeoutMs: 5000 })
        .send(CLIENT_OPERATIONS.get_card, `grpcs://127.0.0.1:${server.port}`),
    ).rejects.toBeInstanceOf(UnavailableError);
  });

  it('mutual TLS: a client certificate from the trusted CA is accepted, together with metadata auth', async () => {
    const { url, handler } = await harness.server({
      url: TLS_URL,
      authenticator: apiKeyAuth(),
      tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestClientCert: true },
    });
    const client = harness.client({
      tls: { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey },
      authenticator: apiKeyAuth(),
      credentials: API_KEY,
    });
    await expect(client.send(CLIENT_OPERATIONS.send_task, url, task('echo mtls'))).resolves.toMatchObject({
      state: 'completed',
    });
    expect(handler.contexts[0]!.security?.token).toBe(API_KEY);
  });

  it('mutual TLS: no client certificate, or one from another CA, is refused', async () => {
    const { url } = await harness.server({
      url: TLS_URL,
      tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestClientCert: true },
    });
    await expect(
      harness.client({ tls: { ca: pki.ca }, timeoutMs: 5000 }).send(CLIENT_OPERATIONS.get_card, url),
    ).rejects.toBeInstanceOf(UnavailableError);
    await expect(
      harness
        .client({
          tls: { ca: pki.ca, cert: pki.strangerCert, key: pki.strangerKey },
          timeoutMs: 5000,
        })
        .send(CLIENT_OPERATIONS.get_card, url),
    ).rejects.toBeInstanceOf(UnavailableError);
  });

  it('TLS settings that cannot work are ValueErrors', async () => {
    await expect(harness.server({ url: TLS_URL })).rejects.toBeInstanceOf(ValueError);
    await expect(
      harness.server({
        url: TLS_URL,
        tls: { cert: pki.serverCert, key: pki.serverKey, requestClientCert: true },
      }),
    ).rejects.toBeInstanceOf(ValueError);
    await expect(
      harness
        .client({ tls: { cert: pki.clientCert } })
        .send(CLIENT_OPERATIONS.get_card, 'grpcs://127.0.0.1:1'),
    ).rejects.toBeInstanceOf(ValueError);
  });

  it('certificates given as Uint8Array (after a structured clone) work too', async () => {
    const { url } = await harness.server({
      url: TLS_URL,
      tls: { cert: pki.serverCert, key: pki.serverKey },
    });
    const cloned = structuredClone({ ca: Buffer.from(pki.ca) });
    expect(Buffer.isBuffer(cloned.ca)).toBe(false);
    await expect(
      harness.client({ tls: cloned as { ca: Buffer } }).send(CLIENT_OPERATIONS.get_card, url),
    ).resolves.toMatchObject({ name: 'demo' });
  });
});
