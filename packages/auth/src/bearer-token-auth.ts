import {
  UnauthenticatedError,
  ValueError,
  type ComponentDescriptor,
  type Describable,
  type JsonObject,
} from '@agent/core';
import { checkOptionNames, describeComponent, isRecord, optionNames } from '@agent/core/internal';
import jwt from 'jsonwebtoken';
import { Authenticator } from './authenticator.js';
import { numericDateToIso } from './iso-time.js';
import { decodeCompactJwt } from './jwt-compact.js';
import { setOwnProperty } from './own-property.js';
import { SecurityContext } from './security-context.js';
import { SecurityScheme } from './security-scheme.js';
import { isStringList } from './tenant-lists.js';

export const JWT_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

export interface BearerTokenAuthOptions {
  /** Shared HMAC secret. Required, non-empty. */
  secret: string;
  /** The one accepted algorithm; tokens signed with any other are rejected. Default `'HS256'`. */
  algorithm?: JwtAlgorithm;
  /** When set, `iss` must equal it. Default none. */
  issuer?: string | null;
  /** When set, `aud` (a string or a list of strings) must contain it. Default none. */
  audience?: string | null;
  /** Clock skew allowed on `exp`, `nbf` and `iat`, in whole seconds. Default `0`. */
  leewaySeconds?: number;
  /** Discovery text of the advertised scheme. */
  description?: string;
  /** Clock in epoch milliseconds, for tests and simulations. Default `Date.now`. Not part of `describe()`. */
  now?: () => number;
}

const OPTION_NAMES = optionNames<BearerTokenAuthOptions>({
  secret: true,
  algorithm: true,
  issuer: true,
  audience: true,
  leewaySeconds: true,
  description: true,
  now: true,
});

/** Claims that stay out of `metadata.claims` (RFC 7519 §4.1) plus our own `metadata` and `tenants` claims. */
const REGISTERED_CLAIMS = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'metadata', 'tenants']);
/** The range a JavaScript Date can represent, in seconds. */
const MAX_NUMERIC_DATE = 8.64e12;
const PREFIX = 'Token authentication failed: ';

function fail(reason: string, cause?: unknown): never {
  throw new UnauthenticatedError(PREFIX + reason, cause === undefined ? undefined : { cause });
}

/**
 * Verifies HMAC-signed compact JWTs (HS256/HS384/HS512) with jsonwebtoken, the algorithm pinned to
 * the configured one. Every failure is an UnauthenticatedError whose message starts
 * `Token authentication failed: `.
 */
export class BearerTokenAuth extends Authenticator implements Describable {
  readonly algorithm: JwtAlgorithm;
  readonly issuer: string | null;
  readonly audience: string | null;
  readonly leewaySeconds: number;
  private readonly secret: string;
  private readonly description: string | undefined;
  private readonly now: () => number;
  private readonly scheme: SecurityScheme;

  constructor(options: BearerTokenAuthOptions) {
    super();
    checkOptionNames('BearerTokenAuth', options ?? {}, OPTION_NAMES);
    const { secret, algorithm = 'HS256', issuer = null, audience = null, leewaySeconds = 0 } = options ?? {};
    if (typeof secret !== 'string' || secret === '')
      throw new ValueError('BearerTokenAuth: secret must be a non-empty string');
    if (!(JWT_ALGORITHMS as readonly string[]).includes(algorithm)) {
      throw new ValueError(
        `BearerTokenAuth: unsupported algorithm ${String(algorithm)} (expected ${JWT_ALGORITHMS.join(', ')})`,
      );
    }
    if (!Number.isSafeInteger(leewaySeconds) || leewaySeconds < 0) {
      throw new ValueError(
        `BearerTokenAuth: leewaySeconds must be a non-negative integer, got ${String(leewaySeconds)}`,
      );
    }
    if (issuer !== null && typeof issuer !== 'string')
      throw new ValueError('BearerTokenAuth: issuer must be a string');
    if (audience !== null && typeof audience !== 'string')
      throw new ValueError('BearerTokenAuth: audience must be a string');
    this.secret = secret;
    this.algorithm = algorithm;
    this.issuer = issuer;
    this.audience = audience;
    this.leewaySeconds = leewaySeconds;
    this.description = options.description;
    this.now = options.now ?? Date.now;
    this.scheme = new SecurityScheme({
      authType: 'http',
      authScheme: 'bearer',
      description: options.description ?? `JWT bearer token (${algorithm})`,
      metadata: {
        algorithms: [...JWT_ALGORITHMS],
        algorithm,
        issuer,
        audience,
        bearer_format: 'JWT',
      },
    });
  }

  get securityScheme(): SecurityScheme {
    return this.scheme;
  }

