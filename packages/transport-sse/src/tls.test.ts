import { CLIENT_OPERATIONS, createTask, UnavailableError, type Task, type TaskEvent } from '@agent/core';
import { SSETransport } from './sse-transport.js';
import { createTestPki, type TestPki } from '@agent/test-support';
import { startHarness, type Harness } from './test-support/harness.js';

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

let certs: TestPki;
beforeAll(async () => {
  certs = await createTestPki();
});

describe('https', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      tls: { cert: certs.serverCert, key: certs.serverKey },
      client: { tls: { ca: certs.ca } },
    });
  });
  afterAll(() => h.stop());

  it('serves unary calls and streams to a client that trusts the CA', async () => {
    expect(h.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const task = await h.client.send<Task>(CLIENT_OPERATIONS.send_task, h.url, createTask('echo secure'));
    expect(task.state).toBe('completed');
    const events = await collect(h.client.subscribe(h.url, createTask('stream 2')));
    expect(events.map((event) => event.type)).toEqual(['task.artifact', 'task.artifact', 'task.status']);
  });

  it('fails with UnavailableError when the client does not trust the certificate, before any handler runs', async () => {
    const before = h.agent.contexts.length;
    const stranger = new SSETransport({ url: h.url });
    await expect(stranger.send(CLIENT_OPERATIONS.get_card, h.url)).rejects.toBeInstanceOf(UnavailableError);
    const wrongCa = new SSETransport({ url: h.url, tls: { ca: certs.strangerCa } });
    await expect(collect(wrongCa.subscribe(h.url, createTask('stream 1')))).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(h.agent.contexts.length).toBe(before);
    await stranger.stop();
    await wrongCa.stop();
  });

  it('refuses an https URL without a certificate, and a certificate on an http URL', async () => {
    const noCert = new SSETransport({ url: 'https://127.0.0.1:0' });
    noCert.onTaskReceived(async (task) => task);
    await expect(noCert.start()).rejects.toThrow('Serving https needs tls.cert and tls.key');
    expect(
      () =>
        new SSETransport({
          url: 'http://127.0.0.1:0',
          tls: { cert: certs.serverCert, key: certs.serverKey },
        }),
    ).toThrow(expect.objectContaining({ code: 'VALUE_ERROR' }));
  });
});

describe('mutual TLS', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca, requestClientCert: true },
      client: { tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey } },
    });
  });
  afterAll(() => h.stop());

  it('accepts a client certificate signed by the CA', async () => {
    const card = await h.client.send(CLIENT_OPERATIONS.get_card, h.url);
    expect(card).toMatchObject({ name: 'test-agent' });
    const events = await collect(h.client.subscribe(h.url, createTask('stream 1')));
    expect(events.at(-1)).toMatchObject({ type: 'task.status', state: 'completed', final: true });
  });

  it('refuses a client without a certificate or with one from another CA at the handshake', async () => {
    const before = h.agent.contexts.length;
    const anonymous = new SSETransport({ url: h.url, tls: { ca: certs.ca } });
    await expect(anonymous.send(CLIENT_OPERATIONS.get_card, h.url)).rejects.toBeInstanceOf(UnavailableError);
    const foreign = new SSETransport({
      url: h.url,
      tls: { ca: certs.ca, cert: certs.strangerCert, key: certs.strangerKey },
    });
    await expect(collect(foreign.subscribe(h.url, createTask('stream 1')))).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(h.agent.contexts.length).toBe(before);
    await anonymous.stop();
    await foreign.stop();
  });
});
