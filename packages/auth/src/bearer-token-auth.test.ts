import { UnauthenticatedError, ValueError } from '@agent/core';
import { BearerTokenAuth, type BearerTokenAuthOptions, type JwtAlgorithm } from './bearer-token-auth.js';
import { SecurityContext } from './security-context.js';
import { mintJwt, signJwtInput } from './testing/index.js';

const SECRET = 'correct horse battery staple';
const NOW = 1_780_000_000; // seconds; the verifier's clock is pinned to it
const b64url = (text: string) => Buffer.from(text).toString('base64url');

function verifier(options: Partial<BearerTokenAuthOptions> = {}): BearerTokenAuth {
  return new BearerTokenAuth({ secret: SECRET, now: () => NOW * 1000, ...options });
}

function token(
  claims: Record<string, unknown> = { sub: 'alice' },
  algorithm: JwtAlgorithm = 'HS256',
  header?: Record<string, unknown>,
): string {
  return mintJwt({ secret: SECRET, algorithm, claims, ...(header ? { header } : {}) });
}

/** Replaces one segment of a valid token. */
function withSegment(jwt: string, index: number, value: string): string {
  const parts = jwt.split('.');
  parts[index] = value;
  return parts.join('.');
}

async function failure(auth: BearerTokenAuth, credential: string): Promise<string> {
  const error = await auth.authenticate(credential).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UnauthenticatedError);
  return (error as Error).message;
}

