import { hostname, networkInterfaces } from 'node:os';
import { isIP } from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost', 'ip6-localhost', 'ip6-loopback']);
const WILDCARDS = new Set(['0.0.0.0', '::']);

/**
 * The one rule for "this URL is served by this machine", used by every transport's `validateUrl()`:
 * a loopback name or address (`localhost`, `*.localhost`, 127.0.0.0/8, ::1), a wildcard address,
 * an address of one of its interfaces, or its hostname.
 */
export function isLocalHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_NAMES.has(bare) || WILDCARDS.has(bare) || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4 && bare.startsWith('127.')) return true;
  if (bare === '::1' || bare === hostname().toLowerCase()) return true;
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.address.toLowerCase() === bare) return true;
    }
  }
  return false;
}

/** Whether a port number can be listened on (0 picks a free one). */
export function isValidPort(port: number): boolean {
  return Number.isInteger(port) && port >= 0 && port <= 65535;
}

/** `host:port` as it goes into a URL or a gRPC target: IPv6 addresses in brackets. */
export function formatHostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** `url` with its port replaced (a port-0 start learns its real port), keeping the configured form. */
export function withPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.port = String(port);
  const text = parsed.toString();
  // `new URL` adds a trailing slash to a bare origin: keep what the user wrote.
  return url.endsWith('/') || parsed.pathname !== '/' ? text : text.replace(/\/$/, '');
}
