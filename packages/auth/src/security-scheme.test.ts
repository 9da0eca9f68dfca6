import { ValueError } from '@agent/core';
import { AUTH_TYPES, HTTP_AUTH_SCHEMES, SecurityScheme, type AuthType } from './security-scheme.js';

describe('SecurityScheme', () => {
  it.each(['apiKey', 'oauth2', 'mutualTLS', 'openIdConnect'] as const)(
    '%s takes no HTTP scheme',
    (authType) => {
      const scheme = new SecurityScheme({ authType });
      expect(scheme.authType).toBe(authType);
      expect(scheme.authScheme).toBeNull();
      expect(() => new SecurityScheme({ authType, authScheme: 'bearer' })).toThrow(ValueError);
    },
  );

  it('accepts exactly the five auth types', () => {
    expect([...AUTH_TYPES]).toEqual(['apiKey', 'http', 'oauth2', 'mutualTLS', 'openIdConnect']);
    for (const bad of ['apikey', 'HTTP', 'basic', '', 'mtls']) {
      expect(() => new SecurityScheme({ authType: bad as AuthType, authScheme: 'bearer' })).toThrow(
        ValueError,
      );
    }
  });

  it.each([...HTTP_AUTH_SCHEMES])('http accepts %s (case-insensitively, stored lowercase)', (name) => {
    expect(new SecurityScheme({ authType: 'http', authScheme: name }).authScheme).toBe(name);
    expect(new SecurityScheme({ authType: 'http', authScheme: name.toUpperCase() }).authScheme).toBe(name);
  });

  it('lists the nine supported HTTP schemes', () => {
    expect([...HTTP_AUTH_SCHEMES].sort()).toEqual(
      ['aws4auth', 'basic', 'bearer', 'digest', 'edgegrid', 'hawk', 'hmac', 'negotiate', 'ntlm'].sort(),
    );
  });

  it('http requires a known scheme', () => {
    expect(() => new SecurityScheme({ authType: 'http' })).toThrow(ValueError);
    expect(() => new SecurityScheme({ authType: 'http', authScheme: null })).toThrow(ValueError);
    expect(() => new SecurityScheme({ authType: 'http', authScheme: 'token' })).toThrow(ValueError);
    expect(() => new SecurityScheme({ authType: 'http', authScheme: 42 as unknown as string })).toThrow(
      ValueError,
    );
  });

  it('rejects a non-string description and non-object metadata', () => {
    expect(() => new SecurityScheme({ authType: 'apiKey', description: 5 as unknown as string })).toThrow(
      ValueError,
    );
    expect(
      () => new SecurityScheme({ authType: 'apiKey', metadata: [] as unknown as Record<string, unknown> }),
    ).toThrow(ValueError);
    expect(
      () => new SecurityScheme({ authType: 'apiKey', metadata: null as unknown as Record<string, unknown> }),
    ).toThrow(ValueError);
  });

  it('defaults: empty description, a fresh empty metadata object', () => {
    const a = new SecurityScheme({ authType: 'apiKey' });
    const b = new SecurityScheme({ authType: 'apiKey' });
    expect(a.description).toBe('');
    expect(a.metadata).toEqual({});
    expect(a.metadata).not.toBe(b.metadata);
  });

  it('toDict gives {type, scheme, description, metadata} with metadata shared, not copied', () => {
    const metadata = { issuer: 'me' };
    const scheme = new SecurityScheme({
      authType: 'http',
      authScheme: 'Bearer',
      description: 'JWT',
      metadata,
    });
    const dict = scheme.toDict();
    expect(dict).toEqual({ type: 'http', scheme: 'bearer', description: 'JWT', metadata: { issuer: 'me' } });
    expect(Object.keys(dict)).toEqual(['type', 'scheme', 'description', 'metadata']);
    expect(dict.metadata).toBe(metadata);
    expect(new SecurityScheme({ authType: 'mutualTLS' }).toDict().scheme).toBeNull();
  });
});
