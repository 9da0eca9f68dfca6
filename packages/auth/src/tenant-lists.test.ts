import { UnauthenticatedError, ValueError } from '@agent/core';
import { APIKeyAuth } from './api-key-auth.js';
import { BasicAuth } from './basic-auth.js';
import { BearerTokenAuth } from './bearer-token-auth.js';
import { mintJwt } from './testing/index.js';

const KEY = 'sk-live-1234567890';

describe('APIKeyAuth tenants', () => {
  it("puts the key's tenant list in metadata.tenants, a copy of it", async () => {
    const tenants = { [KEY]: ['acme', 'globex'] };
    const context = await new APIKeyAuth({ validKeys: { [KEY]: [] }, tenants }).authenticate(KEY);
    expect(context.metadata.tenants).toEqual(['acme', 'globex']);
    (context.metadata.tenants as string[]).push('initech');
    expect(tenants[KEY]).toEqual(['acme', 'globex']);
  });

  it('leaves a key without an entry unrestricted', async () => {
    const auth = new APIKeyAuth({ validKeys: { [KEY]: [], other: [] }, tenants: { other: ['acme'] } });
    expect((await auth.authenticate(KEY)).metadata).toEqual({});
  });

  it('reads own entries only: an inherited name restricts nothing and grants nothing', async () => {
    const auth = new APIKeyAuth({ validKeys: { toString: [], __proto__x: [] }, tenants: {} });
    expect((await auth.authenticate('toString')).metadata).toEqual({});
  });

  it('reads an entry changed into something other than a list as "no tenant at all"', async () => {
    const tenants: Record<string, string[]> = { [KEY]: ['acme'] };
    const auth = new APIKeyAuth({ validKeys: { [KEY]: [] }, tenants });
    tenants[KEY] = 'acme' as unknown as string[];
    expect((await auth.authenticate(KEY)).metadata.tenants).toEqual([]);
  });

  it.each([
    ['an array', ['acme']],
    ['null', null],
    ['an entry that is not a list', { [KEY]: 'acme' }],
    ['a list with a number', { [KEY]: ['acme', 7] }],
  ])('refuses %s as tenants with a ValueError that never quotes a key', (_, tenants) => {
    let error: unknown;
    try {
      new APIKeyAuth({ validKeys: { [KEY]: [] }, tenants: tenants as unknown as Record<string, string[]> });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValueError);
    expect((error as Error).message).toMatch(/^APIKeyAuth: tenants/);
    expect((error as Error).message).not.toContain(KEY);
  });

  it('keeps the tenants in describe()', () => {
    const tenants = { [KEY]: ['acme'] };
    expect(new APIKeyAuth({ validKeys: { [KEY]: [] }, tenants }).describe().$component.options).toEqual({
      validKeys: { [KEY]: [] },
      tenants,
    });
  });
});

describe('BasicAuth tenants', () => {
  it("puts the user's tenant list in metadata.tenants; other users are unrestricted", async () => {
    const auth = new BasicAuth({ validCredentials: { alice: 'pw', bob: 'pw' }, tenants: { alice: [''] } });
    expect((await auth.authenticate('alice:pw')).metadata.tenants).toEqual(['']);
    expect((await auth.authenticate('bob:pw')).metadata).toEqual({});
  });

  it('never lets an inherited name find a list', async () => {
    const auth = new BasicAuth({ validCredentials: { constructor: 'pw' }, tenants: {} });
    expect((await auth.authenticate('constructor:pw')).metadata).toEqual({});
  });

  it('refuses a malformed entry naming the user', () => {
    expect(
      () => new BasicAuth({ validCredentials: {}, tenants: { alice: [1] as unknown as string[] } }),
    ).toThrow(new ValueError('BasicAuth: tenants of user "alice" must be an array of strings'));
  });

  it('keeps the tenants in describe()', () => {
    const options = new BasicAuth({ validCredentials: { u: 'p' }, tenants: { u: ['t'] } }).describe()
      .$component.options;
    expect(options).toEqual({ validCredentials: { u: 'p' }, tenants: { u: ['t'] } });
  });
});

describe('BearerTokenAuth tenants claim', () => {
  const auth = new BearerTokenAuth({ secret: 'shh' });
  const token = (claims: Record<string, unknown>): string =>
    mintJwt({ secret: 'shh', claims: { sub: 'u', ...claims } });

  it('puts the tenants claim in metadata.tenants and keeps it out of metadata.claims', async () => {
    const context = await auth.authenticate(token({ tenants: ['acme', ''], team: 'x' }));
    expect(context.metadata.tenants).toEqual(['acme', '']);
    expect(context.metadata.claims).toEqual({ team: 'x' });
  });

  it('leaves a token without one unrestricted', async () => {
    expect((await auth.authenticate(token({}))).metadata.tenants).toBeUndefined();
  });

  it.each([
    ['a string', { tenants: 'acme' }],
    ['a list with a number', { tenants: ['acme', 1] }],
    ['an object', { tenants: { acme: true } }],
    ['null', { tenants: null }],
    ['a malformed metadata.tenants', { metadata: { tenants: 'acme' } }],
  ])('refuses %s as UNAUTHENTICATED', async (_, claims) => {
    const error = await auth.authenticate(token(claims)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect((error as Error).message).toMatch(
      /^Token authentication failed: invalid (metadata\.)?tenants claim$/,
    );
  });
});
