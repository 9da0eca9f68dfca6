import { UnauthenticatedError, ValueError, type ComponentDescriptor, type Describable } from '@agent/core';
import { checkOptionNames, describeComponent, optionNames } from '@agent/core/internal';
import { Authenticator } from './authenticator.js';
import { decodeUtf8 } from './base64url.js';
import { constantTimeEquals } from './constant-time.js';
import { SecurityContext } from './security-context.js';
import { SecurityScheme } from './security-scheme.js';
import { checkTenantLists, tenantMetadata, type TenantLists } from './tenant-lists.js';

export interface BasicAuthOptions {
  /** Username → plaintext password. Stored by reference and not validated: users added later are accepted. */
  validCredentials: Record<string, string>;
  /** Discovery text of the advertised scheme. Default `'HTTP Basic authentication'`. */
  description?: string;
  /**
   * Username → the tenants that user may act for, put in the context's `metadata.tenants`; a user
   * without an entry may act for any tenant. Stored by reference like `validCredentials`. Default none.
   */
  tenants?: TenantLists;
}

const OPTION_NAMES = optionNames<BasicAuthOptions>({
  validCredentials: true,
  description: true,
  tenants: true,
});

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// Compared against when the user is unknown, so both paths do the same constant-time work.
const UNKNOWN_USER_PASSWORD = '\u0000unknown-user\u0000';

/**
 * Decodes a Basic credential: strict base64 (then UTF-8) first, the raw text only when that fails.
 * So, by design, a raw `user:pass` that happens to be valid base64 is read as encoded.
 */
export function decodeBasicCredential(credentials: string): string {
  if (credentials !== '' && STRICT_BASE64.test(credentials)) {
    const text = decodeUtf8(Buffer.from(credentials, 'base64'));
    if (text !== undefined) return text;
  }
  return credentials;
}

/** HTTP Basic: `base64(username:password)` or raw `username:password`, split at the first colon. */
export class BasicAuth extends Authenticator implements Describable {
  readonly validCredentials: Record<string, string>;
  readonly tenants: TenantLists | undefined;
  private readonly description: string | undefined;
  private readonly scheme: SecurityScheme;

  constructor(options: BasicAuthOptions) {
    super();
    const validCredentials = options?.validCredentials;
    if (
      typeof validCredentials !== 'object' ||
      validCredentials === null ||
      Array.isArray(validCredentials)
    ) {
      throw new ValueError('BasicAuth: validCredentials must be an object mapping usernames to passwords');
    }
    checkOptionNames('BasicAuth', options, OPTION_NAMES);
    this.validCredentials = validCredentials;
    this.tenants = checkTenantLists(
      'BasicAuth',
      options.tenants,
      'usernames',
      (user) => `user ${JSON.stringify(user)}`,
    );
    this.description = options.description;
    this.scheme = new SecurityScheme({
      authType: 'http',
      authScheme: 'basic',
      description: options.description ?? 'HTTP Basic authentication',
    });
  }

  get securityScheme(): SecurityScheme {
    return this.scheme;
  }

  async authenticate(credentials: string): Promise<SecurityContext> {
    if (typeof credentials !== 'string') throw new UnauthenticatedError('Invalid basic credentials');
    const decoded = decodeBasicCredential(credentials);
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new UnauthenticatedError('Invalid basic credentials: expected username:password');
    const username = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    // Own properties only: `__proto__` or `toString` as a username must not find Object.prototype.
    const stored = Object.prototype.hasOwnProperty.call(this.validCredentials, username)
      ? this.validCredentials[username]
      : undefined;
    const known = typeof stored === 'string';
    const passwordMatches = constantTimeEquals(known ? stored : UNKNOWN_USER_PASSWORD, password);
    if (!known || !passwordMatches) throw new UnauthenticatedError('Invalid username or password');
    return new SecurityContext({
      principalId: username,
      token: credentials,
      expiresAt: null,
      metadata: tenantMetadata(this.tenants, username),
    });
  }

  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }

  describe(): ComponentDescriptor {
    const options: Record<string, unknown> = { validCredentials: this.validCredentials };
    if (this.description !== undefined) options.description = this.description;
    if (this.tenants !== undefined) options.tenants = this.tenants;
    return describeComponent('@agent/auth', 'BasicAuth', options);
  }
}
