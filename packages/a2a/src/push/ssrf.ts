import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ValidationError } from '@agent/core';

/**
 * The SSRF guard of push notifications: a webhook URL a caller registers must not make this server
 * POST to itself, to its network's private services or to a cloud metadata endpoint. Only http and
 * https are accepted, and a host that is — or resolves to, through any of its addresses — a
 * loopback, private, shared (CGNAT), link-local, unique-local, unspecified, multicast or reserved
 * address is refused. IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4) are
 * judged by the IPv4 address they carry.
 */

/** One resolved address, as `dns.lookup(host, {all: true})` gives it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** How host names are resolved: `dns.lookup` with `{all: true}` unless a test supplies its own. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export const resolveWithDns: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, where cloud metadata endpoints live
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some stacks)
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit words of an IPv6 address (zone id dropped), or undefined when it is not one. */
function ipv6Words(address: string): number[] | undefined {
  let text = address.split('%')[0] ?? '';
  if (isIP(text) !== 6) return undefined;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((word) => parseInt(word, 16));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const zeros = rest === undefined ? 0 : 8 - left.length - right.length;
  const words = [...left, ...Array<number>(Math.max(zeros, 0)).fill(0), ...right];
  return words.length === 8 ? words : undefined;
}

function ipv4FromWords(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The IPv4 address an IPv6 address carries by a standard embedding, if any. */
function embeddedIpv4(words: number[]): string | undefined {
  const [w0, w1, w2, w3, w4, w5, w6 = 0, w7 = 0] = words;
  const zeroPrefix = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0;
  if (zeroPrefix && w5 === 0xffff) return ipv4FromWords(w6, w7); // ::ffff:a.b.c.d (mapped)
  if (zeroPrefix && w5 === 0 && (w6 !== 0 || w7 > 1)) return ipv4FromWords(w6, w7); // ::a.b.c.d (compatible)
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0)
    return ipv4FromWords(w6, w7); // 64:ff9b::a.b.c.d (NAT64)
  if (w0 === 0x2002) return ipv4FromWords(w1 ?? 0, w2 ?? 0); // 2002:aabb:ccdd:: (6to4)
  return undefined;
}

/**
 * True when a connection to `address` (an IP literal) must be refused. Anything that is not an IP
 * address is refused too, so a caller cannot slip a name past the check.
 */
export function isBlockedAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIP(bare) === 4) return BLOCKED.check(bare, 'ipv4');
  const words = ipv6Words(bare);
  if (!words) return true;
  const v4 = embeddedIpv4(words);
  if (v4 !== undefined && BLOCKED.check(v4, 'ipv4')) return true;
  const canonical = words.map((word) => word.toString(16)).join(':');
  return BLOCKED.check(canonical, 'ipv6');
}

/** Why a webhook address was refused; the delivery path recognises it and does not retry. */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_PUSH_ADDRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

const REFUSED =
  'must not point to a loopback, private, link-local or otherwise non-public address (push.allowPrivateNetworks allows it)';

export interface CheckWebhookUrlOptions {
  /** Skip the address rule (the scheme rule still applies). */
  allowPrivateNetworks: boolean;
  resolve: ResolveHost;
  /** JSON pointer of the URL in the request, for the ValidationError. Default `/url`. */
  pointer?: string;
}

function invalid(pointer: string, message: string): ValidationError {
  return new ValidationError(`Invalid push notification config: ${pointer} ${message}`, {
    data: { errors: [{ pointer, message }] },
  });
}

/** The host of a parsed URL as an IP literal or a name (brackets of an IPv6 literal removed). */
function hostOf(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Parses and checks a webhook URL; resolves the host name (all its addresses) unless private
 * networks are allowed. Refusals are ValidationErrors at `pointer`. The resolved addresses are not
 * kept: delivery resolves again through {@link guardedLookup}, which checks what it connects to.
 */
export async function checkWebhookUrl(value: string, options: CheckWebhookUrlOptions): Promise<URL> {
  const pointer = options.pointer ?? '/url';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(pointer, 'is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid(pointer, 'must be an http or https URL');
  // Credentials in the URL would end up in log lines; A2A has `authentication` for them.
  if (url.username !== '' || url.password !== '')
    throw invalid(pointer, 'must not carry credentials (use authentication)');
  if (options.allowPrivateNetworks) return url;
  const host = hostOf(url);
  if (isIP(host) !== 0) {
    if (isBlockedAddress(host)) throw invalid(pointer, REFUSED);
    return url;
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await options.resolve(host);
  } catch {
    throw invalid(pointer, 'has a host name that does not resolve');
  }
  if (addresses.length === 0) throw invalid(pointer, 'has a host name that does not resolve');
  if (addresses.some((entry) => isBlockedAddress(entry.address))) throw invalid(pointer, REFUSED);
  return url;
}

/**
 * A `lookup` for the sockets of a delivery (axios's async form): it resolves the host, refuses the
 * connection when any address is blocked, and hands the socket exactly the addresses it checked.
 * DNS answers that change between registration and delivery (rebinding) are therefore caught at the
 * moment of connecting, with no window between the check and the connection. IP literals never
 * reach a lookup; they were checked when the config was created and cannot change.
 */
export function guardedLookup(
  resolve: ResolveHost,
): (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]> {
  return async (hostname) => {
    const addresses = await resolve(hostname);
    if (addresses.length === 0)
      throw Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' });
    if (addresses.some((entry) => isBlockedAddress(entry.address)))
      throw new BlockedAddressError('webhook host now resolves to a non-public address');
    return addresses.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
  };
}
