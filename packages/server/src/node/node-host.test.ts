/**
 * What `NodeHost` answers itself, for every transport on it (HTTP on both backends, SSE, the
 * WebSocket upgrade server): the probes under the route rule (absolute-form, one trailing slash),
 * and the requests node's HTTP parser refuses, with the JSON error body and `Connection: close`.
 */
import { connect } from 'node:net';
import { NodeHost } from './node-host.js';
import { encodeRefusal, parserRefusal } from './client-error.js';
import { requestPath, routeKey } from './route-table.js';
import { writeJson } from './write-json.js';

/** Everything the server wrote on one connection, until it closed it. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text));
    socket.write(bytes);
  });
}

function parse(text: string): { status: number; headers: string; body: unknown } {
  const split = text.indexOf('\r\n\r\n');
  const head = text.slice(0, split);
  return {
    status: Number(head.split(' ')[1]),
    headers: head.toLowerCase(),
    body: JSON.parse(text.slice(split + 4)),
  };
}

describe('routeKey and requestPath', () => {
  it('drops one trailing slash, never more', () => {
    expect(routeKey('/tasks')).toBe('/tasks');
    expect(routeKey('/tasks/')).toBe('/tasks');
    expect(routeKey('/tasks//')).toBe('/tasks/');
    expect(routeKey('/')).toBe('/');
  });

  it('reduces an absolute-form target to its path and drops the query', () => {
    expect(requestPath('/tasks/?a=1')).toBe('/tasks/');
    expect(requestPath('http://127.0.0.1:8080/tasks/abc?history_length=2')).toBe('/tasks/abc');
    expect(requestPath('https://example.com')).toBe('/');
  });
});

describe('parserRefusal', () => {
  it('names the status and the error of each parser error', () => {
    const refusal = (code: string) => {
      const { status, error } = parserRefusal(Object.assign(new Error('parser words'), { code }), 16384);
      return { status, ...error.toJSON() };
    };
    expect(refusal('HPE_INVALID_METHOD')).toEqual({
      status: 400,
      code: 'INVALID_REQUEST',
      message: 'Malformed HTTP request: the method',
    });
    expect(refusal('HPE_SOMETHING_NEW')).toEqual({
      status: 400,
      code: 'INVALID_REQUEST',
      message: 'Malformed HTTP request',
    });
    expect(refusal('HPE_HEADER_OVERFLOW')).toMatchObject({
      status: 431,
      code: 'PAYLOAD_TOO_LARGE',
      data: { max_header_bytes: 16384 },
    });
    expect(refusal('HPE_CHUNK_EXTENSIONS_OVERFLOW')).toMatchObject({
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
    });
    expect(refusal('ERR_HTTP_REQUEST_TIMEOUT')).toMatchObject({ status: 408, code: 'DEADLINE_EXCEEDED' });
  });

  it('encodes a whole response with its length and Connection: close', () => {
    const text = encodeRefusal(parserRefusal({ code: 'HPE_INVALID_URL' }, 16384));
    const { status, headers, body } = parse(text);
    expect(status).toBe(400);
    expect(text.startsWith('HTTP/1.1 400 Bad Request\r\n')).toBe(true);
    expect(headers).toContain('connection: close');
    expect(headers).toContain(`content-length: ${Buffer.byteLength(JSON.stringify(body))}`);
    expect(body).toEqual({
      error: { code: 'INVALID_REQUEST', message: 'Malformed HTTP request: the request target' },
    });
  });
});

describe('NodeHost', () => {
  let host: NodeHost;
  let port: number;
  const served: string[] = [];

  beforeAll(async () => {
    host = new NodeHost({
      basePath: '/agent',
      state: () => 'ready',
      onRequest: (req, res) => {
        if (req.url === '/agent/partial') {
          // A stream that has begun: headers and some bytes out, more to come.
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
          return;
        }
        served.push(`${req.method} ${req.url}`);
        writeJson(res, 404, { error: { code: 'NOT_FOUND', message: 'no routes here' } });
      },
      // As the WebSocket transport's host: upgrades go elsewhere, parser errors are still answered here.
      onUpgrade: (_req, socket) => socket.destroy(),
    });
    port = await host.start('127.0.0.1', 0);
  });
  afterAll(() => host.close());

  const get = (target: string): Promise<string> =>
    exchange(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);

  it('answers the probes with or without one trailing slash, and by the path of an absolute-form target', async () => {
    for (const target of ['/agent/healthz', '/agent/healthz/', `http://127.0.0.1:${port}/agent/healthz`]) {
      expect(parse(await get(target))).toMatchObject({ status: 200, body: { status: 'ok' } });
    }
    expect(parse(await get(`http://127.0.0.1:${port}/agent/readyz/`))).toMatchObject({
      status: 200,
      body: { status: 'ready' },
    });
    expect(served).toEqual([]);
  });

  it('passes a probe path with more trailing slashes on to the transport, which has no such route', async () => {
    expect(parse(await get('/agent/healthz//')).status).toBe(404);
    expect(served).toEqual(['GET /agent/healthz//']);
  });

  it('answers a request the parser refuses with the JSON error body and Connection: close', async () => {
    const answer = parse(
      await exchange(port, 'GET /agent/healthz HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n'),
    );
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain('connection: close');
    expect(answer.headers).toContain('content-type: application/json; charset=utf-8');
    expect(answer.body).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    const upgrade = parse(
      await exchange(
        port,
        `GET /agent HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      ),
    );
    expect(upgrade.status).toBe(431);
    expect(upgrade.body).toMatchObject({
      error: { code: 'PAYLOAD_TOO_LARGE', data: { max_header_bytes: 16384 } },
    });
  });

  it('answers garbage pipelined after a finished answer with a whole response of its own', async () => {
    const text = await exchange(port, 'GET /agent/healthz HTTP/1.1\r\nHost: a\r\n\r\nGARBAGE\r\n\r\n');
    const answers = text.split('HTTP/1.1 ').filter((part) => part !== '');
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatch(/^200 /);
    expect(answers[0]).toContain('{"status":"ok"}');
    expect(answers[1]).toMatch(/^400 /);
  });

  it('writes nothing into an answer still under way: the connection just closes', async () => {
    const text = await exchange(port, 'GET /agent/partial HTTP/1.1\r\nHost: a\r\n\r\nGARBAGE\r\n\r\n');
    // What of the 200 left before the close varies; a second status line never follows it.
    expect(text.split('HTTP/1.1 ').length).toBeLessThanOrEqual(2);
    expect(text).not.toContain('INVALID_REQUEST');
  });
});

describe('NodeHost connection limits', () => {
  let host: NodeHost;
  let port: number;

  beforeAll(async () => {
    host = new NodeHost({
      state: () => 'ready',
      onRequest: (req, res) => {
        req.resume();
        req.on('end', () => writeJson(res, 200, { ok: true }));
      },
      connections: { headersTimeoutMs: 300, requestTimeoutMs: 600, maxConnections: 3 },
    });
    port = await host.start('127.0.0.1', 0);
  });
  afterAll(() => host.close());

  it('ends a request whose headers or body trickle in past the limits, with 408 and its JSON body', async () => {
    // Headers never finished, a body never finished: both are answered and closed, not held.
    for (const bytes of [
      'GET /x HTTP/1.1\r\nHost: a\r\nX-Slow: 1',
      'POST /x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
    ]) {
      const answer = await exchange(port, bytes);
      expect(parse(answer)).toMatchObject({ status: 408, body: { error: { code: 'DEADLINE_EXCEEDED' } } });
    }
  });

  it('closes connections past maxConnections at once, and serves again when they go', async () => {
    const held = await Promise.all(
      Array.from({ length: 3 }, () => {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        return new Promise<typeof socket>((resolve) => socket.once('connect', () => resolve(socket)));
      }),
    );
    const refused = await exchange(port, 'GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    expect(refused).toBe('');
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const served = await exchange(port, 'GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    expect(parse(served).status).toBe(200);
  });
});
