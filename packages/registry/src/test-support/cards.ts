/** Cards and entries for the registry's tests. */
import type { AgentCard } from '@agent/core';
import type { RegistryEntryView } from '../entry-view.js';

export function card(name: string, overrides: Partial<AgentCard> = {}): AgentCard {
  return { name, description: `the ${name} agent`, url: 'http://127.0.0.1:1', ...overrides };
}

/** An entry as a registry answers it, living `ttlMs` from now. */
export function entryOf(agent: AgentCard, ttlMs = 30_000): RegistryEntryView {
  const now = Date.now();
  return {
    name: agent.name,
    card: agent,
    registered_at: new Date(now).toISOString(),
    heartbeat_at: new Date(now).toISOString(),
    expires_at: new Date(now + ttlMs).toISOString(),
  };
}
