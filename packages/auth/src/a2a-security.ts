import { type SecuritySchemeDict } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { setOwnProperty } from './own-property.js';
import { HTTP_SCHEME_NAMES, SecurityScheme, type HttpAuthScheme } from './security-scheme.js';

/** A2A 1.0 `SecurityScheme` in canonical ProtoJSON: exactly one wrapper key per scheme. */
export type A2ASecurityScheme =
  | { apiKeySecurityScheme: { location: 'header' | 'query' | 'cookie'; name: string; description?: string } }
  | { httpAuthSecurityScheme: { scheme: string; bearerFormat?: string; description?: string } }
  | {
      oauth2SecurityScheme: {
        flows: Record<string, unknown>;
        oauth2MetadataUrl?: string;
        description?: string;
      };
    }
  | { openIdConnectSecurityScheme: { openIdConnectUrl: string; description?: string } }
  | { mtlsSecurityScheme: { description?: string } };

/** One alternative: every scheme named in it must be satisfied (AND); alternatives are OR-ed. */
export interface A2ASecurityRequirement {
  schemes: Record<string, { list: string[] }>;
}

export interface A2ASecurityDeclaration {
  securitySchemes: Record<string, A2ASecurityScheme>;
  securityRequirements: A2ASecurityRequirement[];
}

/** A native scheme (instance or `toDict()` form) or an already canonical A2A scheme. */
export type SecuritySchemeSource = SecurityScheme | SecuritySchemeDict | A2ASecurityScheme;

export interface ToA2ASecurityOptions {
  /**
   * `false` (default): each scheme is its own alternative, any one suffices.
   * `true`: one requirement naming every scheme, all must be satisfied.
   */
  requireAll?: boolean;
}

const WRAPPERS: Record<string, string> = {
  apiKeySecurityScheme: 'apiKey',
  httpAuthSecurityScheme: 'http',
  oauth2SecurityScheme: 'oauth2',
  openIdConnectSecurityScheme: 'openIdConnect',
  mtlsSecurityScheme: 'mutualTLS',
};
const OAUTH_FLOWS = new Set(['authorizationCode', 'clientCredentials', 'deviceCode', 'implicit', 'password']);
const API_KEY_LOCATIONS = new Set(['header', 'query', 'cookie']);

/**
 * Translates native schemes into A2A 1.0 `securitySchemes` + `securityRequirements` for the public
 * card (`/.well-known/agent-card.json`). Accepts a record (the native card's `securitySchemes`: names
 * are kept), a list or a single SecurityScheme (named by auth type, like the native card, with `_2`,
 * `_3`… on repeats). Schemes A2A cannot express (http without a scheme, openIdConnect without a
 * URL, oauth2 without flows or exchange endpoint, unknown types) are left out, never emitted broken.
 */
export function toA2ASecuritySchemes(
  schemes:
    | SecurityScheme
    | readonly SecuritySchemeSource[]
    | Readonly<Record<string, SecuritySchemeSource>>
    | null
    | undefined,
  options: ToA2ASecurityOptions = {},
): A2ASecurityDeclaration {
  const entries: [string | undefined, SecuritySchemeSource][] =
    schemes == null
      ? []
      : schemes instanceof SecurityScheme
        ? [[undefined, schemes]]
        : Array.isArray(schemes)
          ? (schemes as readonly SecuritySchemeSource[]).map((scheme) => [undefined, scheme])
          : Object.entries(schemes as Readonly<Record<string, SecuritySchemeSource>>);

  const securitySchemes: Record<string, A2ASecurityScheme> = {};
  const scopes: Record<string, string[]> = {};
  for (const [givenName, source] of entries) {
    const translated = translate(source);
    if (!translated) continue;
    const name = givenName ?? uniqueName(securitySchemes, translated.nativeType);
    setOwnProperty(securitySchemes, name, translated.scheme);
    setOwnProperty(scopes, name, translated.scopes);
  }
  const names = Object.keys(securitySchemes);
  const securityRequirements: A2ASecurityRequirement[] = options.requireAll
    ? names.length > 0
      ? [{ schemes: Object.fromEntries(names.map((name) => [name, { list: scopes[name]! }])) }]
      : []
    : names.map((name) => ({ schemes: { [name]: { list: scopes[name]! } } }));
  return { securitySchemes, securityRequirements };
}

function uniqueName(taken: Record<string, unknown>, base: string): string {
  if (!Object.prototype.hasOwnProperty.call(taken, base)) return base;
  for (let index = 2; ; index += 1) {
    const candidate = `${base}_${index}`;
    if (!Object.prototype.hasOwnProperty.call(taken, candidate)) return candidate;
  }
}