describe('BearerTokenAuth', () => {
  describe('constructor', () => {
    it.each([
      ['an empty secret', { secret: '' }],
      ['a missing secret', { secret: undefined as unknown as string }],
      ['a non-string secret', { secret: 12345 as unknown as string }],
      ['an unsupported algorithm (RS256)', { algorithm: 'RS256' as JwtAlgorithm }],
      ['an unsupported algorithm (none)', { algorithm: 'none' as JwtAlgorithm }],
      ['a lowercase algorithm', { algorithm: 'hs256' as JwtAlgorithm }],
      ['a negative leeway', { leewaySeconds: -1 }],
      ['a fractional leeway', { leewaySeconds: 1.5 }],
      ['a NaN leeway', { leewaySeconds: Number.NaN }],
      ['a non-string issuer', { issuer: 5 as unknown as string }],
      ['a non-string audience', { audience: ['a'] as unknown as string }],
    ])('throws ValueError for %s', (_name, options) => {
      expect(() => new BearerTokenAuth({ secret: SECRET, ...options })).toThrow(ValueError);
    });

    it('defaults: HS256, no issuer or audience, zero leeway', () => {
      const auth = new BearerTokenAuth({ secret: SECRET });
      expect([auth.algorithm, auth.issuer, auth.audience, auth.leewaySeconds]).toEqual([
        'HS256',
        null,
        null,
        0,
      ]);
    });
  });

  describe('accepted tokens', () => {
    it.each(['HS256', 'HS384', 'HS512'] as const)('verifies %s when configured for it', async (algorithm) => {
      const context = await verifier({ algorithm }).authenticate(token({ sub: 'alice' }, algorithm));
      expect(context.principalId).toBe('alice');
    });

    it('principal from sub, else client_id, else unknown', async () => {
      const auth = verifier();
      expect((await auth.authenticate(token({ sub: 's', client_id: 'c' }))).principalId).toBe('s');
      expect((await auth.authenticate(token({ client_id: 'c' }))).principalId).toBe('c');
      expect((await auth.authenticate(token({ sub: '', client_id: 'c' }))).principalId).toBe('c');
      expect((await auth.authenticate(token({}))).principalId).toBe('unknown');
    });

    it('context: raw token, exp and iat as UTC ISO, metadata claim kept, other claims under metadata.claims', async () => {
      const jwt = token({
        sub: 'alice',
        iss: 'issuer',
        aud: ['a', 'b'],
        exp: NOW + 3600,
        iat: NOW - 60,
        nbf: NOW - 60,
        jti: 'id-1',
        metadata: { tenant: 't1', roles: ['admin'] },
        scope: 'tasks.read tasks.write',
        client_id: 'svc',
      });
      const context = await verifier().authenticate(jwt);
      expect(context).toBeInstanceOf(SecurityContext);
      expect(context.token).toBe(jwt);
      expect(context.expiresAt).toBe(new Date((NOW + 3600) * 1000).toISOString());
      expect(context.issuedAt).toBe(new Date((NOW - 60) * 1000).toISOString());
      expect(context.expiresAt).toMatch(/Z$/);
      expect(context.metadata).toEqual({
        tenant: 't1',
        roles: ['admin'],
        claims: { scope: 'tasks.read tasks.write', client_id: 'svc' },
      });
    });

    it('without exp/iat: no expiry, issuedAt is now; no other claims → no metadata.claims', async () => {
      const context = await verifier().authenticate(token({ sub: 'a' }));
      expect(context.expiresAt).toBeNull();
      expect(Date.parse(context.issuedAt)).not.toBeNaN();
      expect(context.metadata).toEqual({});
    });

    it('a metadata claim that is not an object is kept under claims', async () => {
      const context = await verifier().authenticate(token({ sub: 'a', metadata: 'text' }));
      expect(context.metadata).toEqual({ claims: { metadata: 'text' } });
    });

    it('a "__proto__" claim stays an own data property: nothing is inherited, JSON keeps it', async () => {
      // JSON.parse makes "__proto__" an own key, so mintJwt writes it literally into the payload.
      const claims = JSON.parse(
        '{"sub":"u","__proto__":{"role":"admin"},"metadata":{"__proto__":{"tenant":"evil"},"t":1}}',
      ) as Record<string, unknown>;
      const jwt = token(claims);
      expect(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')).toContain('"__proto__":{"role"');
      const context = await verifier().authenticate(jwt);
      const metadata = context.metadata as Record<string, unknown>;
      const got = metadata.claims as Record<string, unknown>;
      expect(got.role).toBeUndefined();
      expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
      expect(Object.prototype.hasOwnProperty.call(got, '__proto__')).toBe(true);
      expect(Object.keys(got)).toEqual(['__proto__']);
      expect(metadata.tenant).toBeUndefined();
      expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
      expect(JSON.parse(JSON.stringify(context.metadata))).toEqual(
        JSON.parse('{"__proto__":{"tenant":"evil"},"t":1,"claims":{"__proto__":{"role":"admin"}}}'),
      );
      expect(JSON.stringify(got)).toBe('{"__proto__":{"role":"admin"}}');
    });

    it('issuer and audience (string or list) match when configured', async () => {
      const auth = verifier({ issuer: 'https://idp', audience: 'agents' });
      await expect(auth.authenticate(token({ iss: 'https://idp', aud: 'agents' }))).resolves.toBeInstanceOf(
        SecurityContext,
      );
      await expect(
        auth.authenticate(token({ iss: 'https://idp', aud: ['x', 'agents'] })),
      ).resolves.toBeInstanceOf(SecurityContext);
    });

    it('leeway applies to exp, nbf and iat', async () => {
      const auth = verifier({ leewaySeconds: 30 });
      await expect(auth.authenticate(token({ exp: NOW - 29 }))).resolves.toBeInstanceOf(SecurityContext);
      await expect(auth.authenticate(token({ nbf: NOW + 30 }))).resolves.toBeInstanceOf(SecurityContext);
      await expect(auth.authenticate(token({ iat: NOW + 30 }))).resolves.toBeInstanceOf(SecurityContext);
    });

    it('a token expiring one second from now is still valid', async () => {
      await expect(verifier().authenticate(token({ exp: NOW + 1 }))).resolves.toBeInstanceOf(SecurityContext);
    });
  });

  describe('attack table: every case rejected with the "Token authentication failed: " prefix', () => {
    const valid = token({ sub: 'alice', exp: NOW + 600 });
    const [h, p, s] = valid.split('.') as [string, string, string];
    const cases: [string, string, Partial<BearerTokenAuthOptions>?, string?][] = [
      [
        'alg none, no signature',
        mintJwt({ secret: '', algorithm: 'none', claims: { sub: 'alice' } }),
        {},
        'missing signature',
      ],
      [
        'alg none with a signature',
        withSegment(valid, 0, b64url('{"alg":"none","typ":"JWT"}')),
        {},
        'algorithm mismatch',
      ],
      ['alg "None"', token({ sub: 'a' }, 'HS256', { alg: 'None' }), {}, 'algorithm mismatch'],
      ['HS384 token for an HS256 verifier', token({ sub: 'a' }, 'HS384'), {}, 'algorithm mismatch'],
      ['HS512 token for an HS256 verifier', token({ sub: 'a' }, 'HS512'), {}, 'algorithm mismatch'],
      [
        'HS256 token for an HS512 verifier',
        token({ sub: 'a' }, 'HS256'),
        { algorithm: 'HS512' },
        'algorithm mismatch',
      ],
      [
        'RS256 header (key confusion)',
        token({ sub: 'a' }, 'HS256', { alg: 'RS256' }),
        {},
        'algorithm mismatch',
      ],
      ['header without alg', token({ sub: 'a' }, 'HS256', { alg: undefined }), {}, 'algorithm mismatch'],
      [
        'HS256 header, HS384 signature',
        token({ sub: 'a' }, 'HS384', { alg: 'HS256' }),
        {},
        'invalid signature',
      ],
      ['wrong secret', mintJwt({ secret: 'guess', claims: { sub: 'alice' } }), {}, 'invalid signature'],
      [
        'tampered payload (sub changed)',
        withSegment(valid, 1, b64url(JSON.stringify({ sub: 'admin', exp: NOW + 600 }))),
        {},
        'invalid signature',
      ],
      [
        'tampered header (typ changed)',
        withSegment(valid, 0, b64url('{"alg":"HS256","typ":"JOSE"}')),
        {},
        'invalid signature',
      ],
      [
        'tampered signature (one character)',
        withSegment(valid, 2, (s[0] === 'A' ? 'B' : 'A') + s.slice(1)),
        {},
        'invalid signature',
      ],
      ['truncated signature', withSegment(valid, 2, s.slice(0, -3)), {}, 'invalid signature'],
      [
        'signature of another token',
        withSegment(valid, 2, token({ sub: 'bob' }).split('.')[2]!),
        {},
        'invalid signature',
      ],
      [
        'critical header extension',
        token({ sub: 'a' }, 'HS256', { crit: ['exp'] }),
        {},
        'unsupported critical header parameters',
      ],
      ['two segments', `${h}.${p}`, {}, 'malformed token: expected 3 segments, got 2'],
      ['four segments', `${valid}.${s}`, {}, 'malformed token: expected 3 segments, got 4'],
      ['one segment', h, {}, 'malformed token: expected 3 segments, got 1'],
      [
        'invalid base64url in the payload (+ and /)',
        withSegment(valid, 1, `${p.slice(0, -2)}+/`),
        {},
        'malformed token: payload is not base64url',
      ],
      [
        'padding in the header',
        withSegment(valid, 0, `${h}==`),
        {},
        'malformed token: header is not base64url',
      ],
      [
        'whitespace in the signature',
        withSegment(valid, 2, `${s.slice(0, 5)} ${s.slice(5)}`),
        {},
        'malformed token: signature is not base64url',
      ],
      [
        'non-canonical trailing bits',
        withSegment(valid, 0, h.slice(0, -1) + String.fromCharCode(h.charCodeAt(h.length - 1) + 1)),
        {},
        undefined,
      ],
      [
        'non-JSON header',
        signJwtInput(`${b64url('not json')}.${p}`, SECRET),
        {},
        'malformed token: header is not JSON',
      ],
      [
        'non-JSON payload',
        signJwtInput(`${h}.${b64url('{sub: alice}')}`, SECRET),
        {},
        'malformed token: payload is not JSON',
      ],
      [
        'JSON array payload',
        signJwtInput(`${h}.${b64url('["alice"]')}`, SECRET),
        {},
        'malformed token: payload is not a JSON object',
      ],
      [
        'JSON string header',
        signJwtInput(`${b64url('"HS256"')}.${p}`, SECRET),
        {},
        'malformed token: header is not a JSON object',
      ],
      [
        'empty payload segment',
        signJwtInput(`${h}.`, SECRET),
        {},
        'malformed token: payload is not base64url',
      ],
      [
        'payload not UTF-8',
        signJwtInput(`${h}.${Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')}`, SECRET),
        {},
        'malformed token: payload is not UTF-8',
      ],
      ['exp in the past', token({ sub: 'a', exp: NOW - 1 }), {}, 'token has expired'],
      ['exp exactly now', token({ sub: 'a', exp: NOW }), {}, 'token has expired'],
      [
        'exp at the leeway edge',
        token({ sub: 'a', exp: NOW - 30 }),
        { leewaySeconds: 30 },
        'token has expired',
      ],
      ['nbf in the future', token({ sub: 'a', nbf: NOW + 1 }), {}, 'token is not yet valid'],
      [
        'nbf just beyond the leeway',
        token({ sub: 'a', nbf: NOW + 31 }),
        { leewaySeconds: 30 },
        'token is not yet valid',
      ],
      ['iat in the future', token({ sub: 'a', iat: NOW + 1 }), {}, 'token issued in the future'],
      [
        'iat just beyond the leeway',
        token({ sub: 'a', iat: NOW + 31 }),
        { leewaySeconds: 30 },
        'token issued in the future',
      ],
      ['exp as a string', token({ sub: 'a', exp: String(NOW + 600) }), {}, 'invalid exp claim'],
      ['nbf as a string', token({ sub: 'a', nbf: 'yesterday' }), {}, 'invalid nbf claim'],
      ['iat as a string', token({ sub: 'a', iat: '0' }), {}, 'invalid iat claim'],
      ['iat as null', token({ sub: 'a', iat: null }), {}, 'invalid iat claim'],
      [
        'exp beyond any date (1e400 is Infinity)',
        signJwtInput(`${h}.${b64url('{"sub":"a","exp":1e400}')}`, SECRET),
        {},
        'invalid exp claim',
      ],
      ['exp out of the Date range', token({ sub: 'a', exp: 9e15 }), {}, 'invalid exp claim'],
      [
        'issuer mismatch',
        token({ sub: 'a', iss: 'https://evil' }),
        { issuer: 'https://idp' },
        'issuer mismatch',
      ],
      ['issuer missing', token({ sub: 'a' }), { issuer: 'https://idp' }, 'issuer mismatch'],
      [
        'issuer differing only in case',
        token({ sub: 'a', iss: 'https://IDP' }),
        { issuer: 'https://idp' },
        'issuer mismatch',
      ],
      [
        'audience mismatch (string)',
        token({ sub: 'a', aud: 'other' }),
        { audience: 'agents' },
        'audience mismatch',
      ],
      [
        'audience mismatch (list)',
        token({ sub: 'a', aud: ['x', 'y'] }),
        { audience: 'agents' },
        'audience mismatch',
      ],
      ['audience missing', token({ sub: 'a' }), { audience: 'agents' }, 'audience mismatch'],
      ['audience list with a non-string', token({ sub: 'a', aud: ['x', 7] }), {}, 'invalid aud claim'],
      ['sub that is not a string', token({ sub: 42 }), {}, 'invalid sub claim'],
      ['empty token', '', {}, 'empty token'],
      ['just dots', '..', {}, 'missing signature'],
      ['a Bearer prefix left in', `Bearer ${valid}`, {}, undefined],
    ];

    it('has at least 25 cases', () => {
      expect(cases.length).toBeGreaterThanOrEqual(25);
    });

    it.each(cases)('%s', async (_name, credential, options = {}, reason) => {
      const message = await failure(verifier(options), credential);
      expect(message.startsWith('Token authentication failed: ')).toBe(true);
      if (reason !== undefined) expect(message).toBe(`Token authentication failed: ${reason}`);
    });

    it('non-string credentials from plain JavaScript', async () => {
      for (const value of [undefined, null, 42, { sub: 'a' }]) {
        expect(await failure(verifier(), value as unknown as string)).toBe(
          'Token authentication failed: token must be a string',
        );
      }
    });

    it('messages never contain the token', async () => {
      const forged = token({ sub: 'a' }, 'HS384');
      expect(await failure(verifier(), forged)).not.toContain(forged.split('.')[1]!);
    });
  });

  it('advertises http bearer with the three algorithms, issuer and audience', () => {
    expect(verifier({ issuer: 'https://idp', audience: 'agents' }).securityScheme.toDict()).toEqual({
      type: 'http',
      scheme: 'bearer',
      description: 'JWT bearer token (HS256)',
      metadata: {
        algorithms: ['HS256', 'HS384', 'HS512'],
        algorithm: 'HS256',
        issuer: 'https://idp',
        audience: 'agents',
        bearer_format: 'JWT',
      },
    });
    expect(verifier().securityScheme.metadata).toMatchObject({ issuer: null, audience: null });
  });

  it('refreshToken returns the same context object', async () => {
    const auth = verifier();
    const context = await auth.authenticate(token());
    expect(await auth.refreshToken(context)).toBe(context);
  });

  it('uses the real clock by default', async () => {
    const auth = new BearerTokenAuth({ secret: SECRET });
    const nowSeconds = Math.floor(Date.now() / 1000);
    await expect(auth.authenticate(token({ sub: 'a', exp: nowSeconds + 3600 }))).resolves.toBeInstanceOf(
      SecurityContext,
    );
    await expect(auth.authenticate(token({ sub: 'a', exp: nowSeconds - 3600 }))).rejects.toThrow(
      'token has expired',
    );
  });
});
