import { APIKeyAuth, type SecurityContext } from '@agent/auth';
import {
  CLIENT_OPERATIONS,
  UnavailableError,
  ValueError,
  createTask,
  type AgentError,
  type Task,
} from '@agent/core';
import { HTTPTransport } from './http-transport.js';
import type { BackendName } from './options.js';
import { createTestAgent, createTestPki, type TestPki } from '@agent/test-support';

const BACKENDS: BackendName[] = ['node', 'express'];
const KEY = 'sk-tls-test-key-123';

class CountingKeyAuth extends APIKeyAuth {
  calls = 0;
  override async authenticate(credentials: string): Promise<SecurityContext> {
    this.calls += 1;
    return super.authenticate(credentials);
  }
}

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    return error as AgentError;
  }
  throw new Error('expected a rejection');
}

describe.each(BACKENDS)('%s backend over TLS', (backend) => {
  let pki: TestPki;
  const transports: HTTPTransport[] = [];

  beforeAll(async () => {
    pki = await createTestPki();
  });

  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.stop()));
  });

  function make(options: ConstructorParameters<typeof HTTPTransport>[0]): HTTPTransport {
    const transport = new HTTPTransport(options);
    transports.push(transport);
    return transport;
  }

  async function serve(options: Partial<ConstructorParameters<typeof HTTPTransport>[0]> = {}) {
    const handler = createTestAgent({ announceWorking: false });
    const server = make({
      url: 'https://127.0.0.1:0',
      backend,
      tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca },
      ...options,
    });
    server.bind(handler);
    await server.start();
    return { server, handler };
  }

  it('serves https to a client that trusts the CA', async () => {
    const { server } = await serve();
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const client = make({ url: server.url, tls: { ca: pki.ca } });
    const result = await client.send<Task>(CLIENT_OPERATIONS.send_task, server.url, createTask('secure'));
    expect(result.state).toBe('completed');
  });

  it('refuses a server certificate the client does not trust', async () => {
    const { server, handler } = await serve();
    const client = make({ url: server.url });
    const error = await rejection(client.send(CLIENT_OPERATIONS.send_task, server.url, createTask('x')));
    expect(error).toBeInstanceOf(UnavailableError);
    expect(handler.calls).toHaveLength(0);
  });

  describe('with mutual TLS', () => {
    async function mtlsServer() {
      const authenticator = new CountingKeyAuth({ validKeys: { [KEY]: [] } });
      const served = await serve({
        authenticator,
        tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestClientCert: true },
      });
      return { ...served, authenticator };
    }

    it('accepts a client certificate signed by the CA, then runs the authenticator', async () => {
      const { server, handler, authenticator } = await mtlsServer();
      const client = make({
        url: server.url,
        tls: { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey },
        authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }),
        credentials: KEY,
      });
      const result = await client.send<Task>(CLIENT_OPERATIONS.send_task, server.url, createTask('mtls'));
      expect(result.state).toBe('completed');
      expect(handler.calls[0]!.ctx.security?.principalId).toBe(`api-key-${KEY.slice(0, 8)}`);
      expect(authenticator.calls).toBe(1);
    });

    it.each([
      ['without a certificate', (p: TestPki) => ({ ca: p.ca })],
      [
        'with a certificate from another CA',
        (p: TestPki) => ({ ca: p.ca, cert: p.strangerCert, key: p.strangerKey }),
      ],
    ])('refuses a client %s before the authenticator runs', async (_name, tlsFor) => {
      const { server, handler, authenticator } = await mtlsServer();
      const client = make({
        url: server.url,
        tls: tlsFor(pki),
        authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }),
        credentials: KEY,
      });
      const error = await rejection(client.send(CLIENT_OPERATIONS.send_task, server.url, createTask('x')));
      expect(error).toBeInstanceOf(UnavailableError);
      expect(authenticator.calls).toBe(0);
      expect(handler.calls).toHaveLength(0);
    });
  });

  it('refuses to serve https without a certificate and key, or mutual TLS without a CA', async () => {
    const noCert = make({ url: 'https://127.0.0.1:0', backend, tls: { ca: pki.ca } });
    noCert.bind(createTestAgent({ announceWorking: false }));
    await expect(noCert.start()).rejects.toBeInstanceOf(ValueError);
    const noCa = make({
      url: 'https://127.0.0.1:0',
      backend,
      tls: { cert: pki.serverCert, key: pki.serverKey, requestClientCert: true },
    });
    noCa.bind(createTestAgent({ announceWorking: false }));
    await expect(noCa.start()).rejects.toBeInstanceOf(ValueError);
  });
});
