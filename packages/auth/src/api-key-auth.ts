import { UnauthenticatedError, ValueError, type ComponentDescriptor, type Describable } from '@agent/core';
import { checkOptionNames, describeComponent, optionNames } from '@agent/core/internal';
import { Authenticator } from './authenticator.js';
import { constantTimeEquals } from './constant-time.js';
import { SecurityContext } from './security-context.js';
import { SecurityScheme } from './security-scheme.js';
import { checkTenantLists, tenantMetadata, type TenantLists } from './tenant-lists.js';

export interface APIKeyAuthOptions {
  /** Key → scope list. Stored by reference: keys added later are accepted. Scopes are not copied into contexts. */
  validKeys: Record<string, string[]>;
  /** Discovery text of the advertised scheme. Default `'API key authentication'`. */
  description?: string;
  /**
   * Key → the tenants it may act for, put in the context's `metadata.tenants`; a key without an
   * entry may act for any tenant. Stored by reference like `validKeys`. Default none.
   */
  tenants?: TenantLists;
  /**
   * Key → the principal it authenticates as. A key without an entry is `api-key-` + its first 8
   * characters, so keys sharing those (a common `sk-live-` prefix) are one principal and share their
   * tasks; name their principals here to keep them apart. Stored by reference like `validKeys`.
   */
  principals?: Record<string, string>;
}

const OPTION_NAMES = optionNames<APIKeyAuthOptions>({
  validKeys: true,
  description: true,
  tenants: true,
  principals: true,
});

/** Accepts a credential only when it is an own key of `validKeys` (compared in constant time). */
export class APIKeyAuth extends Authenticator implements Describable {
  readonly validKeys: Record<string, string[]>;
  readonly tenants: TenantLists | undefined;
  readonly principals: Record<string, string> | undefined;
  private readonly scheme: SecurityScheme;
  private readonly description: string | undefined;

  constructor(options: APIKeyAuthOptions) {
    super();
    if (
      typeof options?.validKeys !== 'object' ||
      options.validKeys === null ||
      Array.isArray(options.validKeys)
    ) {
      throw new ValueError('APIKeyAuth: validKeys must be an object mapping keys to scope lists');
    }
    checkOptionNames('APIKeyAuth', options, OPTION_NAMES);
    this.validKeys = options.validKeys;
    this.tenants = checkTenantLists('APIKeyAuth', options.tenants, 'keys', () => 'a key');
    this.principals = checkPrincipals(options.principals);
    this.description = options.description;
    this.scheme = new SecurityScheme({
      authType: 'apiKey',
      authScheme: null,
      description: options.description ?? 'API key authentication',
    });
  }

  get securityScheme(): SecurityScheme {
    return this.scheme;
  }

  async authenticate(credentials: string): Promise<SecurityContext> {
    if (typeof credentials !== 'string' || credentials === '')
      throw new UnauthenticatedError('Invalid API key');
    // Every own key is compared, so the time taken does not reveal which key came close; inherited
    // names (`__proto__`, `toString`) are never keys.
    let matched: string | undefined;
    for (const key of Object.keys(this.validKeys)) {
      if (constantTimeEquals(key, credentials)) matched = key;
    }
    if (matched === undefined) throw new UnauthenticatedError('Invalid API key');
    return new SecurityContext({
      principalId: principalOf(this.principals, matched),
      token: matched,
      expiresAt: null,
      metadata: tenantMetadata(this.tenants, matched),
    });
  }

  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }

  describe(): ComponentDescriptor {
    const options: APIKeyAuthOptions = { validKeys: this.validKeys };
    if (this.description !== undefined) options.description = this.description;
    if (this.tenants !== undefined) options.tenants = this.tenants;
    if (this.principals !== undefined) options.principals = this.principals;
    return describeComponent('@agent/auth', 'APIKeyAuth', { ...options });
  }
}

function checkPrincipals(principals: unknown): Record<string, string> | undefined {
  if (principals === undefined) return undefined;
  if (typeof principals !== 'object' || principals === null || Array.isArray(principals)) {
    throw new ValueError('APIKeyAuth: principals must be an object mapping keys to principal ids');
  }
  for (const value of Object.values(principals)) {
    // The key is a secret and is never quoted.
    if (typeof value !== 'string' || value === '') {
      throw new ValueError('APIKeyAuth: the principal of a key must be a non-empty string');
    }
  }
  return principals as Record<string, string>;
}

/** The key's named principal (own entries only), else `api-key-` + its first 8 characters. */
function principalOf(principals: Record<string, string> | undefined, key: string): string {
  const named =
    principals && Object.prototype.hasOwnProperty.call(principals, key) ? principals[key] : undefined;
  return typeof named === 'string' && named !== '' ? named : `api-key-${key.slice(0, 8)}`;
}
