import { APIKeyAuth } from '@agent/auth';
import { createTask, ValueError } from '@agent/core';
import { createTestAgent } from '@agent/test-support';
import { SSETransport, type CorsOptions } from './index.js';
import { rawRequest, rpcBody, splitStream } from './test-support/raw-http.js';

const KEY = 'sk-cors-0123456789';
const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

describe('CORS on the SSE JSON-RPC endpoints', () => {
  let transport: SSETransport;

  beforeAll(async () => {
    transport = new SSETransport({
      url: 'http://127.0.0.1:0',
      authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }),
      cors: { origins: [APP], credentials: true },
    });
    transport.bind(createTestAgent({ announceWorking: false }));
    await transport.start();
  });
  afterAll(() => transport.stop());

  it.each(['/rpc', '/tasks/stream'])(
    'answers a preflight of %s with 204 before authentication',
    async (path) => {
      const response = await rawRequest(`${transport.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: APP,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type, authorization, last-event-id',
        },
      });
      expect(response.status).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe(APP);
      expect(response.headers['access-control-allow-credentials']).toBe('true');
      expect(response.headers['access-control-allow-headers']).toBe(
        'content-type, authorization, last-event-id',
      );
    },
  );

  it("answers a refused origin's preflight with a plain 204 and no CORS headers", async () => {
    const response = await rawRequest(`${transport.url}/rpc`, {
      method: 'OPTIONS',
      headers: { origin: OTHER, 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(204);
    expect(Object.keys(response.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  it('marks JSON-RPC answers, JSON-RPC errors and 401s for an allowed origin', async () => {
    const headers = { origin: APP, 'x-api-key': KEY, 'content-type': 'application/json' };
    const sent = await rawRequest(`${transport.url}/rpc`, {
      headers,
      body: rpcBody('tasks/send', { task: createTask('hi') }),
    });
    const unknown = await rawRequest(`${transport.url}/rpc`, { headers, body: rpcBody('tasks/nope', {}) });
    const refused = await rawRequest(`${transport.url}/rpc`, {
      headers: { origin: APP, 'content-type': 'application/json' },
      body: rpcBody('tasks/send', { task: createTask('hi') }),
    });
    expect([sent.status, unknown.status, refused.status]).toEqual([200, 200, 401]);
    expect((unknown.json as { error: { code: number } }).error.code).toBe(-32601);
    for (const response of [sent, unknown, refused]) {
      expect(response.headers['access-control-allow-origin']).toBe(APP);
      expect(response.headers['access-control-allow-credentials']).toBe('true');
      expect(response.headers['access-control-expose-headers']).toBe('Retry-After, WWW-Authenticate');
      expect(response.headers.vary).toBe('Origin');
    }
  });

  it('marks an event stream', async () => {
    const response = await rawRequest(`${transport.url}/tasks/stream`, {
      headers: { origin: APP, 'x-api-key': KEY, 'content-type': 'application/json' },
      body: rpcBody('tasks/stream', { task: createTask('hi') }),
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(response.headers['access-control-allow-origin']).toBe(APP);
    expect(splitStream(response.text).frames.at(-1)?.event).toBe('task.status');
  });

  it('sets no CORS headers for a refused origin', async () => {
    const response = await rawRequest(`${transport.url}/rpc`, {
      headers: { origin: OTHER, 'x-api-key': KEY, 'content-type': 'application/json' },
      body: rpcBody('agent/card', {}),
    });
    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers.vary).toBe('Origin');
  });
});

describe('the cors option of SSETransport', () => {
  it("is checked like the HTTP transport's (the same rule)", () => {
    const url = 'http://127.0.0.1:0';
    expect(() => new SSETransport({ url, cors: { origins: '*', credentials: true } })).toThrow(ValueError);
    expect(() => new SSETransport({ url, cors: { origins: [APP], extra: 1 } as CorsOptions })).toThrow(
      /SSETransport option "cors" does not accept the option "extra"/,
    );
  });
});
