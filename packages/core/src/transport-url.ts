import { ValueError } from './errors.js';

/** TLS settings shared by every network transport (used with `https`, `wss` or `grpcs` URLs). */
export interface TlsOptions {
  /** PEM certificate (chain) this side presents: the server certificate, or the client's for mutual TLS. */
  cert?: string | Buffer;
  /** PEM private key for `cert`. */
  key?: string | Buffer;
  /** PEM CA certificate(s) used to verify the peer. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Server side: require a client certificate signed by `ca` (mutual TLS). Default false. */
  requestClientCert?: boolean;
  /** Client side: verify the server certificate. Default true. */
  rejectUnauthorized?: boolean;
  /** Client side: the TLS server name (SNI) to verify, when it differs from the URL host. */
  servername?: string;
}

export interface TransportAddress {
  /** Scheme without the colon, e.g. `http`, `wss`, `grpcs`. */
  scheme: string;
  host: string;
  port: number;
  secure: boolean;
  /** Path part of the URL without a trailing slash ('' for the root). */
  basePath: string;
}

const DEFAULT_PORTS: Record<string, number> = {
  http: 80,
  https: 443,
  ws: 80,
  wss: 443,
  grpc: 50051,
  grpcs: 443,
};
const SECURE = new Set(['https', 'wss', 'grpcs']);

/**
 * Parses a transport URL such as `http://127.0.0.1:8080`, `wss://host:9000/agent` or `grpc://host:50051`.
 * Port `0` is kept (the server then picks a free port). IPv6 hosts lose their brackets.
 */
export function parseTransportUrl(url: string): TransportAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValueError(`Invalid transport URL: ${url}`);
  }
  const scheme = parsed.protocol.replace(/:$/, '');
  const port = parsed.port === '' ? DEFAULT_PORTS[scheme] : Number(parsed.port);
  if (port === undefined) throw new ValueError(`Unsupported URL scheme "${scheme}" in ${url}`);
  return {
    scheme,
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port,
    secure: SECURE.has(scheme),
    basePath: parsed.pathname.replace(/\/+$/, ''),
  };
}

/** Lowercases header names and joins repeated values, the form `CallContext.headers` carries. */
export function normalizeHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

/**
 * The URL of `route` below an http(s) `baseUrl`, keeping its base path and query and adding `query`.
 * `owner` names the client in the message for a URL of another scheme.
 */
export function httpEndpointUrl(
  owner: string,
  baseUrl: string,
  route: string,
  query?: Readonly<Record<string, string>>,
): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ValueError(`Invalid base URL: ${baseUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValueError(`${owner} sends to http and https URLs only, got ${baseUrl}`);
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${route}`;
  for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
  return url;
}
