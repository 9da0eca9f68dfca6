// The custom authenticator of the README, kept compiling and working here.
import { UnauthenticatedError } from '@agent/core';
import {
  authenticateRequest,
  Authenticator,
  buildAuthHeaders,
  SecurityContext,
  SecurityScheme,
  toA2ASecuritySchemes,
} from './index.js';

class SessionCookieAuth extends Authenticator {
  private readonly scheme = new SecurityScheme({
    authType: 'apiKey',
    metadata: { in: 'cookie', name: 'sid' },
  });

  constructor(private readonly sessions: Map<string, string>) {
    super();
  }

  get securityScheme(): SecurityScheme {
    return this.scheme;
  }

  async authenticate(credentials: string): Promise<SecurityContext> {
    const user = this.sessions.get(credentials);
    if (!user) throw new UnauthenticatedError('Unknown session');
    return new SecurityContext({ principalId: user, token: credentials });
  }

  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }
}

describe('a custom authenticator (README example)', () => {
  const auth = new SessionCookieAuth(new Map([['s-1', 'alice']]));

  it('accepts and rejects through the server helper', async () => {
    expect(
      (await authenticateRequest({ authenticator: auth, headers: { 'x-api-key': 's-1' } }))?.principalId,
    ).toBe('alice');
    await expect(
      authenticateRequest({ authenticator: auth, headers: { 'x-api-key': 's-2' } }),
    ).rejects.toThrow('Unknown session');
  });

  it('its scheme drives client headers and the A2A card', () => {
    expect(
      buildAuthHeaders(auth.securityScheme, new SecurityContext({ principalId: 'a', token: 's-1' })),
    ).toEqual({
      'X-API-Key': 's-1',
      Authorization: 'ApiKey s-1',
    });
    expect(toA2ASecuritySchemes([auth.securityScheme]).securitySchemes).toEqual({
      apiKey: { apiKeySecurityScheme: { location: 'cookie', name: 'sid' } },
    });
  });
});
