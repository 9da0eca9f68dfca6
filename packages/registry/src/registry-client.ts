import { ValueError, type SendOptions, type TlsOptions, type Transport } from '@agent/core';
import { checkOptionNames, isRecord, numberOption, optionNames } from '@agent/core/internal';
import type { Authenticator } from '@agent/auth';
import { HTTPTransport, type HTTPTransportOptions } from '@agent/transport-http';
import { validateRegistryCard, type RegistryCard } from './registry-card.js';
import {
  readEntryPage,
  readEntryView,
  type RegistryEntryPage,
  type RegistryEntryView,
} from './entry-view.js';
import { MAX_PAGE_SIZE, REGISTRY_OPERATIONS } from './operations.js';

export interface RegistryClientOptions {
  /** The registry's address: the URL its HTTPTransport serves (`http://127.0.0.1:8080`). */
  url: string;
  /** The raw credential, authenticated lazily on the first call. Needs `authenticator`. */
  credentials?: string;
  /** Builds what is sent from `credentials` (the registry's own kind: APIKeyAuth, BearerTokenAuth…). */
  authenticator?: Authenticator;
  /** The tenant every call acts for. Default `""`, the default tenant. */
  tenant?: string;
  /** Deadline of each call in ms; 0 = none. Default 30000. */
  timeoutMs?: number;
  /** TLS settings for an `https` registry (a private CA, a client certificate). */
  tls?: TlsOptions;
  /**
   * An HTTP transport to send through instead of one built from the options above; it carries its
   * own credentials, tenant and timeout, and stays yours to stop.
   */
  transport?: Transport;
}

const OPTION_NAMES = optionNames<RegistryClientOptions>({
  url: true,
  credentials: true,
  authenticator: true,
  tenant: true,
  timeoutMs: true,
  tls: true,
  transport: true,
});

/** What a given `transport` already decides; naming them too would be ignored, so it is refused. */
const TRANSPORT_SETTINGS = ['credentials', 'authenticator', 'tenant', 'timeoutMs', 'tls'] as const;

export interface RegistryCallOptions {
  signal?: AbortSignal;
  /** Overrides the client's timeout for this call, in ms. */
  timeoutMs?: number;
}

export interface ListAgentsOptions {
  /** Only agents with a skill of this id, or a skill tagged with it. */
  skill?: string;
  /** Only the agent of exactly this card name. */
  name?: string;
  /** 1..100; the registry's default is 50. */
  pageSize?: number;
  /** The previous page's `next_page_token`. */
  pageToken?: string;
}

export type FindAgentsQuery = Pick<ListAgentsOptions, 'skill' | 'name'>;

const CALL_OPTIONS = optionNames<RegistryCallOptions>({ signal: true, timeoutMs: true });
const LIST_OPTIONS = optionNames<ListAgentsOptions>({
  skill: true,
  name: true,
  pageSize: true,
  pageToken: true,
});
const FIND_OPTIONS = optionNames<FindAgentsQuery>({ skill: true, name: true });

/**
 * Talks to a registry over HTTP: register a card, keep it alive, take it out, look agents up. Every
 * call goes through `transport.send`; with `credentials` the first call authenticates. Refusals
 * arrive as the typed errors of `@agent/core`: NotFoundError, AlreadyExistsError,
 * ResourceExhaustedError, ValidationError, UnauthenticatedError…
 */
export class RegistryClient {
  readonly url: string;
  readonly transport: Transport;
  private readonly ownsTransport: boolean;

  constructor(options: RegistryClientOptions) {
    if (!isRecord(options)) throw new ValueError('RegistryClient needs an options object');
    checkOptionNames('RegistryClient', options, OPTION_NAMES);
    if (typeof options.url !== 'string' || options.url === '') {
      throw new ValueError('RegistryClient needs the registry url');
    }
    this.url = options.url;
    if (options.transport !== undefined) {
      if (!isRecord(options.transport) || typeof options.transport.send !== 'function') {
        throw new ValueError('RegistryClient: transport must be a Transport');
      }
      const named = TRANSPORT_SETTINGS.filter((name) => options[name] !== undefined);
      if (named.length > 0) {
        throw new ValueError(
          `RegistryClient: ${named.join(', ')} configure the transport it builds; a given transport carries its own`,
        );
      }
      this.transport = options.transport;
      this.ownsTransport = false;
    } else {
      const init: HTTPTransportOptions = { url: options.url };
      if (options.credentials !== undefined) init.credentials = options.credentials;
      if (options.authenticator !== undefined) init.authenticator = options.authenticator;
      if (options.tenant !== undefined) init.tenant = options.tenant;
      if (options.timeoutMs !== undefined) init.timeoutMs = options.timeoutMs;
      if (options.tls !== undefined) init.tls = options.tls;
      this.transport = new HTTPTransport(init);
      this.ownsTransport = true;
    }
  }

  /**
   * Registers the card under its `name` in the caller's tenant; the entry is the caller's. An entry
   * of that name that is still live, the caller's own included, is AlreadyExistsError: renew it with
   * `heartbeat` or change it with `replace`.
   */
  async register(card: RegistryCard, options: RegistryCallOptions = {}): Promise<RegistryEntryView> {
    const checked = validateRegistryCard(card);
    const sent = sendOptions('register', options);
    return readEntryView(
      await this.transport.send(REGISTRY_OPERATIONS.register, this.url, checked, undefined, sent),
    );
  }

