import { ValueError, type Transport } from '@agent/core';
import type { Authenticator } from '@agent/auth';
import { defaultSearchPaths, requirePackage } from './load-package.js';

/** The transports `new Agent({ transport })` accepts by name. */
export const TRANSPORT_NAMES = ['http', 'sse', 'ws', 'grpc', 'memory'] as const;
export type TransportName = (typeof TRANSPORT_NAMES)[number];

interface TransportPackage {
  module: string;
  className: string;
  /** An address to show when `card.url` is missing; null when the transport takes no URL. */
  exampleUrl: string | null;
}

const PACKAGES: Record<TransportName, TransportPackage> = {
  http: { module: '@agent/transport-http', className: 'HTTPTransport', exampleUrl: 'http://127.0.0.1:8080' },
  sse: { module: '@agent/transport-sse', className: 'SSETransport', exampleUrl: 'http://127.0.0.1:8081' },
  ws: { module: '@agent/transport-ws', className: 'WebSocketTransport', exampleUrl: 'ws://127.0.0.1:8082' },
  grpc: { module: '@agent/transport-grpc', className: 'GRPCTransport', exampleUrl: 'grpc://127.0.0.1:50051' },
  memory: { module: '@agent/transport-memory', className: 'RuntimeTransport', exampleUrl: null },
};

export interface TransportInit {
  /** The address to serve (`card.url`); ignored by `memory`. */
  url: string;
  authenticator?: Authenticator;
  credentials?: string;
}

export function isTransportName(value: unknown): value is TransportName {
  return typeof value === 'string' && (TRANSPORT_NAMES as readonly string[]).includes(value);
}

/**
 * Builds the transport named in `new Agent({ transport: name })`. The transport packages are
 * deliberately not dependencies of the runtime (install only what you use): see `requirePackage`
 * for where they are looked for.
 */
export function loadTransport(
  name: TransportName,
  init: TransportInit,
  searchFrom: readonly string[] = defaultSearchPaths(),
): Transport {
  const spec = PACKAGES[name];
  if (spec.exampleUrl !== null && !init.url) {
    throw new ValueError(
      `transport: '${name}' needs card.url (the address to serve, e.g. ${spec.exampleUrl})`,
    );
  }
  const module = requirePackage(`transport: '${name}'`, spec.module, searchFrom, { transport: name });
  const Transport = module[spec.className];
  if (typeof Transport !== 'function')
    throw new ValueError(`${spec.module} does not export ${spec.className}`);
  const options: Partial<TransportInit> = spec.exampleUrl === null ? {} : { url: init.url };
  if (init.authenticator) options.authenticator = init.authenticator;
  if (init.credentials !== undefined) options.credentials = init.credentials;
  return new (Transport as new (options: Partial<TransportInit>) => Transport)(options);
}
