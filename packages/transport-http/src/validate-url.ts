import { networkInterfaces, hostname } from 'node:os';
import { isIP } from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost', 'ip6-localhost', 'ip6-loopback']);
const WILDCARDS = new Set(['0.0.0.0', '::']);

/**
 * True when `host` names this machine: a loopback name or address, a wildcard address, an address
 * of one of its interfaces, or its hostname.
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
