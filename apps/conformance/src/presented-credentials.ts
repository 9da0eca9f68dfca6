import assert from 'node:assert/strict';
import { Authenticator, SecurityContext, SecurityScheme } from '@agent/auth';
import type { CaseContext } from './context.js';

export type CredentialKind = 'apikey' | 'bearer' | 'basic';

/**
 * Client-side authenticator for a credential the caller already holds (a key, a minted JWT, a
 * user:password pair): the client cannot verify it (it has no server secret), it only presents it
 * with the right header scheme. The server decides.
 */
export class PresentedCredentials extends Authenticator {
  private readonly scheme: SecurityScheme;

  constructor(readonly kind: CredentialKind) {
    super();
    this.scheme =
      kind === 'apikey'
        ? new SecurityScheme({ authType: 'apiKey', description: 'API key' })
        : new SecurityScheme({ authType: 'http', authScheme: kind, description: kind });
  }

  get securityScheme(): SecurityScheme {
    return this.scheme;
  }

  async authenticate(credentials: string): Promise<SecurityContext> {
    return new SecurityContext({ principalId: 'conformance-client', token: credentials });
  }

  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }
}

/** The raw credential a header carries: Basic `user:pass` becomes its base64 form. */
export function presentedToken(kind: CredentialKind, value: string): string {
  return kind === 'basic' && value.includes(':') ? Buffer.from(value, 'utf8').toString('base64') : value;
}

export function authorizationHeader(kind: CredentialKind, token: string): string {
  return kind === 'apikey' ? `ApiKey ${token}` : kind === 'bearer' ? `Bearer ${token}` : `Basic ${token}`;
}

/** Whom a raw request of a case acts as: the suite's principal, the second one, or nobody. */
export type Caller = 'self' | 'other' | 'anonymous';

/** The authorization header a raw request carries as `as`; a case acting as `other` needs one. */
export function credentialHeaders(ctx: CaseContext, as: Caller): Record<string, string> {
  if (as === 'anonymous') return {};
  const auth = as === 'other' ? ctx.otherAuth : ctx.auth;
  if (as === 'other') assert.ok(auth, 'this case needs a second principal');
  return auth ? { authorization: authorizationHeader(auth.kind, auth.token) } : {};
}
