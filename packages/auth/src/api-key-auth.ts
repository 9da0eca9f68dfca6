import { Authenticator } from './authenticator.js';
import { constantTimeEquals } from './constant-time.js';
import { SecurityContext } from './security-context.js';
import { SecurityScheme } from './security-scheme.js';

export interface APIKeyAuthOptions {
  /** Key → scope list. Stored by reference: keys added later are accepted. Scopes are not copied into contexts. */
  validKeys: Record<string, string[]>;
  description?: string;
}

/** Accepts a credential only when it is a key of `validKeys` (compared in constant time). */
export class APIKeyAuth extends Authenticator {
  readonly validKeys: Record<string, string[]>;
  private readonly scheme: SecurityScheme;

  constructor(options: APIKeyAuthOptions) {
    super();
    this.validKeys = options.validKeys;
    this.scheme = new SecurityScheme({ authType: 'apiKey', authScheme: null, description: options.description ?? 'API key authentication' });
  }

  get securityScheme(): SecurityScheme {
    return this.scheme;
  }

  async authenticate(credentials: string): Promise<SecurityContext> {
    // Every own key is compared, so the time taken does not reveal which key came close.
    let matched: string | undefined;
    for (const key of Object.keys(this.validKeys)) {
      if (constantTimeEquals(key, credentials)) matched = key;
    }
    if (matched === undefined || typeof credentials !== 'string' || credentials === '') throw new Error('Invalid API key');
    return new SecurityContext({ principalId: `api-key-${matched.slice(0, 8)}`, token: matched, expiresAt: null });
  }

  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }
}
