import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { UnauthenticatedError, ValueError } from '@agent/core';
import {
  ACCESS_TOKEN_TYPE,
  OAuth2DelegationAuth,
  TOKEN_EXCHANGE_GRANT_TYPE,
} from './oauth2-delegation-auth.js';
import { authenticateRequest } from './authenticate-request.js';
import { SecurityContext } from './security-context.js';

interface Received {
  method: string;
  path: string;
  contentType: string | undefined;
  body: unknown;
}

/** A small token-exchange endpoint on 127.0.0.1; each path answers one way. */
const routes: Record<string, (res: ServerResponse, body: Record<string, unknown>) => void> = {
  '/ok': (res) =>
    json(res, 200, {
      sub: 'user-7',
      access_token: 'delegated',
      expires_in: 3600,
      metadata: { scope: 'a b' },
    }),
  '/ok-iso': (res) => json(res, 200, { sub: 'u', access_token: 'd', expires_in: '2030-01-01T00:00:00Z' }),
  '/empty-object': (res) => json(res, 200, {}),
  '/huge-expiry': (res) => json(res, 200, { sub: 's', access_token: 't', expires_in: 1e300 }),
  '/401': (res) => json(res, 401, { error: 'invalid_grant', error_description: 'subject token expired' }),
  // An endpoint that quotes the subject token back in its free text (a real provider did this).
  '/echo': (res, body) =>
    json(res, 401, {
      error: 'invalid_grant',
      error_description: `subject_token ${String(body.subject_token)} is not valid`,
    }),
  '/echo-code': (res, body) => json(res, 400, { error: `bad ${String(body.subject_token)}` }),
  '/403-text': (res) => {
    res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden for sk-secret');
  },
  '/500': (res) => {
    res.writeHead(500).end('internal');
  },
  '/201': (res) => json(res, 201, { sub: 'x', access_token: 'y' }),
  '/bad-json': (res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"sub": "x", ');
  },
  '/array': (res) => json(res, 200, ['not', 'an', 'object']),
  '/bad-sub': (res) => json(res, 200, { sub: 5, access_token: 't' }),
  '/bad-token': (res) => json(res, 200, { sub: 's', access_token: { nested: true } }),
  '/bad-metadata': (res) => json(res, 200, { sub: 's', access_token: 't', metadata: 'x' }),
  '/bad-expiry': (res) => json(res, 200, { sub: 's', access_token: 't', expires_in: { seconds: 5 } }),
  '/redirect': (res) => {
    res.writeHead(307, { location: '/ok' }).end();
  },
  '/big': (res) => json(res, 200, { sub: 's', access_token: 'x'.repeat(4096) }),
  // Never answers: the provider's deadline must end the call.
  '/hang': () => undefined,
};

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

let server: Server;
let base: string;
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        contentType: req.headers['content-type'],
        body: text ? JSON.parse(text) : undefined,
      });
      const route = routes[req.url ?? ''];
      if (route) route(res, text ? (JSON.parse(text) as Record<string, unknown>) : {});
      else json(res, 404, { error: 'not_found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function provider(
  path: string,
  extra: Partial<ConstructorParameters<typeof OAuth2DelegationAuth>[0]> = {},
): OAuth2DelegationAuth {
  return new OAuth2DelegationAuth({
    exchangeEndpoint: `${base}${path}`,
    clientId: 'agent-a',
    clientSecret: 's3cr3t',
    ...extra,
  });
}

async function failure(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UnauthenticatedError);
  const message = (error as Error).message;
  expect(message.startsWith('OAuth delegation failed: ')).toBe(true);
  return message;
}

