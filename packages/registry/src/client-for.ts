import { ValueError, type TlsOptions, type Transport } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import type { Authenticator } from '@agent/auth';
import { AgentClient } from '@agent/client';
import { HTTPTransport } from '@agent/transport-http';
import type { RegistryEntryView } from './entry-view.js';
import { loadOptional } from './optional-package.js';
import { isA2ARegistryCard, type A2ARegistryCard, type RegistryCard } from './registry-card.js';

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
 * An AgentClient for the agent a registry entry (or a card) describes. A native card: over the
 * transport its `card.url` scheme names: http(s) → HTTPTransport, ws(s) → WebSocketTransport,
 * grpc(s) → GRPCTransport. An A2A 1.0 card: over `A2ATransport` of `@agent/a2a`, speaking the
 * first JSONRPC or HTTP+JSON interface the card lists (and echoing its tenant unless `tenant` is
 * given). WebSocket, gRPC and A2A are optional peers of this package, loaded on first use. The
 * client owns the transport it was built with: `close()` stops it too.
 */
export function clientFor(
  entry: RegistryEntryView | RegistryCard,
  options: ClientForOptions = {},
): AgentClient {
  const card = cardOf(entry);
  if (!isRecord(options)) throw new ValueError('clientFor options must be an object');
  checkOptionNames('clientFor', options, OPTION_NAMES);
  if (isA2ARegistryCard(card)) return a2aClient(card, options);
  const url = card.url;
  if (typeof url !== 'string' || url === '') throw new ValueError('clientFor needs a card with a url');
  let scheme: string;
  try {
    scheme = new URL(url).protocol.replace(/:$/, '');
  } catch {
    throw new ValueError(`clientFor: the card of ${card.name} has no valid url (got ${JSON.stringify(url)})`);
  }
  const init: TransportInit = { url, ...given(options) };
  const Transport = transportClass(scheme, card.name);
  return new OwningAgentClient({ transport: new Transport(init), baseUrl: url });
}

/** The options the caller set, as a transport takes them. */
function given(options: ClientForOptions): ClientForOptions {
  const init: ClientForOptions = {};
  for (const name of OPTION_NAMES as readonly (keyof ClientForOptions)[]) {
    if (options[name] !== undefined) Object.assign(init, { [name]: options[name] });
  }
  return init;
}

interface CardUser extends Transport {
  useCard(baseUrl: string, card: Record<string, unknown>): void;
}

/**
 * An A2A agent's client: the card is known already, so the transport takes it as the card of the
 * first interface's origin (where `/.well-known/agent-card.json` is fetched again should a call fail
 * short of the agent's answer).
 */
function a2aClient(card: A2ARegistryCard, options: ClientForOptions): AgentClient {
  const first = card.supportedInterfaces[0];
  let baseUrl: string;
  try {
    baseUrl = new URL(String(first?.url)).origin;
  } catch {
    throw new ValueError(`clientFor: the A2A card of ${card.name} names no valid interface url`);
  }
  const module = loadOptional('@agent/a2a', `clientFor: agent ${card.name} speaks A2A`);
  const A2ATransport = module.A2ATransport as new (options: ClientForOptions) => CardUser;
  const transport = new A2ATransport(given(options));
  transport.useCard(baseUrl, card);
  return new OwningAgentClient({ transport, baseUrl });
}

/** An entry's card, or the card itself; an entry is recognised by its `card` object. */
function cardOf(entry: RegistryEntryView | RegistryCard): RegistryCard {
  if (!isRecord(entry)) throw new ValueError('clientFor needs a registry entry or an AgentCard');
  const record: Record<string, unknown> = entry;
  return (isRecord(record.card) ? record.card : record) as RegistryCard;
}

function transportClass(scheme: string, agent: string): TransportClass {
  if (scheme === 'http' || scheme === 'https') return HTTPTransport as unknown as TransportClass;
  const optional = OPTIONAL[scheme];
  if (!optional) {
    throw new ValueError(
      `clientFor: agent ${agent} is reachable over "${scheme}", which no transport serves (http, https, ws, wss, grpc, grpcs)`,
    );
  }
  const module = loadOptional(optional.module, `clientFor: agent ${agent} is reachable over ${scheme}`);
  const Transport = module[optional.className];
  if (typeof Transport !== 'function') {
    throw new ValueError(`clientFor: ${optional.module} does not export ${optional.className}`);
  }
  return Transport as TransportClass;
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
