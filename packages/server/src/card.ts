import type { AgentCard } from '@agent/core';
import type { Authenticator } from '@agent/auth';

/**
 * A card served behind an authenticator advertises it, even when the bound handler does not know
 * the transport's authenticator (a plain function handler); a card that already names schemes is kept.
 */
export function withSecuritySchemes(card: AgentCard, authenticator: Authenticator | undefined): AgentCard {
  if (!authenticator || card.securitySchemes) return card;
  const scheme = authenticator.securityScheme;
  return { ...card, securitySchemes: { [scheme.authType]: scheme.toDict() } };
}
