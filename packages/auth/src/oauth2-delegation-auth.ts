import {
  ConcurrencyLimit,
  UnauthenticatedError,
  ValueError,
  type ComponentDescriptor,
  type Describable,
  type JsonObject,
} from '@agent/core';
import { checkOptionNames, describeComponent, isRecord, optionNames } from '@agent/core/internal';
import axios, { type AxiosInstance } from 'axios';
import { Authenticator } from './authenticator.js';
import { SecurityContext } from './security-context.js';
import { SecurityScheme } from './security-scheme.js';

export const TOKEN_EXCHANGE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface OAuth2DelegationAuthOptions {
  /** Token-exchange endpoint URL (RFC 8693). By design, not validated at construction. */
  exchangeEndpoint: string;
  clientId: string;
  clientSecret: string;
  /** Whole-exchange deadline in milliseconds (connect, send, wait, read). Default `10000`. */
  timeoutMs?: number;
  /** `subject_token_type` sent with the exchange. Default `urn:ietf:params:oauth:token-type:access_token`. */
  subjectTokenType?: string;
  /** Optional RFC 8693 `audience` parameter. */
  audience?: string;
  /** Optional RFC 8693 `scope` parameter (space-separated). */
  scope?: string;
  /** Largest accepted response body, in bytes. Default `1048576` (1 MiB). */
  maxResponseBytes?: number;
  /**
   * `false` (default): `expires_in` is copied as it is into `expiresAt`, so `isExpired()` does not work
   * on such a context (a relative number of seconds is not a timestamp).
   * `true`: a numeric `expires_in` becomes an absolute UTC ISO `expiresAt` (now + seconds), so
   * `isExpired()` works on the context.
   */
  normalizeExpiry?: boolean;
  /** Discovery text of the advertised scheme. */
  description?: string;
  /**
   * Most token exchanges in flight at once: a number, or a ConcurrencyLimit several providers share.
   * One over it is refused at once with UNAVAILABLE (`data: { retry_after_ms, limit: 'token exchanges' }`),
   * never queued: `authenticateRequest` passes that on as an overload (503 with `Retry-After`), so
   * a slow token endpoint cannot pile up every inbound request behind it. Default `64`.
   */
  outboundLimit?: ConcurrencyLimit | number;
}

const OPTION_NAMES = optionNames<OAuth2DelegationAuthOptions>({
  exchangeEndpoint: true,
  clientId: true,
  clientSecret: true,
  timeoutMs: true,
  subjectTokenType: true,
  audience: true,
  scope: true,
  maxResponseBytes: true,
  normalizeExpiry: true,
  description: true,
  outboundLimit: true,
});

export interface OAuth2AuthenticateOptions {
  /** Abandons the exchange; the rejection still carries the `OAuth delegation failed: ` prefix. */
  signal?: AbortSignal;
}

const PREFIX = 'OAuth delegation failed: ';
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Token exchanges in flight at once per provider when `outboundLimit` is not given. */
export const DEFAULT_TOKEN_EXCHANGE_LIMIT = 64;
/** The name the overload error of `outboundLimit` gives (`data.limit`). */
export const TOKEN_EXCHANGE_LIMIT_NAME = 'token exchanges';
/** Ten years: anything longer is not a lifetime but a bug, and could overflow a Date. */
const MAX_EXPIRES_IN_SECONDS = 10 * 365 * 24 * 3600;

function fail(reason: string, cause?: unknown): never {
  throw new UnauthenticatedError(PREFIX + reason, cause === undefined ? undefined : { cause });
}

/**
 * Exchanges the caller's credential at an OAuth 2.0 token-exchange endpoint (RFC 8693 parameters,
 * sent by design as a JSON body, not form-encoded) and trusts the answer; only a 200 succeeds. One
 * axios instance per provider; redirects are not followed, so the client secret is never re-sent to
 * another origin.
 */
export class OAuth2DelegationAuth extends Authenticator implements Describable {
  readonly exchangeEndpoint: string;
  readonly clientId: string;
  readonly timeoutMs: number;
  /** Bounds the exchanges in flight (the `outboundLimit` option). */
  readonly outboundLimit: ConcurrencyLimit;
  private readonly clientSecret: string;
  private readonly options: OAuth2DelegationAuthOptions;
  private readonly http: AxiosInstance;
  private readonly scheme: SecurityScheme;