describe('OAuth2DelegationAuth', () => {
  it('200: POSTs the RFC 8693 parameters as JSON and builds the context from the answer', async () => {
    received.length = 0;
    const context = await provider('/ok').authenticate('incoming-token');
    expect(received).toEqual([
      {
        method: 'POST',
        path: '/ok',
        contentType: 'application/json',
        body: {
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: 'incoming-token',
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          client_id: 'agent-a',
          client_secret: 's3cr3t',
        },
      },
    ]);
    expect(TOKEN_EXCHANGE_GRANT_TYPE).toBe('urn:ietf:params:oauth:grant-type:token-exchange');
    expect(ACCESS_TOKEN_TYPE).toBe('urn:ietf:params:oauth:token-type:access_token');
    expect(context).toBeInstanceOf(SecurityContext);
    expect(context.principalId).toBe('user-7');
    expect(context.token).toBe('delegated');
    expect(context.metadata).toEqual({ scope: 'a b' });
  });

  it('copies expires_in as it is (a number as its decimal text), so isExpired() raises ValueError', async () => {
    const context = await provider('/ok').authenticate('t');
    expect(context.expiresAt).toBe('3600');
    expect(() => context.isExpired()).toThrow(ValueError);
    const iso = await provider('/ok-iso').authenticate('t');
    expect(iso.expiresAt).toBe('2030-01-01T00:00:00Z');
    expect(iso.isExpired(new Date('2029-01-01T00:00:00Z'))).toBe(false);
  });

  it('normalizeExpiry turns a numeric expires_in into an absolute UTC timestamp', async () => {
    const before = Date.now();
    const context = await provider('/ok', { normalizeExpiry: true }).authenticate('t');
    const expiresAt = Date.parse(context.expiresAt!);
    expect(context.expiresAt).toMatch(/Z$/);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect(context.isExpired()).toBe(false);
    expect((await provider('/ok-iso', { normalizeExpiry: true }).authenticate('t')).expiresAt).toBe(
      '2030-01-01T00:00:00Z',
    );
    expect(await failure(provider('/huge-expiry', { normalizeExpiry: true }).authenticate('t'))).toBe(
      'OAuth delegation failed: token response field "expires_in" is out of range',
    );
  });

  it('defaults: sub unknown, access_token empty, metadata {}, no expiry', async () => {
    const context = await provider('/empty-object').authenticate('t');
    expect(context.toDict()).toMatchObject({
      principal_id: 'unknown',
      token: '',
      metadata: {},
      expires_at: null,
    });
  });

  it('sends optional audience, scope and subject token type when configured', async () => {
    received.length = 0;
    await provider('/ok', {
      audience: 'https://api',
      scope: 'read write',
      subjectTokenType: 'urn:ietf:params:oauth:token-type:jwt',
    }).authenticate('t');
    expect(received[0]!.body).toMatchObject({
      audience: 'https://api',
      scope: 'read write',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    });
  });

  it('401: fails and reports the OAuth error code, never the secret', async () => {
    const message = await failure(provider('/401').authenticate('t'));
    expect(message).toBe('OAuth delegation failed: token endpoint answered HTTP 401 (invalid_grant)');
    expect(message).not.toContain('s3cr3t');
  });

  it('upstream free text is never forwarded: an echoed subject token stays out of the message', async () => {
    const token = 'eyJhbGciOiJIUzI1NiJ9.' + 'S'.repeat(300) + '.sig';
    const message = await failure(provider('/echo').authenticate(token));
    expect(message).toBe('OAuth delegation failed: token endpoint answered HTTP 401 (invalid_grant)');
    expect(message).not.toContain('SSSSSSSS');
    // An `error` that is not an RFC 6749 code token is dropped, not quoted.
    expect(await failure(provider('/echo-code').authenticate(token))).toBe(
      'OAuth delegation failed: token endpoint answered HTTP 400',
    );
  });

  it('through authenticateRequest the 401 message carries no part of the credential', async () => {
    const token = 'eyJhbGciOiJIUzI1NiJ9.' + 'S'.repeat(300) + '.sig';
    const error = await authenticateRequest({
      authenticator: provider('/echo'),
      headers: { authorization: `Bearer ${token}` },
    }).then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect(error!.message.startsWith('OAuth delegation failed: ')).toBe(true);
    expect(error!.message).not.toContain('SSSSSSSS');
    expect(error!.message).not.toContain('eyJhbGciOiJIUzI1NiJ9');
  });

  it('a non-OAuth error body is not echoed', async () => {
    const message = await failure(provider('/403-text').authenticate('t'));
    expect(message).toBe('OAuth delegation failed: token endpoint answered HTTP 403');
  });

  it.each([
    ['/500', 'OAuth delegation failed: token endpoint answered HTTP 500'],
    ['/201', 'OAuth delegation failed: token endpoint answered HTTP 201'],
    ['/missing', 'OAuth delegation failed: token endpoint answered HTTP 404 (not_found)'],
    ['/redirect', 'OAuth delegation failed: token endpoint answered HTTP 307'],
    ['/bad-json', 'OAuth delegation failed: token endpoint answered invalid JSON'],
    ['/array', 'OAuth delegation failed: token response is not a JSON object'],
    ['/bad-sub', 'OAuth delegation failed: token response field "sub" is not a string'],
    ['/bad-token', 'OAuth delegation failed: token response field "access_token" is not a string'],
    ['/bad-metadata', 'OAuth delegation failed: token response field "metadata" is not an object'],
    ['/bad-expiry', 'OAuth delegation failed: token response field "expires_in" is not a number or string'],
  ])('%s → %s', async (path, expected) => {
    expect(await failure(provider(path).authenticate('t'))).toBe(expected);
  });

  it('does not follow redirects (the client secret is never re-sent)', async () => {
    received.length = 0;
    await failure(provider('/redirect').authenticate('t'));
    expect(received.map((r) => r.path)).toEqual(['/redirect']);
  });

  it('a response over maxResponseBytes fails', async () => {
    const message = await failure(provider('/big', { maxResponseBytes: 1024 }).authenticate('t'));
    expect(message).toBe('OAuth delegation failed: token response too large');
  });

  it('connection refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const auth = new OAuth2DelegationAuth({
      exchangeEndpoint: `http://127.0.0.1:${port}/token`,
      clientId: 'c',
      clientSecret: 's',
    });
    expect(await failure(auth.authenticate('t'))).toMatch(/^OAuth delegation failed: ECONNREFUSED/);
  });

  it('timeout: a silent endpoint is abandoned after timeoutMs', async () => {
    const message = await failure(provider('/hang', { timeoutMs: 150 }).authenticate('t'));
    expect(message).toBe('OAuth delegation failed: token endpoint did not answer within 150 ms');
  });

  it('an abort signal ends the exchange', async () => {
    const controller = new AbortController();
    const pending = provider('/hang').authenticate('t', { signal: controller.signal });
    controller.abort();
    expect(await failure(pending)).toBe('OAuth delegation failed: token exchange was aborted');
  });

  it('an invalid endpoint URL fails at authenticate, not at construction', async () => {
    const auth = new OAuth2DelegationAuth({
      exchangeEndpoint: 'not a url',
      clientId: 'c',
      clientSecret: 's',
    });
    await failure(auth.authenticate('t'));
  });

  it('non-string credentials are rejected before any request', async () => {
    received.length = 0;
    await failure(provider('/ok').authenticate(undefined as unknown as string));
    expect(received).toEqual([]);
  });

  it('advertises oauth2 with the exchange endpoint; refreshToken returns the same object', async () => {
    const auth = provider('/ok');
    expect(auth.securityScheme.toDict()).toEqual({
      type: 'oauth2',
      scheme: null,
      description: 'OAuth 2.0 token exchange (RFC 8693)',
      metadata: { exchange_endpoint: `${base}/ok` },
    });
    const context = await auth.authenticate('t');
    expect(await auth.refreshToken(context)).toBe(context);
  });

  it.each([0, -5, Number.NaN])('timeoutMs %p is a ValueError', (timeoutMs) => {
    expect(() => provider('/ok', { timeoutMs })).toThrow(ValueError);
  });
});
