import { AgentError, ValidationError, ValueError, type AgentCard } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import type { ServerCall } from '@agent/server';
import { InMemoryRegistryStore, type RegistryPage, type RegistryStore } from '@agent/events';
import {
  jsonEndpoint,
  type HttpEndpoint,
  type HttpRouteContext,
  type HttpRoutes,
  type JsonEndpointAnswer,
  type JsonEndpointInput,
  type OpenApiContext,
  type OpenApiContribution,
} from '@agent/transport-http';
import { validateRegistryCard, type RegistryCard } from './registry-card.js';
import { toEntryView, type RegistryEntryPage, type RegistryEntryView } from './entry-view.js';
import { alreadyRegistered, notRegistered, registryFull } from './errors.js';
import { invalidListQuery, parseListQuery } from './list-query.js';
import { DEFAULT_MAX_ENTRIES, DEFAULT_TTL_MS, REGISTRY_OPERATIONS } from './operations.js';
import { registryOpenApi } from './registry-openapi.js';

export interface RegistryOptions {
  /** Where entries live. Default: a new InMemoryRegistryStore (closed by `close()`). */
  store?: RegistryStore;
  /** How long an entry lives after its last register, replace or heartbeat, in ms. Default 30000. */
  ttlMs?: number;
  /** The most live entries held, all tenants together. Default 10000. */
  maxEntries?: number;
}

const OPTION_NAMES = optionNames<RegistryOptions>({ store: true, ttlMs: true, maxEntries: true });

const STORE_METHODS = [
  'createEntry',
  'replaceEntry',
  'heartbeatEntry',
  'deleteEntry',
  'getEntry',
  'listEntries',
  'countEntries',
  'close',
] as const;

/**
 * The agent registry, served beside the task routes of an HTTPTransport
 * (`new HTTPTransport({ url, routes: [registry] })`), so its calls go through the same pipeline:
 * the same authenticator, tenant rule and error policy. Entries belong to whoever registered them
 * (principal and tenant); only the owner may replace, renew or remove one, and to anyone else it
 * answers exactly as a name nobody registered does. Everyone in a tenant can read its entries.
 */
export class Registry implements HttpRoutes {
  readonly store: RegistryStore;
  readonly ttlMs: number;
  readonly maxEntries: number;
  private readonly ownsStore: boolean;

  constructor(options: RegistryOptions = {}) {
    if (!isRecord(options as unknown)) throw new ValueError('Registry options must be an object');
    checkOptionNames('Registry', options, OPTION_NAMES);
    this.ttlMs = positiveInteger('ttlMs', options.ttlMs, DEFAULT_TTL_MS);
    this.maxEntries = positiveInteger('maxEntries', options.maxEntries, DEFAULT_MAX_ENTRIES);
    if (options.store !== undefined) {
      const store = options.store as unknown;
      if (!isRecord(store) || STORE_METHODS.some((name) => typeof store[name] !== 'function')) {
        throw new ValueError(`Registry: store must be a RegistryStore (${STORE_METHODS.join(', ')})`);
      }
      this.store = options.store;
      this.ownsStore = false;
    } else {
      this.store = new InMemoryRegistryStore();
      this.ownsStore = true;
    }
  }

  /** The six registry routes (jsonEndpoint puts them below the transport's base path). */
  endpoints(context: HttpRouteContext): HttpEndpoint[] {
    const route = (
      spec: { name: string; method: HttpEndpoint['method']; path: string },
      body: boolean,
      run: (call: ServerCall, input: JsonEndpointInput) => Promise<JsonEndpointAnswer>,
    ): HttpEndpoint =>
      jsonEndpoint({ method: spec.method, path: spec.path, operation: spec.name, body, run }, context);
    const ops = REGISTRY_OPERATIONS;
    return [
      route(ops.register, true, (call, { body }) => this.register(call, body)),
      route(ops.list_agents, false, (call, { query }) => this.list(call, query)),
      route(ops.replace, true, (call, { body, params }) => this.replace(call, nameParam(params), body)),
      // No body to read: an empty one and `{}` are alike.
      route(ops.heartbeat, false, (call, { params }) => this.heartbeat(call, nameParam(params))),
      route(ops.deregister, false, (call, { params }) => this.deregister(call, nameParam(params))),
      route(ops.get_agent, false, (call, { params }) => this.get(call, nameParam(params))),
    ];
  }

