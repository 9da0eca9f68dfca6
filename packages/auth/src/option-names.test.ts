import { ValueError } from '@agent/core';
import {
  APIKeyAuth,
  BasicAuth,
  BearerTokenAuth,
  OAuth2DelegationAuth,
  SecurityContext,
  SecurityScheme,
} from './index.js';
import { mintJwt } from './testing/index.js';

describe('the providers refuse unknown option names', () => {
  it('APIKeyAuth', () => {
    expect(() => new APIKeyAuth({ validKeys: {}, keys: {} } as never)).toThrow(
      'APIKeyAuth does not accept the option "keys"; accepted: description, principals, tenants, validKeys',
    );
  });
  it('BasicAuth', () => {
    expect(() => new BasicAuth({ validCredentials: {}, users: {} } as never)).toThrow(
      'BasicAuth does not accept the option "users"; accepted: description, tenants, validCredentials',
    );
  });
  it('BearerTokenAuth', () => {
    expect(() => new BearerTokenAuth({ secret: 's', leeway: 5 } as never)).toThrow(
      'BearerTokenAuth does not accept the option "leeway"; accepted: algorithm, audience, description, issuer, leewaySeconds, now, secret',
    );
  });
  it('OAuth2DelegationAuth', () => {
    const options = { exchangeEndpoint: 'http://127.0.0.1:1/token', clientId: 'c', clientSecret: 's' };
    expect(() => new OAuth2DelegationAuth({ ...options, timeout: 5, tokenUrl: 'x' } as never)).toThrow(
      expect.objectContaining({
        code: 'VALUE_ERROR',
        message: expect.stringContaining(
          'OAuth2DelegationAuth does not accept the options "timeout", "tokenUrl"; accepted: audience, clientId, clientSecret, description, exchangeEndpoint, maxResponseBytes, normalizeExpiry, outboundLimit, scope, subjectTokenType, timeoutMs',
        ),
      }),
    );
    expect(() => new OAuth2DelegationAuth({ ...options, timeoutMs: 5 })).not.toThrow();
  });
  it('SecurityContext, SecurityScheme and mintJwt', () => {
    expect(() => new SecurityContext({ principalId: 'p', token: 't', expires: null } as never)).toThrow(
      'SecurityContext does not accept the option "expires"; accepted: expiresAt, issuedAt, metadata, principalId, token',
    );
    expect(() => new SecurityScheme({ authType: 'http', scheme: 'bearer' } as never)).toThrow(
      'SecurityScheme does not accept the option "scheme"; accepted: authScheme, authType, description, metadata',
    );
    expect(() => mintJwt({ secret: 's', payload: {} } as never)).toThrow(
      'mintJwt does not accept the option "payload"; accepted: algorithm, claims, header, secret',
    );
  });
  it('every accepted option still constructs, and a described provider rebuilds', () => {
    const bearer = new BearerTokenAuth({
      secret: 's',
      algorithm: 'HS384',
      issuer: 'i',
      audience: 'a',
      leewaySeconds: 1,
      description: 'd',
      now: () => 0,
    });
    const rebuilt = new BearerTokenAuth(bearer.describe().$component.options as never);
    expect(rebuilt.describe()).toEqual(bearer.describe());
    expect(new APIKeyAuth({ validKeys: {}, description: 'd' })).toBeInstanceOf(APIKeyAuth);
    expect(() => new BasicAuth({ validCredentials: {}, description: 'd' })).not.toThrow(ValueError);
  });
});
