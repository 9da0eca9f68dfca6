import { ValueError, type AgentCard, type TlsOptions } from '@agent/core';
import { checkOptionNames, isRecord, numberOption, optionNames } from '@agent/core/internal';
import type { Authenticator } from '@agent/auth';
import { defaultSearchPaths, requirePackage } from './load-package.js';

/** `new Agent({ registry })`: the registry the agent registers its card with while it runs. */
export interface AgentRegistryOptions {
  /** The registry's HTTP address (`http://` or `https://`), e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** The raw credential sent to the registry; needs `authenticator`, which builds what is sent. */
  credentials?: string;
  /** Client side: builds what is sent from `credentials`. */
  authenticator?: Authenticator;
  /** The tenant the agent registers in. Default `""`, the default tenant. */
  tenant?: string;
  /**
   * Milliseconds between heartbeats. Default: a third of the entry's lifetime as the registry
   * reports it (10 000 with the registry's default 30 s), so two may fail before the entry expires.
   */
  heartbeatMs?: number;
  /** Deadline of each call to the registry in ms (also bounds the deregistration in `stop()`); 0 = none. Default 30 000. */
  timeoutMs?: number;
  /** TLS settings for an `https://` registry (a private CA, a client certificate). */
  tls?: TlsOptions;
}

const OPTION_NAMES = optionNames<AgentRegistryOptions>({
  url: true,
  credentials: true,
  authenticator: true,
  tenant: true,
  heartbeatMs: true,
  timeoutMs: true,
  tls: true,
});

export const REGISTRY_PACKAGE = '@agent/registry';

/**
 * Checks `new Agent({ registry })` when the agent is built, so a typo fails at once rather than at
 * `start()`. What only the registry client can judge (the tenant's syntax) is left to it.
 */
export function registryOption(value: unknown): AgentRegistryOptions | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value))
    throw new ValueError('registry must be an object: { url, credentials?, heartbeatMs?, ... }');
  checkOptionNames('registry', value, OPTION_NAMES);
  const { url, credentials, authenticator, tenant, heartbeatMs, timeoutMs, tls } = value;
  if (typeof url !== 'string' || url === '')
    throw new ValueError("registry needs a url, the registry's address (e.g. http://127.0.0.1:8080)");
  if (!isHttpUrl(url)) throw new ValueError(`registry.url must be an http:// or https:// URL, got '${url}'`);
  if (credentials !== undefined && typeof credentials !== 'string')
    throw new ValueError('registry.credentials must be a string');
  if (authenticator !== undefined && !isRecord(authenticator))
    throw new ValueError('registry.authenticator must be an Authenticator');
  if (credentials !== undefined && authenticator === undefined)
    throw new ValueError(
      'registry.credentials need registry.authenticator, which builds what the agent sends to the registry',
    );
  if (tenant !== undefined && typeof tenant !== 'string')
    throw new ValueError('registry.tenant must be a string');
  if (tls !== undefined && !isRecord(tls))
    throw new ValueError('registry.tls must be an object of TLS settings');
  const options: AgentRegistryOptions = { url };
  if (credentials !== undefined) options.credentials = credentials;
  if (authenticator !== undefined) options.authenticator = authenticator as unknown as Authenticator;
  if (tenant !== undefined) options.tenant = tenant;
  if (tls !== undefined) options.tls = tls as TlsOptions;
  if (timeoutMs !== undefined)
    options.timeoutMs = numberOption('registry.timeoutMs', timeoutMs as number, 0, { integer: true });
  if (heartbeatMs !== undefined)
    options.heartbeatMs = numberOption('registry.heartbeatMs', heartbeatMs as number, 0, {
      min: 0,
      exclusive: true,
    });
  return options;
}

function isHttpUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/*
 * The parts of @agent/registry the agent uses, written out here: the runtime must not depend on that
 * package (nor on its types), which only agents that register install.
 */
interface RegistryClientLike {
  close(): Promise<void>;
}
interface MembershipLike {
  start(): Promise<void>;
  stop(): Promise<void>;
}
type RegistryClientClass = new (options: Omit<AgentRegistryOptions, 'heartbeatMs'>) => RegistryClientLike;
type MembershipClass = new (options: {
  client: RegistryClientLike;
  card: () => AgentCard;
  heartbeatMs?: number;
  onError?: (error: unknown) => void;
}) => MembershipLike;

/** The two classes of @agent/registry an agent needs to join a registry. */
export interface RegistryPackage {
  RegistryClient: RegistryClientClass;
  RegistryMembership: MembershipClass;
}

/** Loads @agent/registry from where the program is (as a transport given by name is loaded). */
export function loadRegistry(searchFrom: readonly string[] = defaultSearchPaths()): RegistryPackage {
  const module = requirePackage('registry', REGISTRY_PACKAGE, searchFrom);
  for (const name of ['RegistryClient', 'RegistryMembership'])
    if (typeof module[name] !== 'function')
      throw new ValueError(`${REGISTRY_PACKAGE} does not export ${name}`);
  return module as unknown as RegistryPackage;
}

/** The agent's place in a registry while it runs; `leave()` deregisters (best effort). Idempotent. */
export interface RegistrySeat {
  /** Settles with the first registration: rejects with the registry's typed error when it failed. */
  joined: Promise<void>;
  /** Stops heartbeating, deregisters and closes the client; abandons a registration still under way. */
  leave(): Promise<void>;
}

/**
 * Registers the agent's card (read afresh at every registration, so a port-0 start advertises the
 * real port) and keeps it registered. The seat exists at once, so a `stop()` that comes while the
 * first registration is under way can abandon it.
 */
export function joinRegistry(
  registry: RegistryPackage,
  options: AgentRegistryOptions,
  card: () => AgentCard,
  onError: (error: unknown) => void,
): RegistrySeat {
  const { heartbeatMs, ...clientOptions } = options;
  const client = new registry.RegistryClient(clientOptions);
  let membership: MembershipLike;
  try {
    membership = new registry.RegistryMembership({
      client,
      card,
      onError,
      ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
    });
  } catch (error) {
    void client.close().catch(() => undefined);
    throw error;
  }
  let left: Promise<void> | null = null;
  return {
    joined: membership.start(),
    leave: () => {
      left ??= (async () => {
        try {
          await membership.stop();
        } finally {
          await client.close();
        }
      })();
      return left;
    },
  };
}