  async authenticate(credentials: string): Promise<SecurityContext> {
    if (typeof credentials !== 'string') fail('token must be a string');
    if (credentials === '') fail('empty token');
    const decoded = decodeCompactJwt(credentials);
    if (typeof decoded === 'string') fail(decoded);
    const { header, payload } = decoded;
    if (header.alg !== this.algorithm) fail('algorithm mismatch');
    // RFC 7515 §4.1.11: a token that needs an extension we do not implement must be refused.
    if (header.crit !== undefined) fail('unsupported critical header parameters');

    const nowSeconds = Math.floor(this.now() / 1000);
    try {
      jwt.verify(credentials, this.secret, {
        algorithms: [this.algorithm],
        clockTimestamp: nowSeconds,
        clockTolerance: this.leewaySeconds,
        ...(this.issuer !== null ? { issuer: this.issuer } : {}),
        ...(this.audience !== null ? { audience: this.audience } : {}),
      });
    } catch (error) {
      fail(describeVerifyError(error), error);
    }
    this.checkClaims(payload, nowSeconds);
    return this.contextFrom(credentials, payload);
  }

  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }

  describe(): ComponentDescriptor {
    const options: Record<string, unknown> = {
      secret: this.secret,
      algorithm: this.algorithm,
      issuer: this.issuer,
      audience: this.audience,
      leewaySeconds: this.leewaySeconds,
    };
    if (this.description !== undefined) options.description = this.description;
    return describeComponent('@agent/auth', 'BearerTokenAuth', options);
  }

  /** What jsonwebtoken leaves open: iat in the future, out-of-range dates, claim types. */
  private checkClaims(payload: JsonObject, nowSeconds: number): void {
    for (const claim of ['exp', 'nbf', 'iat'] as const) {
      const value = payload[claim];
      if (value === undefined) continue;
      if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > MAX_NUMERIC_DATE) {
        fail(`invalid ${claim} claim`);
      }
    }
    if (typeof payload.iat === 'number' && payload.iat > nowSeconds + this.leewaySeconds)
      fail('token issued in the future');
    const aud = payload.aud;
    if (
      aud !== undefined &&
      typeof aud !== 'string' &&
      !(Array.isArray(aud) && aud.every((entry) => typeof entry === 'string'))
    ) {
      fail('invalid aud claim');
    }
    if (payload.iss !== undefined && typeof payload.iss !== 'string') fail('invalid iss claim');
    for (const claim of ['sub', 'client_id'] as const) {
      if (payload[claim] !== undefined && typeof payload[claim] !== 'string') fail(`invalid ${claim} claim`);
    }
    // A malformed restriction is refused rather than read as "no restriction".
    if (payload.tenants !== undefined && !isStringList(payload.tenants)) fail('invalid tenants claim');
    const inMetadata = isRecord(payload.metadata) ? payload.metadata.tenants : undefined;
    if (inMetadata !== undefined && !isStringList(inMetadata)) fail('invalid metadata.tenants claim');
  }

  private contextFrom(token: string, payload: JsonObject): SecurityContext {
    const principalId =
      (payload.sub as string | undefined) || (payload.client_id as string | undefined) || 'unknown';
    const metadata: JsonObject = isRecord(payload.metadata) ? { ...(payload.metadata as JsonObject) } : {};
    const claims: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(payload)) {
      if (!REGISTERED_CLAIMS.has(name) || (name === 'metadata' && !isRecord(value))) {
        setOwnProperty(claims, name, value);
      }
    }
    if (Object.keys(claims).length > 0) metadata.claims = claims;
    if (payload.tenants !== undefined) metadata.tenants = [...(payload.tenants as string[])];
    return new SecurityContext({
      principalId,
      token,
      expiresAt: typeof payload.exp === 'number' ? numericDateToIso(payload.exp) : null,
      ...(typeof payload.iat === 'number' ? { issuedAt: numericDateToIso(payload.iat) } : {}),
      metadata,
    });
  }
}

function describeVerifyError(error: unknown): string {
  if (error instanceof jwt.TokenExpiredError) return 'token has expired';
  if (error instanceof jwt.NotBeforeError) return 'token is not yet valid';
  const message = error instanceof Error ? error.message : String(error);
  if (message === 'invalid signature') return 'invalid signature';
  if (message.startsWith('jwt audience invalid')) return 'audience mismatch';
  if (message.startsWith('jwt issuer invalid')) return 'issuer mismatch';
  if (message === 'invalid algorithm') return 'algorithm mismatch';
  if (message === 'invalid exp value') return 'invalid exp claim';
  if (message === 'invalid nbf value') return 'invalid nbf claim';
  if (message === 'jwt malformed' || message === 'invalid token') return 'malformed token';
  return message;
}
