import { APIKeyAuth } from '@agent/auth';
import { NotFoundError, ValidationError, ValueError } from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';
import { REGISTRY_OPERATIONS } from './operations.js';
import { RegistryClient } from './registry-client.js';
import { card, entryOf } from './test-support/cards.js';
import { fakeTransport } from './test-support/fake-transport.js';

const URL = 'http://127.0.0.1:9/base';

describe('REGISTRY_OPERATIONS', () => {
  it('maps the six operations to the registry routes', () => {
    expect(
      Object.values(REGISTRY_OPERATIONS).map((spec) => `${spec.name} ${spec.method} ${spec.path}`),
    ).toEqual([
      'register POST /registry/agents',
      'replace PUT /registry/agents/{name}',
      'heartbeat POST /registry/agents/{name}/heartbeat',
      'deregister DELETE /registry/agents/{name}',
      'get_agent GET /registry/agents/{name}',
      'list_agents GET /registry/agents',
    ]);
  });
});

describe('RegistryClient over a given transport', () => {
  it('sends every operation through transport.send with its spec, the url and the name', async () => {
    const agent = card('alpha');
    const entry = entryOf(agent);
    const transport = fakeTransport([
      entry,
      entry,
      entry,
      entry,
      entry,
      { agents: [entry], next_page_token: '' },
    ]);
    const client = new RegistryClient({ url: URL, transport });
    const signal = new AbortController().signal;
    await expect(client.register(agent, { signal })).resolves.toEqual(entry);
    await expect(client.replace(agent)).resolves.toEqual(entry);
    await expect(client.heartbeat('alpha')).resolves.toEqual(entry);
    await expect(client.deregister('alpha')).resolves.toEqual(entry);
    await expect(client.get('alpha', { timeoutMs: 50 })).resolves.toEqual(entry);
    await expect(client.list({ skill: 'math', pageSize: 5, pageToken: 't' })).resolves.toEqual({
      agents: [entry],
      next_page_token: '',
    });
    const calls = transport.calls;
    expect(calls.map((c) => c.spec)).toEqual([
      REGISTRY_OPERATIONS.register,
      REGISTRY_OPERATIONS.replace,
      REGISTRY_OPERATIONS.heartbeat,
      REGISTRY_OPERATIONS.deregister,
      REGISTRY_OPERATIONS.get_agent,
      REGISTRY_OPERATIONS.list_agents,
    ]);
    expect(calls.every((c) => c.baseUrl === URL)).toBe(true);
    expect(calls[0]).toMatchObject({ data: agent, options: { signal } });
    // The card travels whole in the PUT body; the name fills the path from params.
    expect(calls[1]).toMatchObject({ data: agent, params: { name: 'alpha' } });
    expect(calls[2]).toMatchObject({ params: { name: 'alpha' } });
    expect(calls[3]).toMatchObject({ data: { name: 'alpha' } });
    expect(calls[4]).toMatchObject({ data: { name: 'alpha' }, options: { timeoutMs: 50 } });
    expect(calls[5]!.data).toEqual({ skill: 'math', page_size: 5, page_token: 't' });
    await client.close();
    expect(transport.stopped).toBe(0);
  });

  it('find walks every page with the largest page size', async () => {
    const entries = ['a', 'b', 'c'].map((name) => entryOf(card(name)));
    const transport = fakeTransport([
      { agents: [entries[0]], next_page_token: 'p2' },
      { agents: [entries[1]], next_page_token: 'p3' },
      { agents: [entries[2]], next_page_token: '' },
    ]);
    const client = new RegistryClient({ url: URL, transport });
    await expect(client.find({ skill: 'x' })).resolves.toEqual(entries);
    expect(transport.calls.map((c) => c.data)).toEqual([
      { skill: 'x', page_size: 100 },
      { skill: 'x', page_size: 100, page_token: 'p2' },
      { skill: 'x', page_size: 100, page_token: 'p3' },
    ]);
  });

  it('find stops on a registry that hands a token back twice instead of looping', async () => {
    const transport = fakeTransport([
      { agents: [], next_page_token: 'same' },
      { agents: [], next_page_token: 'same' },
    ]);
    const client = new RegistryClient({ url: URL, transport });
    await expect(client.find({})).rejects.toBeInstanceOf(ValueError);
  });

  it('passes the typed error of the registry through', async () => {
    const error = new NotFoundError('Agent ghost is not registered');
    const client = new RegistryClient({ url: URL, transport: fakeTransport([error]) });
    await expect(client.heartbeat('ghost')).rejects.toBe(error);
  });

  it('checks what it receives: an answer that is no entry is a ValidationError', async () => {
    const client = new RegistryClient({
      url: URL,
      transport: fakeTransport([{ name: 'x' }, { agents: 'no', next_page_token: '' }]),
    });
    await expect(client.get('x')).rejects.toBeInstanceOf(ValidationError);
    await expect(client.list()).rejects.toBeInstanceOf(ValidationError);
  });

  it('refuses bad arguments before sending anything', async () => {
    const transport = fakeTransport();
    const client = new RegistryClient({ url: URL, transport });
    await expect(client.register({ name: '' } as never)).rejects.toBeInstanceOf(ValidationError);
    await expect(client.heartbeat('')).rejects.toBeInstanceOf(ValueError);
    await expect(client.get(7 as never)).rejects.toBeInstanceOf(ValueError);
    await expect(client.list({ pageSize: 0 })).rejects.toBeInstanceOf(ValueError);
    await expect(client.list({ pageSize: 101 })).rejects.toBeInstanceOf(ValueError);
    await expect(client.list({ skill: '' })).rejects.toBeInstanceOf(ValueError);
    await expect(client.list({ colour: 'red' } as never)).rejects.toThrow(/colour/);
    await expect(client.deregister('a', { retries: 2 } as never)).rejects.toThrow(/retries/);
    await expect(client.get('a', { timeoutMs: -1 })).rejects.toBeInstanceOf(ValueError);
    await expect(client.find({ pageSize: 3 } as never)).rejects.toThrow(/pageSize/);
    expect(transport.calls).toHaveLength(0);
  });
});

