import { UnauthenticatedError, ValueError } from '@agent/core';
import { APIKeyAuth } from './api-key-auth.js';
import { SecurityContext } from './security-context.js';

describe('APIKeyAuth', () => {
  const validKeys = { 'sk-live-1234567890': ['tasks.read'], short: [] as string[] };

  it('accepts a listed key: principal api-key-<first 8>, token the whole key, no expiry, scopes not copied', async () => {
    const context = await new APIKeyAuth({ validKeys }).authenticate('sk-live-1234567890');
    expect(context).toBeInstanceOf(SecurityContext);
    expect(context.principalId).toBe('api-key-sk-live-');
    expect(context.token).toBe('sk-live-1234567890');
    expect(context.expiresAt).toBeNull();
    expect(context.metadata).toEqual({});
    expect(JSON.stringify(context.toDict())).not.toContain('tasks.read');
    expect((await new APIKeyAuth({ validKeys }).authenticate('short')).principalId).toBe('api-key-short');
  });

  it('names the principal of a key from principals, so keys sharing a prefix stay apart', async () => {
    const keys = { 'sk-live-aaaa1111': [], 'sk-live-bbbb2222': [], 'sk-live-cccc3333': [] };
    const auth = new APIKeyAuth({
      validKeys: keys,
      principals: { 'sk-live-aaaa1111': 'alice', 'sk-live-bbbb2222': 'bob', toString: 'nobody' },
    });
    expect((await auth.authenticate('sk-live-aaaa1111')).principalId).toBe('alice');
    expect((await auth.authenticate('sk-live-bbbb2222')).principalId).toBe('bob');
    // Without an entry: the default name, shared by every key with these first 8 characters.
    expect((await auth.authenticate('sk-live-cccc3333')).principalId).toBe('api-key-sk-live-');
    expect(auth.describe().$component.options).toMatchObject({ principals: { 'sk-live-aaaa1111': 'alice' } });
  });

  it('refuses principals that are not a map of non-empty strings, without quoting a key', () => {
    for (const principals of [[], 'alice', { 'sk-secret-key': '' }, { 'sk-secret-key': 7 }]) {
      const error = (() => {
        try {
          new APIKeyAuth({ validKeys, principals: principals as unknown as Record<string, string> });
        } catch (e) {
          return e as Error;
        }
        throw new Error('expected a ValueError');
      })();
      expect(error).toBeInstanceOf(ValueError);
      expect(error.message).not.toContain('sk-secret');
    }
  });

  it.each([
    ['an unknown key', 'sk-live-123456789'],
    ['a longer key', 'sk-live-12345678900'],
    ['a different case', 'SHORT'],
    ['the empty string', ''],
    ['an inherited name: __proto__', '__proto__'],
    ['an inherited name: toString', 'toString'],
    ['an inherited name: constructor', 'constructor'],
    ['an inherited name: hasOwnProperty', 'hasOwnProperty'],
    ['a scope instead of a key', 'tasks.read'],
  ])('rejects %s with exactly "Invalid API key"', async (_name, key) => {
    const error = await new APIKeyAuth({ validKeys }).authenticate(key).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect((error as Error).message).toBe('Invalid API key');
  });

  it('rejects non-string credentials from plain JavaScript the same way', async () => {
    const auth = new APIKeyAuth({ validKeys });
    for (const value of [undefined, null, 42, {}, ['short']]) {
      await expect(auth.authenticate(value as unknown as string)).rejects.toThrow('Invalid API key');
    }
  });

  it('stores the key map by reference: keys added or removed later count', async () => {
    const keys: Record<string, string[]> = {};
    const auth = new APIKeyAuth({ validKeys: keys });
    await expect(auth.authenticate('late-key')).rejects.toThrow('Invalid API key');
    keys['late-key'] = [];
    await expect(auth.authenticate('late-key')).resolves.toBeInstanceOf(SecurityContext);
    delete keys['late-key'];
    await expect(auth.authenticate('late-key')).rejects.toThrow('Invalid API key');
    expect(auth.validKeys).toBe(keys);
  });

  it('a __proto__ key parsed from JSON config is an own key and does match (and only it)', async () => {
    const keys = JSON.parse('{"__proto__": ["x"]}') as Record<string, string[]>;
    const auth = new APIKeyAuth({ validKeys: keys });
    await expect(auth.authenticate('__proto__')).resolves.toBeInstanceOf(SecurityContext);
    await expect(auth.authenticate('toString')).rejects.toThrow('Invalid API key');
  });

  it('advertises apiKey with no HTTP scheme and empty metadata', () => {
    const auth = new APIKeyAuth({ validKeys });
    expect(auth.securityScheme.toDict()).toEqual({
      type: 'apiKey',
      scheme: null,
      description: 'API key authentication',
      metadata: {},
    });
    expect(new APIKeyAuth({ validKeys, description: 'Keys' }).securityScheme.description).toBe('Keys');
  });

  it('refreshToken returns the same context object', async () => {
    const auth = new APIKeyAuth({ validKeys });
    const context = await auth.authenticate('short');
    expect(await auth.refreshToken(context)).toBe(context);
  });

  it('a missing or non-object key map is a ValueError', () => {
    for (const bad of [undefined, null, 'k', ['k']]) {
      expect(() => new APIKeyAuth({ validKeys: bad as unknown as Record<string, string[]> })).toThrow(
        ValueError,
      );
    }
  });
});
