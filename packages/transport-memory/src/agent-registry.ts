import { NotFoundError, ValueError, type AgentCard, type TaskHandler } from '@agent/core';
import type { ServerPipeline } from '@agent/server';
import { addressKey, checkAgentName, runtimeUrl } from './agent-address.js';

/** A TaskHandler that may carry its own name, as `Agent` does (`agent.card.name`, `agent.name`). */
export type RegistrableAgent = TaskHandler & { readonly card?: AgentCard; readonly name?: string };

export interface RegisterAgentOptions {
  /** Default: `agent.card?.name ?? agent.name`. */
  name?: string;
  /** A second address for the agent, e.g. the HTTP URL it is known by. Default `runtime://<name>`. */
  url?: string;
}

/** One registered agent and the two addresses it answers to. */
export interface RegisteredAgent {
  name: string;
  url: string;
  agent: RegistrableAgent;
}

/** A registered agent with the pipeline that serves it and the transport that registered it. */
export interface RegistryEntry extends RegisteredAgent {
  pipeline: ServerPipeline;
  readonly owner: object;
}

/**
 * The agents reachable in this process through one transport and its client views: each by its
 * name, `runtime://<name>` and an optional URL; one of them is the default (an empty address).
 */
export class AgentRegistry {
  private readonly byAddress = new Map<string, RegistryEntry>();
  private readonly entries = new Set<RegistryEntry>();
  private defaultEntry: RegistryEntry | undefined;

  /**
   * Registers `agent`; registering the same agent again keeps its pipeline and takes the new URL.
   * Another agent under a taken name or URL is a ValueError. `pipeline` is called for a new entry only.
   */
  add(
    agent: RegistrableAgent,
    options: RegisterAgentOptions,
    owner: object,
    pipeline: () => ServerPipeline,
  ): RegistryEntry {
    if (!isTaskHandler(agent)) {
      throw new ValueError(
        'registerAgent needs a TaskHandler (handleTask, handleTaskStreaming, cancelTask, getAgentCard)',
      );
    }
    const name = checkAgentName(options.name ?? agent.card?.name ?? agent.name);
    const url = addressKey(options.url ?? runtimeUrl(name));
    if (url === '') throw new ValueError('Agent url must not be empty');
    const addresses = [...new Set([name, url, runtimeUrl(name)])];
    for (const address of addresses) {
      const taken = this.byAddress.get(address);
      if (taken && taken.agent !== agent) {
        throw new ValueError(`Address "${address}" is already registered to agent "${taken.name}"`);
      }
    }
    let entry = this.byAddress.get(name);
    if (entry) {
      this.unmap(entry);
      entry.url = url;
    } else {
      entry = { name, url, agent, owner, pipeline: pipeline() };
      this.entries.add(entry);
    }
    for (const address of addresses) this.byAddress.set(address, entry);
    return entry;
  }

  /** Makes `entry` answer the empty address and `runtime://`. */
  setDefault(entry: RegistryEntry): void {
    this.defaultEntry = entry;
  }

  get default(): RegistryEntry | undefined {
    return this.defaultEntry;
  }

  /** Removes the agent known by this name or URL; false when none was. */
  remove(address: string): boolean {
    const entry = this.byAddress.get(addressKey(address));
    if (!entry) return false;
    this.delete(entry);
    return true;
  }

  lookup(address: string): RegistryEntry | undefined {
    const key = addressKey(address);
    if (key === '' || key === 'runtime:/' || key === 'runtime:') return this.defaultEntry;
    return this.byAddress.get(key);
  }

  /** The entry at `address`, or NotFoundError naming the known addresses. */
  resolve(address: string): RegistryEntry {
    if (typeof address !== 'string') throw new ValueError('Agent address must be a string');
    const entry = this.lookup(address);
    if (!entry) {
      throw new NotFoundError(`No agent registered at "${address}"`, {
        data: { address, known: this.list() },
      });
    }
    return entry;
  }

  /** Every identifier an agent is registered under: its name, then its URL, in registration order. */
  list(): string[] {
    return [...this.entries].flatMap((entry) =>
      entry.url === entry.name ? [entry.name] : [entry.name, entry.url],
    );
  }

  /** The entries `owner` registered: the agents it serves. */
  ownedBy(owner: object): RegistryEntry[] {
    return [...this.entries].filter((entry) => entry.owner === owner);
  }

  private delete(entry: RegistryEntry): void {
    this.entries.delete(entry);
    this.unmap(entry);
    if (this.defaultEntry === entry) this.defaultEntry = undefined;
  }

  private unmap(entry: RegistryEntry): void {
    for (const [address, value] of this.byAddress) if (value === entry) this.byAddress.delete(address);
  }
}

function isTaskHandler(value: unknown): value is TaskHandler {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return ['handleTask', 'handleTaskStreaming', 'cancelTask', 'getAgentCard'].every(
    (key) => typeof candidate[key] === 'function',
  );
}