  /** The six routes in the transport's OpenAPI document (`GET /openapi.json`). */
  openapi(context: OpenApiContext): OpenApiContribution {
    return registryOpenApi(context);
  }

  /** Closes the store the registry created; a store passed in stays the caller's to close. */
  async close(): Promise<void> {
    if (this.ownsStore) await this.store.close();
  }

  private async register(call: ServerCall, body: unknown): Promise<JsonEndpointAnswer> {
    const card = addressableCard(body);
    const result = await this.store.createEntry(call.owner, storable(card), {
      ttlMs: this.ttlMs,
      maxEntries: this.maxEntries,
    });
    if ('entry' in result) return { status: 201, body: toEntryView(result.entry) };
    if (result.refused === 'exists') throw alreadyRegistered(card.name);
    throw registryFull();
  }

  private async replace(call: ServerCall, name: string, body: unknown): Promise<JsonEndpointAnswer> {
    const card = cardNamed(name, body);
    const entry = await this.store.replaceEntry(call.owner, storable(card), this.ttlMs);
    if (!entry) throw notRegistered(name);
    return { body: toEntryView(entry) };
  }

  private async heartbeat(call: ServerCall, name: string): Promise<JsonEndpointAnswer> {
    const entry = await this.store.heartbeatEntry(call.owner, name, this.ttlMs);
    if (!entry) throw notRegistered(name);
    return { body: toEntryView(entry) };
  }

  private async deregister(call: ServerCall, name: string): Promise<JsonEndpointAnswer> {
    const entry = await this.store.deleteEntry(call.owner, name);
    if (!entry) throw notRegistered(name);
    return { body: toEntryView(entry) };
  }

  private async get(call: ServerCall, name: string): Promise<JsonEndpointAnswer> {
    const entry = await this.store.getEntry(call.tenant, name);
    if (!entry) throw notRegistered(name);
    return { body: toEntryView(entry) };
  }

  private async list(call: ServerCall, query: URLSearchParams): Promise<JsonEndpointAnswer> {
    const parsed = parseListQuery(query);
    let page: RegistryPage;
    try {
      page = await this.store.listEntries({
        tenant: call.tenant,
        pageSize: parsed.pageSize,
        ...(parsed.name === undefined ? {} : { name: parsed.name }),
        ...(parsed.skill === undefined ? {} : { skill: parsed.skill }),
        ...(parsed.pageToken === undefined ? {} : { pageToken: parsed.pageToken }),
      });
    } catch (error) {
      // Everything else was checked above: a store refuses only a token it did not issue.
      if (error instanceof AgentError && error.code === 'VALUE_ERROR' && parsed.pageToken !== undefined) {
        throw invalidListQuery('/page_token', 'is not a page token of this query');
      }
      throw error;
    }
    const answer: RegistryEntryPage = {
      agents: page.entries.map((entry): RegistryEntryView => toEntryView(entry)),
      next_page_token: page.next_page_token,
    };
    return { body: answer };
  }
}

function positiveInteger(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new ValueError(`Registry: ${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

function nameParam(params: Record<string, string>): string {
  const name = params.name;
  // The router matches `{name}` only on a non-empty segment; this guards a custom backend.
  if (typeof name !== 'string' || name === '') throw notRegistered('');
  return name;
}

/**
 * A valid card whose name can be addressed later: `.` and `..` cannot be a URL path segment (clients
 * resolve them away), so an entry under either could never be heartbeat, replaced or deleted.
 */
function addressableCard(body: unknown): RegistryCard {
  const card = validateRegistryCard(body);
  if (card.name === '.' || card.name === '..') {
    const message = 'cannot be "." or ".." (not addressable in a URL path)';
    throw new ValidationError(`Invalid agent card: /name ${message}`, {
      data: { errors: [{ pointer: '/name', message }] },
    });
  }
  return card;
}

/**
 * The store keeps a card as JSON and reads only its name and skills, which both kinds have: an A2A
 * card is stored as it came.
 */
function storable(card: RegistryCard): AgentCard {
  return card as AgentCard;
}

/** A PUT's card: valid, and registered under the name in its path. */
function cardNamed(name: string, body: unknown): RegistryCard {
  const card = addressableCard(body);
  if (card.name !== name) {
    const message = 'must equal the agent name in the path';
    throw new ValidationError(`Invalid agent card: /name ${message}`, {
      data: { errors: [{ pointer: '/name', message }] },
    });
  }
  return card;
}
