import { ValueError, type JsonObject, type SecuritySchemeDict } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';

export const AUTH_TYPES = ['apiKey', 'http', 'oauth2', 'mutualTLS', 'openIdConnect'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

/** HTTP schemes accepted for `authType: 'http'`. */
export const HTTP_AUTH_SCHEMES = [
  'bearer',
  'basic',
  'digest',
  'hmac',
  'negotiate',
  'ntlm',
  'aws4auth',
  'hawk',
  'edgegrid',
] as const;
export type HttpAuthScheme = (typeof HTTP_AUTH_SCHEMES)[number];

export interface SecuritySchemeInit {
  authType: AuthType;
  /** Required when authType is `http`; must be null/absent otherwise. Case-insensitive. */
  authScheme?: string | null;
  description?: string;
  /** Scheme extensions; default `{}`. */
  metadata?: JsonObject;
}

const INIT_NAMES = optionNames<SecuritySchemeInit>({
  authType: true,
  authScheme: true,
  description: true,
  metadata: true,
});

/** The canonical spelling of each HTTP scheme on the wire (`Authorization: <Name> …`, A2A `scheme`). */
export const HTTP_SCHEME_NAMES: Readonly<Record<HttpAuthScheme, string>> = {
  bearer: 'Bearer',
  basic: 'Basic',
  digest: 'Digest',
  hmac: 'HMAC',
  negotiate: 'Negotiate',
  ntlm: 'NTLM',
  aws4auth: 'AWS4Auth',
  hawk: 'Hawk',
  edgegrid: 'EdgeGrid',
};

/** How an authenticator advertises itself in discovery metadata. */
export class SecurityScheme {
  readonly authType: AuthType;
  readonly authScheme: HttpAuthScheme | null;
  readonly description: string;
  readonly metadata: JsonObject;

  constructor(init: SecuritySchemeInit) {
    checkOptionNames('SecurityScheme', init, INIT_NAMES);
    if (!AUTH_TYPES.includes(init.authType)) {
      throw new ValueError(
        `Unsupported auth type: ${String(init.authType)} (expected one of ${AUTH_TYPES.join(', ')})`,
      );
    }
    if (init.authScheme != null && typeof init.authScheme !== 'string') {
      throw new ValueError(`authScheme must be a string or null, got ${typeof init.authScheme}`);
    }
    if (init.description !== undefined && typeof init.description !== 'string') {
      throw new ValueError('description must be a string');
    }
    if (
      init.metadata !== undefined &&
      (typeof init.metadata !== 'object' || init.metadata === null || Array.isArray(init.metadata))
    ) {
      throw new ValueError('metadata must be a plain object');
    }
    const scheme = init.authScheme == null ? null : init.authScheme.toLowerCase();
    if (init.authType === 'http') {
      if (scheme === null) throw new ValueError('authScheme is required when authType is "http"');
      if (!(HTTP_AUTH_SCHEMES as readonly string[]).includes(scheme)) {
        throw new ValueError(
          `Unsupported HTTP auth scheme: ${init.authScheme} (expected one of ${HTTP_AUTH_SCHEMES.join(', ')})`,
        );
      }
    } else if (scheme !== null) {
      throw new ValueError(`authScheme must be null when authType is "${init.authType}"`);
    }
    this.authType = init.authType;
    this.authScheme = scheme as HttpAuthScheme | null;
    this.description = init.description ?? '';
    this.metadata = init.metadata ?? {};
  }

  /** `{type, scheme, description, metadata}`; the metadata object is shared, not copied. */
  toDict(): SecuritySchemeDict {
    return {
      type: this.authType,
      scheme: this.authScheme,
      description: this.description,
      metadata: this.metadata,
    };
  }
}
