/**
 * Cross-origin resource sharing for every transport served on `NodeHost` (HTTP on both backends,
 * SSE): one option shape, one check of it, one way to answer a preflight and to mark a response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ValueError } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';

/** The `cors` option of the HTTP and SSE transports. */
export interface CorsOptions {
  /**
   * The origins whose pages may call the server: a list (`https://app.example.com`, compared
   * without regard to case), `'*'` for every origin (not with `credentials`), or a function of the
   * request's `Origin` header.
   */
  origins: readonly string[] | '*' | ((origin: string) => boolean);
  /** Let pages send cookies and `Authorization` with `fetch(…, { credentials: 'include' })`. Default false. */
  credentials?: boolean;
  /** Response headers a page may read. Default `Retry-After`, `WWW-Authenticate`. */
  exposedHeaders?: readonly string[];
  /** Request headers a page may send. Default: the ones the preflight asks for. */
  allowedHeaders?: readonly string[];
  /** How long a browser may cache a preflight answer. Default: not sent (the browser's own, 5 s in most). */
  maxAgeSeconds?: number;
}

const OPTION_NAMES = optionNames<CorsOptions>({
  origins: true,
  credentials: true,
  exposedHeaders: true,
  allowedHeaders: true,
  maxAgeSeconds: true,
});

/** The headers a page reads on refusals: how long to wait (429, 503) and how to authenticate (401). */
export const DEFAULT_EXPOSED_HEADERS: readonly string[] = ['Retry-After', 'WWW-Authenticate'];

/** Every method a transport on the host serves (HEAD through GET). */
const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, DELETE';

/** RFC 9110 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A checked `cors` option. `handle(req, res)` runs before anything else of a request (before the
 * probes, routing and authentication): it answers a preflight itself, and marks every other
 * response for the request's origin.
 */
export class CorsPolicy {
  private readonly allowAll: boolean;
  private readonly listed: ReadonlySet<string> | undefined;
  private readonly predicate: ((origin: string) => boolean) | undefined;
  private readonly credentials: boolean;
  private readonly exposed: string | undefined;
  private readonly allowedHeaders: string | undefined;
  private readonly maxAge: string | undefined;

  private constructor(options: CorsOptions) {
    const { origins } = options;
    this.allowAll = origins === '*';
    this.predicate = typeof origins === 'function' ? origins : undefined;
    this.listed = Array.isArray(origins) ? new Set(origins.map((o: string) => o.toLowerCase())) : undefined;
    this.credentials = options.credentials === true;
    const exposed = options.exposedHeaders ?? DEFAULT_EXPOSED_HEADERS;
    this.exposed = exposed.length > 0 ? exposed.join(', ') : undefined;
    this.allowedHeaders = options.allowedHeaders?.join(', ');
    this.maxAge = options.maxAgeSeconds === undefined ? undefined : String(options.maxAgeSeconds);
  }

  /**
   * Reads the option of `owner` (the transport's class name, for messages): undefined when absent,
   * else a policy. ValueError naming the field for anything malformed, an unknown field among them.
   */
  static from(owner: string, value: unknown): CorsPolicy | undefined {
    if (value === undefined) return undefined;
    const name = `${owner} option "cors"`;
    if (!isRecord(value)) throw corsError(`${name} must be an object with "origins"`);
    checkOptionNames(name, value, OPTION_NAMES);
    const options = value as unknown as CorsOptions;
    checkOrigins(name, options.origins);
    if (options.credentials !== undefined && typeof options.credentials !== 'boolean') {
      throw corsError(`${name}: credentials must be true or false`);
    }
    // The fetch standard refuses `*` on a credentialed response, and answering every origin with
    // itself would hand every site the caller's cookies: the origins must be named.
    if (options.credentials === true && options.origins === '*') {
      throw corsError(
        `${name}: origins "*" cannot be combined with credentials; list the origins or pass a function`,
      );
    }
    checkHeaderNames(name, 'exposedHeaders', options.exposedHeaders);
    checkHeaderNames(name, 'allowedHeaders', options.allowedHeaders);
    const maxAge = options.maxAgeSeconds;
    if (maxAge !== undefined && !(typeof maxAge === 'number' && Number.isInteger(maxAge) && maxAge >= 0)) {
      throw corsError(`${name}: maxAgeSeconds must be a non-negative integer, got ${String(maxAge)}`);
    }
    return new CorsPolicy(options);
  }

  /**
   * Applies the policy to one request. True when it answered the request itself (a preflight:
   * `OPTIONS` with `Origin` and `Access-Control-Request-Method`); false when the request goes on,
   * with the CORS headers of its origin already set on `res`.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    const preflight =
      req.method === 'OPTIONS' &&
      origin !== undefined &&
      req.headers['access-control-request-method'] !== undefined;
    // The answer depends on Origin (and a preflight's on the headers it asks for): caches must know.
    res.setHeader(
      'vary',
      preflight && !this.allowedHeaders ? 'Origin, Access-Control-Request-Headers' : 'Origin',
    );
    const allowed = origin !== undefined && this.allows(origin);
    if (allowed) {
      res.setHeader('access-control-allow-origin', this.allowAll && !this.credentials ? '*' : origin);
      if (this.credentials) res.setHeader('access-control-allow-credentials', 'true');
    }
    if (!preflight) {
      if (allowed && this.exposed) res.setHeader('access-control-expose-headers', this.exposed);
      return false;
    }
    // A refused origin gets a plain 204 without CORS headers, as express's and fastify's cors do:
    // the browser refuses the call on the missing header, and a status would tell it nothing more.
    if (allowed) {
      res.setHeader('access-control-allow-methods', ALLOWED_METHODS);
      const asked = req.headers['access-control-request-headers'];
      const headers = this.allowedHeaders ?? asked;
      if (headers) res.setHeader('access-control-allow-headers', headers);
      if (this.maxAge !== undefined) res.setHeader('access-control-max-age', this.maxAge);
    }
    res.setHeader('content-length', '0');
    res.writeHead(204);
    res.end();
    // A preflight never carries a body worth reading; drop whatever was sent so the socket stays usable.
    req.resume();
    return true;
  }

  private allows(origin: string): boolean {
    if (this.allowAll) return true;
    if (this.listed) return this.listed.has(origin.toLowerCase());
    try {
      return this.predicate?.(origin) === true;
    } catch {
      // A throwing predicate is a refusal, never a crash of the request.
      return false;
    }
  }
}

function checkOrigins(name: string, origins: unknown): void {
  if (origins === '*' || typeof origins === 'function') return;
  if (!Array.isArray(origins)) {
    throw corsError(`${name}: origins must be a list of origins, "*" or a function, got ${typeof origins}`);
  }
  for (const origin of origins as unknown[]) {
    if (typeof origin !== 'string' || !isSerializedOrigin(origin)) {
      throw corsError(
        `${name}: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], no path or trailing slash)`,
      );
    }
  }
}

/** What a browser sends as `Origin`: `scheme://host[:port]`, or `null` for an opaque origin. */
function isSerializedOrigin(value: string): boolean {
  if (value === 'null') return true;
  try {
    return new URL(value).origin === value.toLowerCase();
  } catch {
    return false;
  }
}

function checkHeaderNames(name: string, field: string, value: unknown): void {
  if (value === undefined) return;
  if (!Array.isArray(value) || !value.every((h) => typeof h === 'string' && HEADER_NAME.test(h))) {
    throw corsError(`${name}: ${field} must be a list of header names`);
  }
}

function corsError(message: string): ValueError {
  return new ValueError(message, { data: { option: 'cors' } });
}
