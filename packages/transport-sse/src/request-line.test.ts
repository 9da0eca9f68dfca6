/**
 * The request line and header section on the SSE port, answered as the HTTP transport answers them
 * (the same `NodeHost` and route rule): one trailing slash is the route and more is 404, an
 * absolute-form target is served by its path, and a request node's parser refuses gets the JSON
 * error body with `Connection: close`.
 */
import { createTask } from '@agent/core';
import { startHarness, type Harness } from './test-support/harness.js';
import { rpcBody } from './test-support/raw-http.js';
import { requestBytes, socketRequest, type SocketAnswer } from '@agent/test-support';

describe('the request line on the SSE port', () => {
  let h: Harness;
  let port: number;

  beforeAll(async () => {
    h = await startHarness();
    port = Number(new URL(h.url).port);
  });
  afterAll(() => h.stop());

  const send = (method: string, target: string, body?: string, extra?: string): Promise<SocketAnswer> =>
    socketRequest(h.url, requestBytes(method, target, body, extra));

  it('serves a route with one trailing slash or none', async () => {
    const body = rpcBody('tasks/send', { task: createTask('echo hi') });
    expect((await send('POST', '/rpc/', body)).json).toMatchObject({ result: { state: 'completed' } });
    expect((await send('GET', '/healthz/')).json).toEqual({ status: 'ok' });
    expect((await send('GET', '/.well-known/agent.json/')).status).toBe(200);
  });

  it.each([
    ['POST', '/rpc//'],
    ['POST', '/tasks/stream//'],
    ['GET', '/.well-known/agent.json//'],
    ['GET', '/healthz//'],
    ['GET', '/readyz///'],
  ])('answers %s %s with 404 NOT_FOUND', async (method, target) => {
    const body = method === 'POST' ? rpcBody('tasks/send', { task: createTask('x') }) : undefined;
    const answer = await send(method, target, body);
    expect(answer.status).toBe(404);
    expect(answer.json).toEqual({
      error: { code: 'NOT_FOUND', message: `No route for ${method} ${target}` },
    });
  });

  it('serves an absolute-form target by the path of its URL', async () => {
    const body = rpcBody('tasks/send', { task: createTask('echo absolute') });
    expect((await send('POST', `http://127.0.0.1:${port}/rpc`, body)).json).toMatchObject({
      result: { state: 'completed' },
    });
    expect((await send('GET', `http://127.0.0.1:${port}/healthz`)).json).toEqual({ status: 'ok' });
  });

  it('answers what the HTTP parser refuses with the JSON error body and Connection: close', async () => {
    const line = await socketRequest(h.url, 'GARBAGE\r\n\r\n');
    expect(line).toMatchObject({ status: 400, headers: { connection: 'close' } });
    expect(line.json).toEqual({
      error: { code: 'INVALID_REQUEST', message: 'Malformed HTTP request: the method' },
    });
    const framing = await socketRequest(
      h.url,
      'POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    );
    expect(framing).toMatchObject({ status: 400, headers: { connection: 'close' } });
    expect(framing.json).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    const big = await socketRequest(
      h.url,
      `POST /rpc HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(big).toMatchObject({ status: 431, headers: { connection: 'close' } });
    expect(big.json).toEqual({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: "The request's header section exceeds 16384 bytes",
        data: { max_header_bytes: 16384 },
      },
    });
    const expect417 = await send('POST', '/rpc', rpcBody('agent/card', {}), 'Expect: magic\r\n');
    expect(expect417).toMatchObject({ status: 417, headers: { connection: 'close' } });
    expect(expect417.json).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
  });
});