  /** Replaces the card of the caller's own live entry `card.name` and renews it; NotFoundError otherwise. */
  async replace(card: RegistryCard, options: RegistryCallOptions = {}): Promise<RegistryEntryView> {
    const checked = validateRegistryCard(card);
    const sent = sendOptions('replace', options);
    return readEntryView(
      await this.transport.send(REGISTRY_OPERATIONS.replace, this.url, checked, { name: checked.name }, sent),
    );
  }

  /** Renews the caller's own live entry; NotFoundError when it expired, is gone or is not the caller's. */
  async heartbeat(name: string, options: RegistryCallOptions = {}): Promise<RegistryEntryView> {
    const sent = sendOptions('heartbeat', options);
    const params = { name: nameOf('heartbeat', name) };
    return readEntryView(
      await this.transport.send(REGISTRY_OPERATIONS.heartbeat, this.url, {}, params, sent),
    );
  }

  /** Removes the caller's own live entry and resolves with it; NotFoundError otherwise. */
  async deregister(name: string, options: RegistryCallOptions = {}): Promise<RegistryEntryView> {
    const sent = sendOptions('deregister', options);
    const data = { name: nameOf('deregister', name) };
    return readEntryView(
      await this.transport.send(REGISTRY_OPERATIONS.deregister, this.url, data, undefined, sent),
    );
  }

  /** One live entry of the caller's tenant, whoever registered it; NotFoundError otherwise. */
  async get(name: string, options: RegistryCallOptions = {}): Promise<RegistryEntryView> {
    const sent = sendOptions('get', options);
    const data = { name: nameOf('get', name) };
    return readEntryView(
      await this.transport.send(REGISTRY_OPERATIONS.get_agent, this.url, data, undefined, sent),
    );
  }

  /**
   * One page of the live entries of the caller's tenant, by name. Pass `next_page_token` back as
   * `pageToken` (with the same filters) for the next page; it is `""` on the last one.
   */
  async list(query: ListAgentsOptions = {}, options: RegistryCallOptions = {}): Promise<RegistryEntryPage> {
    const data = listRequest(query);
    const sent = sendOptions('list', options);
    return readEntryPage(
      await this.transport.send(REGISTRY_OPERATIONS.list_agents, this.url, data, undefined, sent),
    );
  }

  /** Every live entry that matches, all pages walked (each call of it gets the whole deadline). */
  async find(query: FindAgentsQuery, options: RegistryCallOptions = {}): Promise<RegistryEntryView[]> {
    optionsOf('find query', query, FIND_OPTIONS);
    const found: RegistryEntryView[] = [];
    const seen = new Set<string>();
    let pageToken: string | undefined;
    for (;;) {
      const page = await this.list({ ...query, pageSize: MAX_PAGE_SIZE, pageToken }, options);
      found.push(...page.agents);
      if (page.next_page_token === '') return found;
      // A registry that hands the same token back would make this loop forever.
      if (seen.has(page.next_page_token)) {
        throw new ValueError('The registry returned a page token it had returned before');
      }
      seen.add(page.next_page_token);
      pageToken = page.next_page_token;
    }
  }

  /** Releases the connections of the transport it built; a given transport stays yours to stop. */
  async close(): Promise<void> {
    if (this.ownsTransport) await this.transport.stop();
  }
}

/** `options` unchanged once it is an object naming only `accepted` options (its type kept). */
function optionsOf<T extends object>(what: string, options: T, accepted: readonly string[]): T {
  if (!isRecord(options)) throw new ValueError(`${what} must be an object`);
  checkOptionNames(what, options, accepted);
  return options;
}

function sendOptions(method: string, given: RegistryCallOptions): SendOptions {
  const options = optionsOf(`${method} options`, given, CALL_OPTIONS);
  const sent: SendOptions = {};
  if (options.signal !== undefined) sent.signal = options.signal;
  if (options.timeoutMs !== undefined) sent.timeoutMs = numberOption('timeoutMs', options.timeoutMs, 0);
  return sent;
}

function nameOf(method: string, name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new ValueError(`${method} needs an agent name`);
  return name;
}

function filterOf(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new ValueError(`${field} must be a non-empty string`);
  return value;
}

/** The `list_agents` query in wire names, absent options left out. */
function listRequest(given: ListAgentsOptions): Record<string, string | number> {
  const query = optionsOf('list query', given, LIST_OPTIONS);
  const request: Record<string, string | number> = {};
  const skill = filterOf('skill', query.skill);
  if (skill !== undefined) request.skill = skill;
  const name = filterOf('name', query.name);
  if (name !== undefined) request.name = name;
  const pageSize = query.pageSize;
  if (pageSize !== undefined) {
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw new ValueError(`pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${String(pageSize)}`);
    }
    request.page_size = pageSize;
  }
  const pageToken = filterOf('pageToken', query.pageToken);
  if (pageToken !== undefined) request.page_token = pageToken;
  return request;
}
