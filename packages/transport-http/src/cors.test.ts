import { APIKeyAuth } from '@agent/auth';
import { createTask, ValueError } from '@agent/core';
import { createTestAgent, rawRequest, type RawResponse } from '@agent/test-support';
import { HTTPTransport, type BackendName, type CorsOptions } from './index.js';

const KEY = 'sk-cors-0123456789';
const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

async function serve(backend: BackendName, cors: CorsOptions): Promise<HTTPTransport> {
  const transport = new HTTPTransport({
    url: 'http://127.0.0.1:0',
    backend,
    cors,
    authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }),
  });
  transport.bind(createTestAgent({ announceWorking: false }));
  await transport.start();
  return transport;
}

function preflight(url: string, origin: string, headers = 'content-type, x-api-key'): Promise<RawResponse> {
  return rawRequest(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
  });
}

function corsHeaders(response: RawResponse): string[] {
  return Object.keys(response.headers).filter((name) => name.startsWith('access-control-'));
}

describe.each<BackendName>(['node', 'express'])('CORS on the %s backend', (backend) => {
  let transport: HTTPTransport;

  afterEach(async () => {
    await transport?.stop();
  });

  it('answers an allowed preflight with 204 before authentication', async () => {
    transport = await serve(backend, { origins: [APP], maxAgeSeconds: 600 });
    const response = await preflight(`${transport.url}/tasks/`, APP);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(response.headers['access-control-allow-origin']).toBe(APP);
    expect(response.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, DELETE');
    // Without allowedHeaders the preflight's own list is allowed, so Vary names it too.
    expect(response.headers['access-control-allow-headers']).toBe('content-type, x-api-key');
    expect(response.headers['access-control-max-age']).toBe('600');
    expect(response.headers.vary).toBe('Origin, Access-Control-Request-Headers');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('answers a preflight of a refused origin with a plain 204 and no CORS headers', async () => {
    transport = await serve(backend, { origins: [APP] });
    const response = await preflight(`${transport.url}/tasks/`, OTHER);
    expect(response.status).toBe(204);
    expect(corsHeaders(response)).toEqual([]);
    expect(response.headers.vary).toBe('Origin, Access-Control-Request-Headers');
  });

  it('allows only the listed request headers when allowedHeaders is given', async () => {
    transport = await serve(backend, { origins: [APP], allowedHeaders: ['Content-Type', 'X-API-Key'] });
    const response = await preflight(`${transport.url}/tasks/`, APP, 'x-other');
    expect(response.headers['access-control-allow-headers']).toBe('Content-Type, X-API-Key');
    expect(response.headers.vary).toBe('Origin');
  });

  it('marks a 401 for an allowed origin, exposing WWW-Authenticate and Retry-After', async () => {
    transport = await serve(backend, { origins: [APP] });
    const response = await rawRequest(`${transport.url}/tasks/`, {
      headers: { origin: APP },
      body: createTask('hi'),
    });
    expect(response.status).toBe(401);
    expect(response.headers['access-control-allow-origin']).toBe(APP);
    expect(response.headers['access-control-expose-headers']).toBe('Retry-After, WWW-Authenticate');
    expect(response.headers.vary).toBe('Origin');
  });

  it('marks successes, route errors, probes and event streams', async () => {
    transport = await serve(backend, { origins: (origin) => origin.endsWith('.example.com') });
    const headers = { origin: APP, 'x-api-key': KEY };
    const sent = await rawRequest(`${transport.url}/tasks/`, { headers, body: createTask('hi') });
    const missing = await rawRequest(`${transport.url}/nowhere`, { headers });
    const unknownTask = await rawRequest(`${transport.url}/tasks/nope`, { headers });
    const health = await rawRequest(`${transport.url}/healthz`, { headers: { origin: APP } });
    const stream = await rawRequest(`${transport.url}/tasks/stream`, { headers, body: createTask('hi') });
    expect([sent.status, missing.status, unknownTask.status, health.status, stream.status]).toEqual([
      200, 404, 404, 200, 200,
    ]);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    for (const response of [sent, missing, unknownTask, health, stream]) {
      expect(response.headers['access-control-allow-origin']).toBe(APP);
      expect(response.headers.vary).toBe('Origin');
    }
  });

  it('sets no CORS headers for a refused origin or a request without Origin, but still Vary', async () => {
    transport = await serve(backend, { origins: [APP] });
    const refused = await rawRequest(`${transport.url}/tasks/`, {
      headers: { origin: OTHER, 'x-api-key': KEY },
      body: createTask('hi'),
    });
    const sameOrigin = await rawRequest(`${transport.url}/tasks/`, {
      headers: { 'x-api-key': KEY },
      body: createTask('hi'),
    });
    for (const response of [refused, sameOrigin]) {
      expect(response.status).toBe(200);
      expect(corsHeaders(response)).toEqual([]);
      expect(response.headers.vary).toBe('Origin');
    }
  });

  it('echoes the origin and allows credentials when credentials is on, never "*"', async () => {
    transport = await serve(backend, { origins: [APP], credentials: true, exposedHeaders: ['X-Request-Id'] });
    const response = await rawRequest(`${transport.url}/tasks/`, {
      headers: { origin: APP, 'x-api-key': KEY },
      body: createTask('hi'),
    });
    expect(response.headers['access-control-allow-origin']).toBe(APP);
    expect(response.headers['access-control-allow-credentials']).toBe('true');
    expect(response.headers['access-control-expose-headers']).toBe('X-Request-Id');
    const allowed = await preflight(`${transport.url}/tasks/`, APP);
    expect(allowed.headers['access-control-allow-credentials']).toBe('true');
  });

  it('answers "*" to any origin without credentials', async () => {
    transport = await serve(backend, { origins: '*' });
    const response = await rawRequest(`${transport.url}/healthz`, { headers: { origin: OTHER } });
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  it('leaves OPTIONS without Access-Control-Request-Method to the routes (405), marked', async () => {
    transport = await serve(backend, { origins: [APP] });
    const response = await rawRequest(`${transport.url}/tasks/`, {
      method: 'OPTIONS',
      headers: { origin: APP },
    });
    expect(response.status).toBe(405);
    expect(response.headers['access-control-allow-origin']).toBe(APP);
  });
});

describe('CORS option checks', () => {
  const url = 'http://127.0.0.1:0';

  it('refuses unknown fields, naming the accepted ones', () => {
    expect(() => new HTTPTransport({ url, cors: { origins: [APP], maxAge: 5 } as CorsOptions })).toThrow(
      /does not accept the option "maxAge"; accepted: allowedHeaders, credentials, exposedHeaders, maxAgeSeconds, origins/,
    );
  });

  it('refuses "*" with credentials, origins that are not origins, and bad fields', () => {
    const bad: unknown[] = [
      { origins: '*', credentials: true },
      { origins: ['https://app.example.com/'] },
      { origins: ['app.example.com'] },
      { origins: 'https://app.example.com' },
      { origins: [APP], credentials: 'yes' },
      { origins: [APP], maxAgeSeconds: -1 },
      { origins: [APP], exposedHeaders: ['Bad Header'] },
      {},
      null,
    ];
    for (const cors of bad) {
      expect(() => new HTTPTransport({ url, cors: cors as CorsOptions })).toThrow(ValueError);
    }
  });

  it('refuses an unknown transport option with cors among the accepted ones', () => {
    expect(() => new HTTPTransport({ url, corsOrigins: [APP] } as never)).toThrow(/accepted: .*cors/);
  });
});