describe('RegistryClient options', () => {
  it('refuses unknown names, a missing url and settings a given transport would ignore', () => {
    expect(() => new RegistryClient({ url: URL, retries: 1 } as never)).toThrow(ValueError);
    expect(() => new RegistryClient({} as never)).toThrow(/url/);
    expect(() => new RegistryClient(undefined as never)).toThrow(ValueError);
    expect(() => new RegistryClient({ url: URL, transport: fakeTransport(), tenant: 't' })).toThrow(/tenant/);
    expect(() => new RegistryClient({ url: URL, transport: {} as never })).toThrow(/transport/);
    // The built transport checks its own options: credentials need an authenticator, a tenant its form.
    expect(() => new RegistryClient({ url: URL, credentials: 'k' })).toThrow(/authenticator/);
    expect(() => new RegistryClient({ url: URL, tenant: 'bad tenant' })).toThrow(/tenant/);
    expect(() => new RegistryClient({ url: 'ws://127.0.0.1:1' })).toThrow(ValueError);
  });

  it('builds an HTTPTransport with the credentials, tenant and timeout, and stops it on close', async () => {
    const authenticator = new APIKeyAuth({ validKeys: { 'key-0001-abcdef': [] } });
    const client = new RegistryClient({
      url: URL,
      credentials: 'key-0001-abcdef',
      authenticator,
      tenant: 'team-a',
      timeoutMs: 1234,
    });
    expect(client.transport).toBeInstanceOf(HTTPTransport);
    const transport = client.transport as HTTPTransport;
    expect(transport.tenant).toBe('team-a');
    expect(transport.timeoutMs).toBe(1234);
    expect(transport.authenticator).toBe(authenticator);
    const stop = jest.spyOn(transport, 'stop');
    await client.close();
    expect(stop).toHaveBeenCalledTimes(1);
  });
});
