import { ValueError } from '@agent/core';
import { buildAuthHeaders, buildAuthMetadata } from './auth-headers.js';
import { SecurityContext } from './security-context.js';
import { SecurityScheme, type AuthType } from './security-scheme.js';

const context = new SecurityContext({ principalId: 'p', token: 'TOKEN' });
const scheme = (authType: AuthType, authScheme: string | null = null) =>
  new SecurityScheme({ authType, authScheme });

describe('buildAuthHeaders', () => {
  it.each([
    ['http bearer', scheme('http', 'bearer'), { Authorization: 'Bearer TOKEN' }],
    ['http basic (token unchanged)', scheme('http', 'basic'), { Authorization: 'Basic TOKEN' }],
    ['apiKey (both carriers)', scheme('apiKey'), { 'X-API-Key': 'TOKEN', Authorization: 'ApiKey TOKEN' }],
    ['http digest', scheme('http', 'digest'), { Authorization: 'Digest TOKEN' }],
    ['http hmac', scheme('http', 'hmac'), { Authorization: 'HMAC TOKEN' }],
    ['http negotiate', scheme('http', 'negotiate'), { Authorization: 'Negotiate TOKEN' }],
    ['http ntlm', scheme('http', 'ntlm'), { Authorization: 'NTLM TOKEN' }],
    ['http aws4auth', scheme('http', 'aws4auth'), { Authorization: 'AWS4Auth TOKEN' }],
    ['http hawk', scheme('http', 'hawk'), { Authorization: 'Hawk TOKEN' }],
    ['http edgegrid', scheme('http', 'edgegrid'), { Authorization: 'EdgeGrid TOKEN' }],
    ['oauth2 (delegated token)', scheme('oauth2'), { Authorization: 'Bearer TOKEN' }],
    ['openIdConnect', scheme('openIdConnect'), { Authorization: 'Bearer TOKEN' }],
    ['mutualTLS', scheme('mutualTLS'), { Authorization: 'Bearer TOKEN' }],
  ])('%s', (_name, s, expected) => {
    expect(buildAuthHeaders(s, context)).toEqual(expected);
  });

  it('the raw Basic credential is sent as it is (no re-encoding)', () => {
    const raw = new SecurityContext({ principalId: 'u', token: 'user:pass' });
    expect(buildAuthHeaders(scheme('http', 'basic'), raw)).toEqual({ Authorization: 'Basic user:pass' });
  });

  it('returns a new object each call', () => {
    const s = scheme('apiKey');
    expect(buildAuthHeaders(s, context)).not.toBe(buildAuthHeaders(s, context));
  });

  it.each(['a\r\nX-Injected: 1', 'a\nb', 'nul\u0000', 'emoji \u{1F600}'])(
    'refuses a token that cannot be a header value: %j',
    (token) => {
      const bad = new SecurityContext({ principalId: 'p', token });
      expect(() => buildAuthHeaders(scheme('http', 'bearer'), bad)).toThrow(ValueError);
    },
  );

  it('metadata form has lowercase names for gRPC', () => {
    expect(buildAuthMetadata(scheme('apiKey'), context)).toEqual({
      'x-api-key': 'TOKEN',
      authorization: 'ApiKey TOKEN',
    });
    expect(buildAuthMetadata(scheme('http', 'bearer'), context)).toEqual({ authorization: 'Bearer TOKEN' });
  });
});
