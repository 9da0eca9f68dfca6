/**
 * Agent card discovery for the A2A client: `GET {baseUrl}/.well-known/agent-card.json`, cached per
 * base URL until a call fails for a reason other than the agent's own answer (the agent may have
 * moved or changed its interfaces), and the interface the client talks to.
 */
import { UnsupportedOperationError } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { AGENT_CARD_PATH, a2aInterfacesOf } from '../agent-card.js';
import { A2A_BINDINGS, isBinding, type A2ABinding, type A2AEndpoint } from './bindings.js';
import { malformed, statusError, type A2AHttp, type CallOptions } from './http.js';

export interface ResolvedCard {
  /** The card as served, its security scheme entries in canonical form. */
  card: Record<string, unknown>;
  endpoint: A2AEndpoint;
}

export interface CardResolverOptions {
  /** Bindings in order of preference; absent: the card's order. */
  bindings: readonly A2ABinding[] | undefined;
  /** Replaces the interface's tenant. */
  tenant: string | undefined;
}

export class CardResolver {
  private readonly cards = new Map<string, Promise<ResolvedCard>>();

  constructor(
    private readonly http: A2AHttp,
    private readonly options: CardResolverOptions,
  ) {}

  /** The card of the agent at `baseUrl`, fetched once and shared by concurrent callers. */
  resolve(baseUrl: string, options: CallOptions = {}): Promise<ResolvedCard> {
    const key = baseUrl.replace(/\/+$/, '');
    const cached = this.cards.get(key);
    if (cached) return cached;
    const pending = this.fetch(key, options);
    this.cards.set(key, pending);
    pending.catch(() => {
      if (this.cards.get(key) === pending) this.cards.delete(key);
    });
    return pending;
  }

  /**
   * Takes a card already known for `baseUrl` (a registry entry's): calls use it without fetching
   * until one fails short of the agent's answer. UNSUPPORTED_OPERATION when it offers no interface
   * this client speaks.
   */
  remember(baseUrl: string, card: Record<string, unknown>): void {
    const key = baseUrl.replace(/\/+$/, '');
    const canonical = canonicalCard(card);
    const resolved: ResolvedCard = {
      card: canonical,
      endpoint: this.endpoint(canonical, `${key}${AGENT_CARD_PATH}`),
    };
    this.cards.set(key, Promise.resolve(resolved));
  }

  /** Forgets the card: the next call fetches it again. */
  forget(baseUrl: string): void {
    this.cards.delete(baseUrl.replace(/\/+$/, ''));
  }

  private async fetch(baseUrl: string, options: CallOptions): Promise<ResolvedCard> {
    const url = `${baseUrl}${AGENT_CARD_PATH}`;
    // The card is shared by every caller: one caller's abort must not fail the others.
    const answer = await this.http.json({ method: 'GET', url }, { timeoutMs: options.timeoutMs });
    if (answer.status >= 400) throw statusError(answer.status, url);
    if (!isRecord(answer.body)) throw malformed(url, 'an agent card that is not a JSON object');
    const card = canonicalCard(answer.body);
    return { card, endpoint: this.endpoint(card, url) };
  }

  private endpoint(card: Record<string, unknown>, cardUrl: string): A2AEndpoint {
    const interfaces = a2aInterfacesOf(card).filter(
      (entry) =>
        isBinding(entry.protocolBinding) &&
        (entry.protocolVersion === '' || entry.protocolVersion.startsWith('1.')),
    );
    const preference = this.options.bindings;
    const chosen = preference
      ? preference
          .map((binding) => interfaces.find((entry) => entry.protocolBinding === binding))
          .find(Boolean)
      : interfaces[0];
    if (!chosen) {
      const wanted = (preference ?? A2A_BINDINGS).join(' or ');
      throw new UnsupportedOperationError(
        `The agent card at ${cardUrl} offers no A2A 1.0 ${wanted} interface`,
      );
    }
    const endpoint: A2AEndpoint = {
      binding: chosen.protocolBinding as A2ABinding,
      url: new URL(chosen.url, cardUrl).toString(),
    };
    const tenant = this.options.tenant ?? chosen.tenant;
    if (typeof tenant === 'string' && tenant !== '') endpoint.tenant = tenant;
    return endpoint;
  }
}

/**
 * Some servers (the official JS SDK's own card handler among them) write scheme entries in an
 * in-memory form, `{"scheme": {"$case": "<wrapper>", "value": {...}}}`: those are rewritten to the
 * canonical `{"<wrapper>": {...}}`; entries that are neither are dropped rather than failing discovery.
 */
function canonicalCard(card: Record<string, unknown>): Record<string, unknown> {
  if (!isRecord(card.securitySchemes)) return card;
  const schemes: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(card.securitySchemes)) {
    if (!isRecord(entry)) continue;
    const inner = entry.scheme;
    if (isRecord(inner) && typeof inner.$case === 'string' && isRecord(inner.value)) {
      schemes[name] = { [inner.$case]: inner.value };
    } else if (Object.keys(entry).length === 1 && isRecord(Object.values(entry)[0])) {
      schemes[name] = entry;
    }
  }
  return { ...card, securitySchemes: schemes };
}