interface Translated {
  nativeType: string;
  scheme: A2ASecurityScheme;
  scopes: string[];
}

function translate(source: SecuritySchemeSource): Translated | undefined {
  if (!isRecord(source)) return undefined;
  const canonical = asCanonical(source);
  if (canonical) return canonical;
  const dict = source instanceof SecurityScheme ? source.toDict() : (source as Partial<SecuritySchemeDict>);
  const type = dict.type;
  const metadata = isRecord(dict.metadata) ? dict.metadata : {};
  const description =
    typeof dict.description === 'string' && dict.description !== '' ? { description: dict.description } : {};
  switch (type) {
    case 'apiKey':
    case 'api_key': {
      const location = stringField(metadata, 'location') ?? stringField(metadata, 'in');
      return {
        nativeType: 'apiKey',
        scheme: {
          apiKeySecurityScheme: {
            location:
              location && API_KEY_LOCATIONS.has(location)
                ? (location as 'header' | 'query' | 'cookie')
                : 'header',
            name: stringField(metadata, 'name') ?? 'X-API-Key',
            ...description,
          },
        },
        scopes: [],
      };
    }
    case 'http': {
      if (typeof dict.scheme !== 'string' || dict.scheme === '') return undefined;
      const key = dict.scheme.toLowerCase();
      const schemeName = Object.prototype.hasOwnProperty.call(HTTP_SCHEME_NAMES, key)
        ? HTTP_SCHEME_NAMES[key as HttpAuthScheme]
        : dict.scheme;
      const bearerFormat = stringField(metadata, 'bearer_format') ?? stringField(metadata, 'bearerFormat');
      return {
        nativeType: 'http',
        scheme: {
          httpAuthSecurityScheme: {
            scheme: schemeName,
            ...(bearerFormat ? { bearerFormat } : {}),
            ...description,
          },
        },
        scopes: [],
      };
    }
    case 'oauth2': {
      const flows = oauthFlows(metadata);
      if (!flows) return undefined;
      const metadataUrl =
        stringField(metadata, 'oauth2_metadata_url') ?? stringField(metadata, 'oauth2MetadataUrl');
      const required = metadata.required_scopes;
      return {
        nativeType: 'oauth2',
        scheme: {
          oauth2SecurityScheme: {
            flows,
            ...(metadataUrl ? { oauth2MetadataUrl: metadataUrl } : {}),
            ...description,
          },
        },
        scopes:
          Array.isArray(required) && required.every((scope) => typeof scope === 'string')
            ? [...required]
            : [],
      };
    }
    case 'openIdConnect': {
      const url =
        stringField(metadata, 'open_id_connect_url') ??
        stringField(metadata, 'openIdConnectUrl') ??
        stringField(metadata, 'url');
      if (!url) return undefined;
      return {
        nativeType: 'openIdConnect',
        scheme: { openIdConnectSecurityScheme: { openIdConnectUrl: url, ...description } },
        scopes: [],
      };
    }
    case 'mutualTLS':
      return { nativeType: 'mutualTLS', scheme: { mtlsSecurityScheme: { ...description } }, scopes: [] };
    default:
      return undefined;
  }
}

/** An entry that already is canonical (exactly one known wrapper key holding an object) passes through. */
function asCanonical(source: Record<string, unknown>): Translated | undefined {
  const keys = Object.keys(source);
  if (
    keys.length !== 1 ||
    !Object.prototype.hasOwnProperty.call(WRAPPERS, keys[0]!) ||
    !isRecord(source[keys[0]!])
  ) {
    return undefined;
  }
  return { nativeType: WRAPPERS[keys[0]!]!, scheme: source as A2ASecurityScheme, scopes: [] };
}

/** Given flows (exactly one flow: A2A's `flows` is a oneof), else the exchange endpoint as a client-credentials token URL. */
function oauthFlows(metadata: Record<string, unknown>): Record<string, unknown> | undefined {
  const given = metadata.flows;
  if (isRecord(given)) {
    const names = Object.keys(given);
    if (names.length === 1 && OAUTH_FLOWS.has(names[0]!) && isRecord(given[names[0]!])) return given;
  }
  const tokenUrl = stringField(metadata, 'exchange_endpoint') ?? stringField(metadata, 'token_url');
  return tokenUrl ? { clientCredentials: { tokenUrl, scopes: {} } } : undefined;
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}
