/**
 * The request line and header section on both backends, byte for byte the same answer: trailing
 * slashes (one is the route, more is 404), absolute-form targets (served by their path), and the
 * requests node's parser refuses (the JSON error body with `Connection: close`).
 */
import { createTask, type Task } from '@agent/core';
import { createTestAgent } from '@agent/test-support';
import { ExpressBackend } from './express-backend.js';
import { HTTPTransport } from './http-transport.js';
import type { HTTPTransportOptions } from './options.js';
import { requestBytes, socketRequest, type SocketAnswer } from '@agent/test-support';

const BACKENDS: Array<[string, Partial<HTTPTransportOptions>]> = [
  ['node', {}],
  ['express', { backend: (options) => new ExpressBackend(options) }],
];

/** The parts of an answer both backends must agree on (node's `Date` aside). */
function shape(answer: SocketAnswer): unknown {
  return {
    status: answer.status,
    type: answer.headers['content-type'],
    connection: answer.headers.connection?.toLowerCase(),
    body: answer.json,
  };
}

describe.each(BACKENDS)('the %s backend', (_name, backendOptions) => {
  let transport: HTTPTransport;
  let url: string;
  let port: number;

  beforeAll(async () => {
    transport = new HTTPTransport({ url: 'http://127.0.0.1:0', ...backendOptions });
    transport.bind(createTestAgent({ announceWorking: false }));
    await transport.start();
    url = transport.url;
    port = Number(new URL(url).port);
  });

  afterAll(() => transport.stop());

  const send = (method: string, target: string, body?: unknown, extra?: string): Promise<SocketAnswer> =>
    socketRequest(
      url,
      requestBytes(method, target, body === undefined ? undefined : JSON.stringify(body), extra),
    );

  describe('trailing slashes', () => {
    it('serves a route with one trailing slash or none', async () => {
      const task = createTask('one slash');
      expect((await send('POST', '/tasks/', task)).status).toBe(200);
      expect((await send('POST', '/tasks', createTask('no slash'))).status).toBe(200);
      expect((await send('GET', `/tasks/${task.id}/`)).json).toMatchObject({ id: task.id });
      expect((await send('GET', '/healthz/')).json).toEqual({ status: 'ok' });
      expect((await send('GET', '/readyz/')).json).toEqual({ status: 'ready' });
    });

    it.each([
      ['POST', '/tasks//'],
      ['POST', '/tasks///'],
      ['POST', '/tasks/cancel//'],
      ['POST', '/tasks/stream//'],
      ['GET', '/tasks/abc//'],
      ['GET', '/tasks/abc/events//'],
      ['GET', '/.well-known/agent.json//'],
      ['GET', '/healthz//'],
      ['GET', '/readyz//'],
      ['HEAD', '/healthz//'],
    ])('answers %s %s with 404 NOT_FOUND and closes as asked', async (method, target) => {
      const body = method === 'POST' ? createTask('extra slashes') : undefined;
      const answer = await send(method, target, body);
      expect(answer.status).toBe(404);
      if (method !== 'HEAD') {
        expect(answer.json).toEqual({
          error: { code: 'NOT_FOUND', message: `No route for ${method} ${target}` },
        });
      }
    });
  });

  describe('absolute-form request targets', () => {
    it('serves POST http://host:port/tasks/ as POST /tasks/', async () => {
      const task = createTask('absolute');
      const answer = await send('POST', `http://127.0.0.1:${port}/tasks/`, task);
      expect(answer.status).toBe(200);
      expect((answer.json as Task).id).toBe(task.id);
    });

    it('serves the probes, the task routes and their queries through the path of the URL', async () => {
      const task = createTask('absolute get');
      await send('POST', '/tasks/', task);
      expect((await send('GET', `http://127.0.0.1:${port}/healthz`)).json).toEqual({ status: 'ok' });
      expect((await send('GET', `http://127.0.0.1:${port}/readyz`)).json).toEqual({ status: 'ready' });
      const read = await send('GET', `http://127.0.0.1:${port}/tasks/${task.id}?history_length=1`);
      expect(read.json).toMatchObject({ id: task.id });
      expect((read.json as Task).messages).toHaveLength(1);
      // The authority is the client's business: another host name still reaches this server's route.
      expect((await send('POST', 'http://other.example:8080/tasks/', createTask('elsewhere'))).status).toBe(
        200,
      );
    });

    it('applies the trailing-slash rule to the path of the URL too', async () => {
      const answer = await send('GET', `http://127.0.0.1:${port}/healthz//`);
      expect(answer.status).toBe(404);
      expect(answer.json).toMatchObject({ error: { code: 'NOT_FOUND' } });
    });
  });

  describe('requests the HTTP parser refuses', () => {
    const malformed = (reason: string) => ({
      status: 400,
      type: 'application/json; charset=utf-8',
      connection: 'close',
      body: { error: { code: 'INVALID_REQUEST', message: `Malformed HTTP request: ${reason}` } },
    });

    it('answers a malformed request line with 400 INVALID_REQUEST and Connection: close', async () => {
      expect(shape(await socketRequest(url, 'GARBAGE\r\n\r\n'))).toEqual(malformed('the method'));
      expect(shape(await socketRequest(url, 'GET /healthz HTTP/9.9\r\nHost: a\r\n\r\n'))).toEqual(
        malformed('the HTTP version'),
      );
    });

    it('answers contradictory body framing with 400 INVALID_REQUEST', async () => {
      const bytes = 'POST /tasks/ HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}';
      expect(shape(await socketRequest(url, bytes))).toEqual(
        malformed('the body framing (Content-Length, Transfer-Encoding)'),
      );
    });

    it('answers a malformed header with 400 INVALID_REQUEST', async () => {
      const answer = await socketRequest(url, 'GET /healthz HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n');
      expect(shape(answer)).toMatchObject({ status: 400, connection: 'close' });
      expect(answer.json).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    });

    it('answers a header section over the limit with 431 and PAYLOAD_TOO_LARGE naming it', async () => {
      const bytes = `GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
      expect(shape(await socketRequest(url, bytes))).toEqual({
        status: 431,
        type: 'application/json; charset=utf-8',
        connection: 'close',
        body: {
          error: {
            code: 'PAYLOAD_TOO_LARGE',
            message: "The request's header section exceeds 16384 bytes",
            data: { max_header_bytes: 16384 },
          },
        },
      });
    });

    it('answers an Expect other than 100-continue with 417 and INVALID_REQUEST', async () => {
      const answer = await send('POST', '/tasks/', createTask('expect'), 'Expect: magic\r\n');
      expect(shape(answer)).toEqual({
        status: 417,
        type: 'application/json; charset=utf-8',
        connection: 'close',
        body: {
          error: {
            code: 'INVALID_REQUEST',
            message: 'Unsupported Expect header: only 100-continue is supported',
          },
        },
      });
    });

    it('still serves the next connection', async () => {
      await socketRequest(url, 'GARBAGE\r\n\r\n');
      expect((await send('GET', '/healthz')).json).toEqual({ status: 'ok' });
    });
  });
});
