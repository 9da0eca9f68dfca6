/**
 * A refused oversized body: the client must read the 413, not a connection reset, whether the
 * body's length was declared or not; a client declaring an enormous body loses its socket.
 */
import { request } from 'node:http';
import { createTask, handlerFromFunction } from '@agent/core';
import { HTTPTransport } from './index.js';

const LIMIT = 64 * 1024;

function post(
  url: string,
  body: Buffer,
  headers: Record<string, string | number>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/tasks/`,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.each(['node', 'express'] as const)('body limit on the %s backend', (backend) => {
  let transport: HTTPTransport;
  beforeAll(async () => {
    transport = new HTTPTransport({ url: 'http://127.0.0.1:0', backend, maxBodyBytes: LIMIT });
    transport.bind(handlerFromFunction(async (task) => task));
    await transport.start();
  });
  afterAll(async () => {
    await transport.stop();
  });

  it('answers 413 JSON to a declared body a bit over the limit, every time', async () => {
    const body = Buffer.from(JSON.stringify(createTask(`echo ${'x'.repeat(LIMIT * 4)}`)));
    for (let i = 0; i < 25; i++) {
      const res = await post(transport.url, body, { 'content-length': body.length });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
    }
  });

  it('answers 413 JSON to a chunked body over the limit', async () => {
    const body = Buffer.from(JSON.stringify(createTask(`echo ${'y'.repeat(LIMIT * 2)}`)));
    const res = await post(transport.url, body, { 'transfer-encoding': 'chunked' });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('answers a refused body only once it is drained, so a Connection: close client cannot be reset', async () => {
    const declared = LIMIT * 4;
    const events: string[] = [];
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${transport.url}/tasks/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': declared, connection: 'close' },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        events.push('response');
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.write(Buffer.alloc(declared / 2, 'a'), () => {
        // Give an early answer every chance to arrive before the rest of the body is sent.
        setTimeout(() => {
          events.push('rest sent');
          req.end(Buffer.alloc(declared / 2, 'b'));
        }, 150);
      });
    });
    expect(status).toBe(413);
    expect(events).toEqual(['rest sent', 'response']);
  });

  it('still serves bodies within the limit', async () => {
    const body = Buffer.from(JSON.stringify(createTask('echo ok')));
    expect((await post(transport.url, body, { 'content-length': body.length })).status).toBe(200);
  });
});

it('closes the socket of a client that declared an enormous body, after answering 413', async () => {
  const transport = new HTTPTransport({ url: 'http://127.0.0.1:0', maxBodyBytes: LIMIT });
  transport.bind(handlerFromFunction(async (task) => task));
  await transport.start();
  try {
    const outcome = await new Promise<{ status?: number; closed: boolean }>((resolve) => {
      let status: number | undefined;
      const req = request(`${transport.url}/tasks/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': 1024 * 1024 * 1024 },
      });
      req.on('response', (res) => {
        status = res.statusCode;
        res.resume();
      });
      req.on('error', () => resolve({ status, closed: true }));
      req.on('close', () => resolve({ status, closed: true }));
      const chunk = Buffer.alloc(64 * 1024, 'z');
      const pump = (): void => {
        while (!req.destroyed && req.write(chunk)) {
          // keep writing until the socket pushes back or is gone
        }
        if (!req.destroyed) req.once('drain', pump);
      };
      pump();
    });
    expect(outcome.closed).toBe(true);
    expect(outcome.status).toBe(413);
  } finally {
    await transport.stop();
  }
});
