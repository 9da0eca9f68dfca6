/**
 * A registry entry as it travels: the card and its times, never who owns it. The server maps store
 * entries to it; the client checks what it receives as thoroughly as a Task is checked.
 */
import { ValidationError } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import type { RegistryEntry } from '@agent/events';
import { validateRegistryCard, type RegistryCard } from './registry-card.js';

/** An entry on the wire; times are ISO 8601 UTC. */
export interface RegistryEntryView {
  name: string;
  /** A native card, or an A2A 1.0 card (with `supportedInterfaces`). */
  card: RegistryCard;
  registered_at: string;
  /** The last register, replace or heartbeat. */
  heartbeat_at: string;
  /** When the entry disappears unless it is renewed. */
  expires_at: string;
}

/** One `list_agents` page; `next_page_token` is `""` on the last one. */
export interface RegistryEntryPage {
  agents: RegistryEntryView[];
  next_page_token: string;
}

const TIMES = ['registered_at', 'heartbeat_at', 'expires_at'] as const;

/** The wire form of a stored entry: its tenant and principal stay on the server. */
export function toEntryView(entry: RegistryEntry): RegistryEntryView {
  return {
    name: entry.name,
    card: entry.card,
    registered_at: entry.registered_at,
    heartbeat_at: entry.heartbeat_at,
    expires_at: entry.expires_at,
  };
}

function invalid(what: string, pointer: string, message: string): never {
  throw new ValidationError(`Invalid ${what}: ${pointer} ${message}`, {
    data: { errors: [{ pointer, message }] },
  });
}

/** A received entry, checked: its card by core's validator, its name and times as strings. */
export function readEntryView(value: unknown, what = 'registry entry'): RegistryEntryView {
  if (!isRecord(value)) invalid(what, '/', 'must be object');
  if (typeof value.name !== 'string' || value.name === '')
    invalid(what, '/name', 'must be a non-empty string');
  for (const field of TIMES) {
    if (typeof value[field] !== 'string') invalid(what, `/${field}`, 'must be string');
  }
  const card = validateRegistryCard(value.card);
  return {
    name: value.name,
    card,
    registered_at: value.registered_at as string,
    heartbeat_at: value.heartbeat_at as string,
    expires_at: value.expires_at as string,
  };
}

/** A received `list_agents` page, every entry checked. */
export function readEntryPage(value: unknown): RegistryEntryPage {
  const what = 'registry listing';
  if (!isRecord(value) || !Array.isArray(value.agents) || typeof value.next_page_token !== 'string') {
    invalid(what, '/', 'must be {"agents": [...], "next_page_token": "..."}');
  }
  return {
    agents: value.agents.map((entry) => readEntryView(entry, what)),
    next_page_token: value.next_page_token,
  };
}
