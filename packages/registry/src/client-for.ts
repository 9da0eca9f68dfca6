import { ValueError, type AgentCard, type TlsOptions, type Transport } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import type { Authenticator } from '@agent/auth';
import { AgentClient } from '@agent/client';
import { HTTPTransport } from '@agent/transport-http';
import type { RegistryEntryView } from './entry-view.js';

export interface ClientForOptions {
  /** The raw credential for the agent, authenticated lazily on the first call. Needs `authenticator`. */
  credentials?: string;
  authenticator?: Authenticator;
  /** The tenant every call acts for. Default `""`. */
  tenant?: string;
  /** Deadline of each call in ms; 0 = none. Default 30000. */
  timeoutMs?: number;
  /** TLS settings for a secure agent URL (`https`, `wss`, `grpcs`). */
  tls?: TlsOptions;
}

const OPTION_NAMES = optionNames<ClientForOptions>({
  credentials: true,
  authenticator: true,
  tenant: true,
  timeoutMs: true,
  tls: true,
});

type TransportInit = ClientForOptions & { url: string };
type TransportClass = new (options: TransportInit) => Transport;

/** The transport packages a registry does not depend on: loaded only when a card names their scheme. */
const OPTIONAL: Record<string, { module: string; className: string }> = {
  ws: { module: '@agent/transport-ws', className: 'WebSocketTransport' },
  wss: { module: '@agent/transport-ws', className: 'WebSocketTransport' },
  grpc: { module: '@agent/transport-grpc', className: 'GRPCTransport' },
  grpcs: { module: '@agent/transport-grpc', className: 'GRPCTransport' },
};

/**
 * An AgentClient for the agent a registry entry (or a card) describes, over the transport its
 * `card.url` scheme names: http(s) → HTTPTransport, ws(s) → WebSocketTransport, grpc(s) →
 * GRPCTransport. The last two are optional peers of this package, loaded on first use. The
 * client owns the transport it was built with: `close()` stops it too.
 */
export function clientFor(entry: RegistryEntryView | AgentCard, options: ClientForOptions = {}): AgentClient {
  const card = cardOf(entry);
  if (!isRecord(options)) throw new ValueError('clientFor options must be an object');
  checkOptionNames('clientFor', options, OPTION_NAMES);
  const url = card.url;
  let scheme: string;
  try {
    scheme = new URL(url).protocol.replace(/:$/, '');
  } catch {
    throw new ValueError(`clientFor: the card of ${card.name} has no valid url (got ${JSON.stringify(url)})`);
  }
  const init: TransportInit = { url };
  for (const name of OPTION_NAMES as readonly (keyof ClientForOptions)[]) {
    if (options[name] !== undefined) Object.assign(init, { [name]: options[name] });
  }
  const Transport = transportClass(scheme, card.name);
  return new OwningAgentClient({ transport: new Transport(init), baseUrl: url });
}

/** An entry's card, or the card itself; an entry is recognised by its `card` object. */
function cardOf(entry: RegistryEntryView | AgentCard): AgentCard {
  if (!isRecord(entry)) throw new ValueError('clientFor needs a registry entry or an AgentCard');
  const card = isRecord((entry as RegistryEntryView).card) ? (entry as RegistryEntryView).card : entry;
  if (typeof card.url !== 'string' || card.url === '') {
    throw new ValueError('clientFor needs a card with a url');
  }
  return card as AgentCard;
}

function transportClass(scheme: string, agent: string): TransportClass {
  if (scheme === 'http' || scheme === 'https') return HTTPTransport as unknown as TransportClass;
  const optional = OPTIONAL[scheme];
  if (!optional) {
    throw new ValueError(
      `clientFor: agent ${agent} is reachable over "${scheme}", which no transport serves (http, https, ws, wss, grpc, grpcs)`,
    );
  }
  const module = loadOptional(optional.module, scheme, agent);
  const Transport = module[optional.className];
  if (typeof Transport !== 'function') {
    throw new ValueError(`clientFor: ${optional.module} does not export ${optional.className}`);
  }
  return Transport as TransportClass;
}

function loadOptional(module: string, scheme: string, agent: string): Record<string, unknown> {
  try {
    // Loaded on first use so that the registry never needs the package unless a card names it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(module) as Record<string, unknown>;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const missing = code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND';
    throw new ValueError(
      missing
        ? `clientFor: agent ${agent} is reachable over ${scheme}, which needs the ${module} package: install it beside @agent/registry (pnpm add ${module})`
        : `clientFor: ${module} could not be loaded: ${(error as Error).message}`,
      { cause: error, data: { package: module } },
    );
  }
}

/** The AgentClient clientFor hands out: the transport is its own, so closing the client stops it. */
class OwningAgentClient extends AgentClient {
  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      await this.transport.stop();
    }
  }
}
