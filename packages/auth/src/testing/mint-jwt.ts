import { createHmac } from 'node:crypto';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { base64UrlEncode } from '../base64url.js';

export type MintAlgorithm = 'HS256' | 'HS384' | 'HS512' | 'none';

export interface MintJwtOptions {
  /** HMAC secret. Ignored for `'none'`. */
  secret: string;
  /** Signs with this algorithm and writes it as the `alg` header unless `header.alg` overrides it. Default `'HS256'`. */
  algorithm?: MintAlgorithm;
  /** Payload claims, written as given: nothing (not even `iat`) is added. */
  claims?: Record<string, unknown>;
  /** Header fields merged over `{ alg, typ: 'JWT' }`: forge an `alg` that differs from the signing one this way. */
  header?: Record<string, unknown>;
}

const OPTION_NAMES = optionNames<MintJwtOptions>({
  secret: true,
  algorithm: true,
  claims: true,
  header: true,
});

const HASHES = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' } as const;

/**
 * Mints a compact JWT for tests, deliberately without any validation, so that tests can forge the
 * tokens an attacker would send (`alg: none`, a header `alg` other than the signing one, any claims).
 */
export function mintJwt(options: MintJwtOptions): string {
  checkOptionNames('mintJwt', options, OPTION_NAMES);
  const algorithm = options.algorithm ?? 'HS256';
  const header = { alg: algorithm, typ: 'JWT', ...options.header };
  const signingInput = `${base64UrlEncode(JSON.stringify(header))}.${base64UrlEncode(JSON.stringify(options.claims ?? {}))}`;
  if (algorithm === 'none') return `${signingInput}.`;
  const signature = createHmac(HASHES[algorithm], options.secret).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}

/** Signs an arbitrary `header.payload` signing input, for tokens whose segments are not JSON at all. */
export function signJwtInput(
  signingInput: string,
  secret: string,
  algorithm: Exclude<MintAlgorithm, 'none'> = 'HS256',
): string {
  return `${signingInput}.${createHmac(HASHES[algorithm], secret).update(signingInput).digest('base64url')}`;
}

/** Seconds since the epoch, the unit of `exp`, `nbf` and `iat`. */
export function epochSeconds(date: Date = new Date()): number {
  return Math.floor(date.getTime() / 1000);
}
