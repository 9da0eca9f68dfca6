/**
 * The cards a registry holds: native agent cards, and A2A 1.0 cards (told apart by
 * `supportedInterfaces`, which native cards do not have). A2A cards are checked by `@agent/a2a`,
 * an optional peer loaded only when one arrives.
 */
import { validateAgentCard, type AgentCard } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import { loadOptional } from './optional-package.js';

/** An A2A 1.0 agent card, as `/.well-known/agent-card.json` serves it. */
export interface A2ARegistryCard {
  name: string;
  supportedInterfaces: { url: string; protocolBinding: string; protocolVersion: string; tenant?: string }[];
  [field: string]: unknown;
}

export type RegistryCard = AgentCard | A2ARegistryCard;

export function isA2ARegistryCard(card: unknown): card is A2ARegistryCard {
  return isRecord(card) && Array.isArray(card.supportedInterfaces);
}

/** A card of either kind, checked; VALIDATION_FAILED (with JSON pointers) when it is neither. */
export function validateRegistryCard(value: unknown): RegistryCard {
  if (!isA2ARegistryCard(value)) return validateAgentCard(value);
  const a2a = loadOptional('@agent/a2a', 'The card is an A2A card');
  const validate = a2a.validateA2ACard as (card: unknown) => Record<string, unknown>;
  return validate(value) as A2ARegistryCard;
}
