/** A registry served over real sockets for the tests: HTTPTransport + APIKeyAuth + Registry. */
import { APIKeyAuth } from '@agent/auth';
import { SqliteRegistryStore } from '@agent/events';
import { createTestAgent, rawRequest, type RawRequestOptions, type RawResponse } from '@agent/test-support';
import { HTTPTransport, type HTTPTransportOptions } from '@agent/transport-http';
import { Registry, type RegistryOptions } from '../registry.js';
import { RegistryClient } from '../registry-client.js';

/** Two principals: the keys differ in their first 8 characters (`api-key-alice-ke`, `api-key-bob-key-`). */
export const ALICE_KEY = 'alice-key-0000000001';
export const BOB_KEY = 'bob-key-000000000002';
/** A key that may act only for tenant `team-b`. */
export const CAROL_KEY = 'carol-key-0000000003';

export function registryAuth(): APIKeyAuth {
  return new APIKeyAuth({
    validKeys: { [ALICE_KEY]: [], [BOB_KEY]: [], [CAROL_KEY]: [] },
    tenants: { [CAROL_KEY]: ['team-b'] },
  });
}

export interface RegistryServer {
  registry: Registry;
  server: HTTPTransport;
  url: string;
  /** A RegistryClient acting as `key` in `tenant`. */
  client(key: string, tenant?: string): RegistryClient;
  /** A raw request below the registry's URL, as `key` (none: unauthenticated) in `tenant`. */
  raw(path: string, options?: RawRequestOptions & { key?: string; tenant?: string }): Promise<RawResponse>;
  stop(): Promise<void>;
}

/** The stores the tests run against. */
export const STORE_KINDS = ['memory', 'sqlite'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

export async function serveRegistry(
  options: RegistryOptions & { registry?: Registry; url?: string; storeKind?: StoreKind } = {},
  transport: Partial<HTTPTransportOptions> = {},
): Promise<RegistryServer> {
  const { registry: given, url = 'http://127.0.0.1:0', storeKind = 'memory', ...registryOptions } = options;
  // A store passed in is the caller's to close; the SQLite one made here is closed by stop().
  const sqlite =
    storeKind === 'sqlite' && !registryOptions.store
      ? new SqliteRegistryStore({ path: ':memory:' })
      : undefined;
  const registry = given ?? new Registry({ ...registryOptions, ...(sqlite ? { store: sqlite } : {}) });
  const auth = registryAuth();
  const server = new HTTPTransport({ url, authenticator: auth, routes: [registry], ...transport });
  // HTTPTransport serves task routes too and needs a handler to start.
  server.bind(createTestAgent());
  await server.start();
  const clients: RegistryClient[] = [];
  return {
    registry,
    server,
    url: server.url,
    client(key, tenant) {
      const client = new RegistryClient({
        url: server.url,
        credentials: key,
        authenticator: registryAuth(),
        ...(tenant === undefined ? {} : { tenant }),
      });
      clients.push(client);
      return client;
    },
    raw(path, { key, tenant, headers, ...rest } = {}) {
      const sent: Record<string, string> = {};
      if (key !== undefined) sent['x-api-key'] = key;
      if (tenant !== undefined) sent['x-tenant'] = tenant;
      return rawRequest(`${server.url}${path}`, { ...rest, headers: { ...sent, ...headers } });
    },
    async stop() {
      await Promise.all(clients.map((client) => client.close()));
      await server.stop();
      await registry.close();
      await sqlite?.close();
    },
  };
}