  constructor(options: OAuth2DelegationAuthOptions) {
    super();
    checkOptionNames('OAuth2DelegationAuth', options ?? {}, OPTION_NAMES);
    const timeoutMs = options?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new ValueError(
        `OAuth2DelegationAuth: timeoutMs must be a positive number, got ${String(timeoutMs)}`,
      );
    }
    const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes <= 0) {
      throw new ValueError('OAuth2DelegationAuth: maxResponseBytes must be a positive integer');
    }
    this.outboundLimit = outboundLimitOption(options.outboundLimit);
    this.options = { ...options };
    this.exchangeEndpoint = options.exchangeEndpoint;
    this.clientId = options.clientId;
    this.clientSecret = options.clientSecret;
    this.timeoutMs = timeoutMs;
    this.http = axios.create({
      timeout: timeoutMs,
      maxRedirects: 0,
      maxContentLength: maxResponseBytes,
      responseType: 'text',
      // The body is parsed here, so a bad JSON answer is an error instead of a silent string.
      transformResponse: [(data: unknown) => data],
      validateStatus: () => true,
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    });
    this.scheme = new SecurityScheme({
      authType: 'oauth2',
      authScheme: null,
      description: options.description ?? 'OAuth 2.0 token exchange (RFC 8693)',
      metadata: { exchange_endpoint: options.exchangeEndpoint },
    });
  }

  get securityScheme(): SecurityScheme {
    return this.scheme;
  }

  async authenticate(credentials: string, options: OAuth2AuthenticateOptions = {}): Promise<SecurityContext> {
    if (typeof credentials !== 'string') fail('credentials must be a string');
    const body: Record<string, string> = {
      grant_type: TOKEN_EXCHANGE_GRANT_TYPE,
      subject_token: credentials,
      subject_token_type: this.options.subjectTokenType ?? ACCESS_TOKEN_TYPE,
      client_id: this.clientId,
      client_secret: this.clientSecret,
    };
    if (this.options.audience !== undefined) body.audience = this.options.audience;
    if (this.options.scope !== undefined) body.scope = this.options.scope;

    // axios' own timeout only watches socket inactivity; this deadline covers the whole exchange.
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
    // Over the limit: the overload error at once (not a credential failure, so not the prefix).
    const release = this.outboundLimit.acquire();
    let status: number;
    let text: unknown;
    try {
      const response = await this.http.post<unknown>(this.exchangeEndpoint, body, { signal });
      status = response.status;
      text = response.data;
    } catch (error) {
      fail(describeRequestError(error, deadline.aborted, this.timeoutMs), error);
    } finally {
      release();
    }
    if (status !== 200) fail(`token endpoint answered HTTP ${status}${oauthErrorSuffix(text)}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(typeof text === 'string' ? text : '');
    } catch (error) {
      fail('token endpoint answered invalid JSON', error);
    }
    return contextFromResponse(parsed, this.options.normalizeExpiry === true);
  }

  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }

  describe(): ComponentDescriptor {
    // A shared ConcurrencyLimit cannot cross a thread: the copy gets a limit of its own, as large.
    return describeComponent('@agent/auth', 'OAuth2DelegationAuth', {
      ...this.options,
      timeoutMs: this.timeoutMs,
      outboundLimit: this.outboundLimit.max,
    });
  }
}

function outboundLimitOption(value: unknown): ConcurrencyLimit {
  if (value instanceof ConcurrencyLimit) return value;
  const max = value ?? DEFAULT_TOKEN_EXCHANGE_LIMIT;
  if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 1) {
    throw new ValueError(
      `OAuth2DelegationAuth: outboundLimit must be a whole number from 1 or a ConcurrencyLimit, got ${String(value)}`,
    );
  }
  return new ConcurrencyLimit(max, { name: TOKEN_EXCHANGE_LIMIT_NAME });
}

/**
 * The context fields: principal from `sub` (default `unknown`), token from `access_token` (default ''),
 * `metadata` (default {}), and `expires_in` copied as it is into `expiresAt` (a number becomes its
 * decimal text), so `isExpired()` on such a context raises ValueError instead of guessing; with
 * `normalizeExpiry` a number of seconds becomes an absolute timestamp instead.
 */
function contextFromResponse(parsed: unknown, normalizeExpiry: boolean): SecurityContext {
  if (!isRecord(parsed)) fail('token response is not a JSON object');
  const {
    sub = 'unknown',
    access_token: accessToken = '',
    metadata = {},
    expires_in: expiresIn = null,
  } = parsed;
  if (typeof sub !== 'string') fail('token response field "sub" is not a string');
  if (typeof accessToken !== 'string') fail('token response field "access_token" is not a string');
  if (!isRecord(metadata)) fail('token response field "metadata" is not an object');
  let expiresAt: string | null;
  if (expiresIn === null || typeof expiresIn === 'string') expiresAt = expiresIn;
  else if (typeof expiresIn === 'number' && Number.isFinite(expiresIn)) {
    if (!normalizeExpiry) expiresAt = String(expiresIn);
    else if (Math.abs(expiresIn) <= MAX_EXPIRES_IN_SECONDS)
      expiresAt = new Date(Date.now() + expiresIn * 1000).toISOString();
    else fail('token response field "expires_in" is out of range');
  } else fail('token response field "expires_in" is not a number or string');
  return new SecurityContext({
    principalId: sub,
    token: accessToken,
    expiresAt,
    metadata: metadata as JsonObject,
  });
}

function describeRequestError(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `token endpoint did not answer within ${timeoutMs} ms`;
  if (axios.isCancel(error)) return 'token exchange was aborted';
  if (axios.isAxiosError(error)) {
    if (error.code === 'ECONNABORTED' || error.code === 'ETIMEDOUT') {
      return `token endpoint did not answer within ${timeoutMs} ms`;
    }
    if (error.code === 'ERR_BAD_RESPONSE' && /maxContentLength/.test(error.message))
      return 'token response too large';
    return `${error.code ?? 'network error'}: ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** An RFC 6749 §5.2 `error` value as registered codes spell it; anything else may be free text. */
const OAUTH_ERROR_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Only the RFC 6749 §5.2 `error` code, when the endpoint sent a well-formed one. The free-text
 * `error_description` (and the rest of the body) is never forwarded: providers quote the
 * `subject_token` there, and this message ends up in 401 bodies.
 */
function oauthErrorSuffix(text: unknown): string {
  if (typeof text !== 'string') return '';
  try {
    const body: unknown = JSON.parse(text);
    if (!isRecord(body) || typeof body.error !== 'string' || !OAUTH_ERROR_CODE.test(body.error)) return '';
    return ` (${body.error})`;
  } catch {
    return '';
  }
}
