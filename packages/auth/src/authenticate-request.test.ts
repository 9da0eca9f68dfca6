import { UnauthenticatedError } from '@agent/core';
import { APIKeyAuth } from './api-key-auth.js';
import { authenticateRequest, isPublicPath, PUBLIC_PATHS } from './authenticate-request.js';
import { Authenticator } from './authenticator.js';
import { SecurityContext } from './security-context.js';
import { SecurityScheme } from './security-scheme.js';

class Recording extends Authenticator {
  readonly seen: string[] = [];
  constructor(private readonly outcome: (credentials: string) => Promise<SecurityContext>) {
    super();
  }
  get securityScheme(): SecurityScheme {
    return new SecurityScheme({ authType: 'apiKey' });
  }
  async authenticate(credentials: string): Promise<SecurityContext> {
    this.seen.push(credentials);
    return this.outcome(credentials);
  }
  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }
}

const accept = () => new Recording(async (c) => new SecurityContext({ principalId: `user:${c}`, token: c }));

async function rejection(promise: Promise<unknown>): Promise<UnauthenticatedError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UnauthenticatedError);
  return error as UnauthenticatedError;
}

describe('authenticateRequest', () => {
  it('passes the extracted, prefix-stripped credential and resolves with the context', async () => {
    const auth = accept();
    const context = await authenticateRequest({
      authenticator: auth,
      headers: { authorization: 'Bearer tok' },
      path: '/tasks/',
    });
    expect(auth.seen).toEqual(['tok']);
    expect(context?.principalId).toBe('user:tok');
  });

  it('reads query parameters too', async () => {
    const auth = accept();
    await authenticateRequest({ authenticator: auth, headers: {}, query: new URLSearchParams('api_key=q') });
    expect(auth.seen).toEqual(['q']);
  });

  it.each(['/.well-known/agent-card.json', '/healthz', '/readyz', '/healthz/', '/readyz?probe=1'])(
    'public path %s skips authentication entirely',
    async (path) => {
      const auth = accept();
      await expect(authenticateRequest({ authenticator: auth, headers: {}, path })).resolves.toBeUndefined();
      expect(auth.seen).toEqual([]);
      expect(isPublicPath(path)).toBe(true);
    },
  );

  it.each([
    '/.well-known/agent.json',
    '/tasks/',
    '/tasks/cancel',
    '/healthz/x',
    '/status',
    '/HEALTHZ',
    '/readyz.json',
  ])('%s is not public', async (path) => {
    expect(isPublicPath(path)).toBe(false);
    const error = await rejection(authenticateRequest({ authenticator: accept(), headers: {}, path }));
    expect(error.message).toBe('Missing credentials');
  });

  it('lists exactly the three public paths', () => {
    expect([...PUBLIC_PATHS].sort()).toEqual(['/.well-known/agent-card.json', '/healthz', '/readyz']);
  });

  it('without an authenticator nothing is checked', async () => {
    await expect(authenticateRequest({ authenticator: null, headers: {} })).resolves.toBeUndefined();
    await expect(authenticateRequest({ headers: {} })).resolves.toBeUndefined();
  });

  it('missing or empty credentials → UnauthenticatedError (401) without calling the authenticator', async () => {
    const auth = accept();
    for (const headers of [{}, { authorization: 'Bearer' }, { authorization: '  ' }, { 'x-api-key': '' }]) {
      const error = await rejection(authenticateRequest({ authenticator: auth, headers }));
      expect(error.code).toBe('UNAUTHENTICATED');
      expect(error.httpStatus).toBe(401);
    }
    expect(auth.seen).toEqual([]);
  });

  it('any error the authenticator raises is a rejection that keeps its message and cause', async () => {
    const cause = new RangeError('quota exhausted');
    const auth = new Recording(async () => {
      throw cause;
    });
    const error = await rejection(
      authenticateRequest({ authenticator: auth, headers: { 'x-api-key': 'k' } }),
    );
    expect(error.message).toBe('quota exhausted');
    expect(error.cause).toBe(cause);
  });

  it('never echoes the credential in the message', async () => {
    const auth = new Recording(async (c) => {
      throw new Error(`unknown key ${c}`);
    });
    const error = await rejection(
      authenticateRequest({ authenticator: auth, headers: { 'x-api-key': 'sk-very-secret' } }),
    );
    expect(error.message).not.toContain('sk-very-secret');
    expect(error.message).toBe('Invalid credentials');
  });

  it('never echoes any 8-character run of the credential (a truncated echo is hidden too)', async () => {
    const credential = 'eyJhbGciOiJIUzI1NiJ9.' + 'S'.repeat(40) + '.sig-tail-xyz';
    for (const echo of [credential.slice(0, 30), credential.slice(5, 13), credential.slice(-9)]) {
      const auth = new Recording(async () => {
        throw new Error(`upstream said (invalid_grant: subject_token ${echo}…)`);
      });
      const error = await rejection(
        authenticateRequest({ authenticator: auth, headers: { authorization: `Bearer ${credential}` } }),
      );
      expect(error.message).toBe('Invalid credentials');
    }
  });

  it('keeps a message that shares fewer than 8 characters in a row with the credential', async () => {
    const auth = new Recording(async () => {
      throw new Error('token sk-live has expired');
    });
    const error = await rejection(
      authenticateRequest({ authenticator: auth, headers: { 'x-api-key': 'sk-live-0123456789' } }),
    );
    expect(error.message).toBe('token sk-live has expired');
  });

  it('a non-Error throw is a rejection too', async () => {
    const auth = new Recording(() => Promise.reject('plain string'));
    const error = await rejection(
      authenticateRequest({ authenticator: auth, headers: { 'x-api-key': 'k' } }),
    );
    expect(error.message).toBe('Invalid credentials');
  });

  it('fails closed when a custom authenticator resolves with no context', async () => {
    const auth = new Recording(async () => undefined as unknown as SecurityContext);
    await rejection(authenticateRequest({ authenticator: auth, headers: { 'x-api-key': 'k' } }));
  });

  it('works end to end with APIKeyAuth', async () => {
    const auth = new APIKeyAuth({ validKeys: { 'key-1234567890': ['read'] } });
    const ok = await authenticateRequest({
      authenticator: auth,
      headers: { authorization: 'ApiKey key-1234567890' },
    });
    expect(ok?.principalId).toBe('api-key-key-1234');
    const error = await rejection(
      authenticateRequest({ authenticator: auth, headers: { 'x-api-key': 'nope' } }),
    );
    expect(error.message).toBe('Invalid API key');
  });
});
