/** The registry routes over real sockets: every route, every refusal, ownership, expiry and the bound. */
import {
  AlreadyExistsError,
  NotFoundError,
  PermissionDeniedError,
  ResourceExhaustedError,
  UnauthenticatedError,
  ValidationError,
  ValueError,
  type AgentCard,
} from '@agent/core';
import type { RawResponse } from '@agent/test-support';
import { Registry } from './registry.js';
import { REGISTRY_PATH } from './operations.js';
import { card } from './test-support/cards.js';
import {
  ALICE_KEY,
  BOB_KEY,
  CAROL_KEY,
  STORE_KINDS,
  serveRegistry,
  type RegistryServer,
} from './test-support/registry-server.js';

const AGENTS = REGISTRY_PATH;

function errorOf(response: RawResponse): { code: string; message: string; data?: unknown } {
  return (response.json as { error: { code: string; message: string; data?: unknown } }).error;
}

/** Polls `check` until it holds (bounded), without asserting anything about time. */
async function eventually(check: () => Promise<boolean>, what: string, bound = 10_000): Promise<void> {
  const end = Date.now() + bound;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const math = (name: string): AgentCard =>
  card(name, { skills: [{ id: 'math', name: 'Math', tags: ['numbers'] }] });

describe('Registry options', () => {
  it('refuses unknown names, and a ttlMs or maxEntries that is not a positive integer', () => {
    expect(() => new Registry({ ttl: 5 } as never)).toThrow(ValueError);
    for (const bad of [0, -1, 1.5, Number.NaN, '10' as never, Infinity]) {
      expect(() => new Registry({ ttlMs: bad })).toThrow(/ttlMs/);
      expect(() => new Registry({ maxEntries: bad })).toThrow(/maxEntries/);
    }
    expect(() => new Registry({ store: {} as never })).toThrow(/store/);
    expect(() => new Registry(null as never)).toThrow(ValueError);
    const registry = new Registry();
    expect([registry.ttlMs, registry.maxEntries]).toEqual([30_000, 10_000]);
  });
});

describe('Registry.close', () => {
  it('closes the store it created, and leaves a store passed in to its owner', async () => {
    const own = new Registry();
    const closeOwn = jest.spyOn(own.store, 'close');
    await own.close();
    expect(closeOwn).toHaveBeenCalledTimes(1);
    const given = new Registry().store;
    const closeGiven = jest.spyOn(given, 'close');
    await new Registry({ store: given }).close();
    expect(closeGiven).not.toHaveBeenCalled();
  });
});

describe('the express backend', () => {
  it('serves the same registry routes', async () => {
    const served = await serveRegistry({ ttlMs: 60_000 }, { backend: 'express' });
    try {
      const alice = served.client(ALICE_KEY);
      await alice.register(math('alpha'));
      await expect(alice.replace(math('alpha'))).resolves.toMatchObject({ name: 'alpha' });
      await expect(alice.heartbeat('alpha')).resolves.toMatchObject({ name: 'alpha' });
      await expect(served.client(BOB_KEY).find({ skill: 'math' })).resolves.toHaveLength(1);
      await expect(served.client(BOB_KEY).deregister('alpha')).rejects.toBeInstanceOf(NotFoundError);
      await expect(alice.deregister('alpha')).resolves.toMatchObject({ name: 'alpha' });
      const malformed = await served.raw(AGENTS, { key: ALICE_KEY, body: '{' });
      expect(malformed.status).toBe(400);
    } finally {
      await served.stop();
    }
  });
});

describe.each(STORE_KINDS)('the registry routes (%s store)', (storeKind) => {
  let served: RegistryServer;

  beforeEach(async () => {
    served = await serveRegistry({ ttlMs: 60_000, storeKind });
  });
  afterEach(() => served.stop());

  it('POST /registry/agents registers: 201 and the entry, without its owner', async () => {
    const agent = math('alpha');
    const response = await served.raw(AGENTS, { key: ALICE_KEY, body: agent });
    expect(response.status).toBe(201);
    const entry = response.json as Record<string, string>;
    expect(Object.keys(entry).sort()).toEqual([
      'card',
      'expires_at',
      'heartbeat_at',
      'name',
      'registered_at',
    ]);
    expect(entry).toMatchObject({ name: 'alpha', card: agent });
    expect(entry.registered_at).toBe(entry.heartbeat_at);
    expect(Date.parse(entry.expires_at) - Date.parse(entry.heartbeat_at)).toBe(60_000);
    expect(response.text).not.toContain('api-key-');
  });

  it('a second registration of a live name is 409, the same whoever asks, the owner included', async () => {
    await served.client(ALICE_KEY).register(math('alpha'));
    const byOwner = await served.raw(AGENTS, { key: ALICE_KEY, body: math('alpha') });
    const byOther = await served.raw(AGENTS, { key: BOB_KEY, body: card('alpha') });
    expect(byOwner.status).toBe(409);
    expect(errorOf(byOwner)).toEqual({
      code: 'ALREADY_EXISTS',
      message: 'Agent alpha is already registered',
      data: { name: 'alpha' },
    });
    expect([byOther.status, byOther.json]).toEqual([byOwner.status, byOwner.json]);
    await expect(served.client(BOB_KEY).register(card('alpha'))).rejects.toBeInstanceOf(AlreadyExistsError);
  });

  it('an invalid card is 422 VALIDATION_FAILED naming what is wrong; nothing is registered', async () => {
    const response = await served.raw(AGENTS, { key: ALICE_KEY, body: { name: 'broken', url: 5 } });
    expect(response.status).toBe(422);
    expect(errorOf(response).code).toBe('VALIDATION_FAILED');
    expect(errorOf(response).data).toEqual({
      errors: expect.arrayContaining([{ pointer: '/description', message: 'is required' }]),
    });
    for (const body of [
      [],
      'just text',
      { name: '', description: '', url: 'http://x' },
      // Not addressable afterwards: a URL path resolves them away.
      { name: '.', description: '', url: 'http://x' },
      { name: '..', description: '', url: 'http://x' },
    ]) {
      const refused = await served.raw(AGENTS, { key: ALICE_KEY, body: JSON.stringify(body) });
      expect([refused.status, errorOf(refused).code]).toEqual([422, 'VALIDATION_FAILED']);
    }
    expect((await served.raw(`${AGENTS}/broken`, { key: ALICE_KEY })).status).toBe(404);
  });

  it('malformed JSON is 400, a body over maxBodyBytes 413, no credentials 401', async () => {
    const malformed = await served.raw(AGENTS, { key: ALICE_KEY, body: '{"name": ' });
    expect(malformed.status).toBe(400);
    // The one body rule of every HTTP route: 400 INVALID_REQUEST "Malformed JSON: …".
    expect(errorOf(malformed).code).toBe('INVALID_REQUEST');
    expect(errorOf(malformed).message).toMatch(/^Malformed JSON/);
    const empty = await served.raw(AGENTS, { key: ALICE_KEY, method: 'POST' });
    expect([empty.status, errorOf(empty).code]).toEqual([400, 'INVALID_REQUEST']);
    const huge = card('huge', { description: 'x'.repeat(5 * 1024 * 1024) });
    const oversized = await served.raw(AGENTS, { key: ALICE_KEY, body: huge });
    expect(oversized.status).toBe(413);
    expect(errorOf(oversized).code).toBe('PAYLOAD_TOO_LARGE');
    const anonymous = await served.raw(AGENTS, { body: card('anon') });
    expect(anonymous.status).toBe(401);
    expect(errorOf(anonymous).code).toBe('UNAUTHENTICATED');
    const client = served.client('not-a-key-at-all');
    await expect(client.register(card('x'))).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('a tenant the key may not act for is 403, and names neither tenant', async () => {
    const response = await served.raw(AGENTS, { key: CAROL_KEY, tenant: 'team-a', body: card('c') });
    expect(response.status).toBe(403);
    expect(response.text).not.toContain('team-');
    await expect(served.client(CAROL_KEY).register(card('c'))).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(served.client(CAROL_KEY, 'team-b').register(card('c'))).resolves.toMatchObject({
      name: 'c',
    });
  });

  it("PUT /registry/agents/{name} replaces the owner's card and renews it", async () => {
    const alice = served.client(ALICE_KEY);
    const first = await alice.register(math('alpha'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const changed = math('alpha');
    changed.description = 'a new description';
    const replaced = await alice.replace(changed);
    expect(replaced.card.description).toBe('a new description');
    expect(replaced.registered_at).toBe(first.registered_at);
    expect(Date.parse(replaced.expires_at)).toBeGreaterThan(Date.parse(first.expires_at));
    expect((await served.client(BOB_KEY).get('alpha')).card.description).toBe('a new description');
    const raw = await served.raw(`${AGENTS}/alpha`, { key: ALICE_KEY, method: 'PUT', body: changed });
    expect(raw.status).toBe(200);
  });

  it('PUT refuses a card whose name differs from the path, and an invalid card, with 422', async () => {
    await served.client(ALICE_KEY).register(math('alpha'));
    const renamed = await served.raw(`${AGENTS}/alpha`, {
      key: ALICE_KEY,
      method: 'PUT',
      body: card('beta'),
    });
    expect(renamed.status).toBe(422);
    expect(errorOf(renamed)).toMatchObject({
      code: 'VALIDATION_FAILED',
      data: { errors: [{ pointer: '/name', message: 'must equal the agent name in the path' }] },
    });
    const invalid = await served.raw(`${AGENTS}/alpha`, {
      key: ALICE_KEY,
      method: 'PUT',
      body: { name: 'alpha' },
    });
    expect([invalid.status, errorOf(invalid).code]).toEqual([422, 'VALIDATION_FAILED']);
    const malformed = await served.raw(`${AGENTS}/alpha`, { key: ALICE_KEY, method: 'PUT', body: '{' });
    expect(malformed.status).toBe(400);
  });

  it('POST …/heartbeat renews the entry, with an empty body or {}', async () => {
    const alice = served.client(ALICE_KEY);
    const first = await alice.register(math('alpha'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const empty = await served.raw(`${AGENTS}/alpha/heartbeat`, { key: ALICE_KEY, method: 'POST' });
    expect(empty.status).toBe(200);
    const renewed = empty.json as { heartbeat_at: string; expires_at: string; registered_at: string };
    expect(Date.parse(renewed.expires_at)).toBeGreaterThan(Date.parse(first.expires_at));
    expect(renewed.registered_at).toBe(first.registered_at);
    const braces = await served.raw(`${AGENTS}/alpha/heartbeat`, { key: ALICE_KEY, body: {} });
    expect(braces.status).toBe(200);
    await expect(alice.heartbeat('alpha')).resolves.toMatchObject({ name: 'alpha' });
  });

  it('DELETE removes the entry and answers it; afterwards the name is free', async () => {
    const alice = served.client(ALICE_KEY);
    await alice.register(math('alpha'));
    const removed = await served.raw(`${AGENTS}/alpha`, { key: ALICE_KEY, method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect(removed.json).toMatchObject({ name: 'alpha', card: math('alpha') });
    await expect(alice.get('alpha')).rejects.toBeInstanceOf(NotFoundError);
    await expect(alice.deregister('alpha')).rejects.toBeInstanceOf(NotFoundError);
    await expect(served.client(BOB_KEY).register(card('alpha'))).resolves.toMatchObject({ name: 'alpha' });
  });

  it('GET one entry: anyone of the tenant reads it, another tenant gets the 404', async () => {
    await served.client(ALICE_KEY).register(math('alpha'));
    await expect(served.client(BOB_KEY).get('alpha')).resolves.toMatchObject({ name: 'alpha' });
    const elsewhere = await served.raw(`${AGENTS}/alpha`, { key: ALICE_KEY, tenant: 'team-b' });
    const nobody = await served.raw(`${AGENTS}/nobody`, { key: ALICE_KEY, tenant: 'team-b' });
    expect(elsewhere.status).toBe(404);
    expect(errorOf(elsewhere)).toEqual({
      code: 'NOT_FOUND',
      message: 'Agent alpha is not registered',
      data: { name: 'alpha' },
    });
    expect(neutral(elsewhere, 'alpha')).toEqual(neutral(nobody, 'nobody'));
  });

  it('names travel percent-encoded: a name with / ? # and spaces is one path segment', async () => {
    const odd = 'team/alpha? #1 ünïcode';
    const alice = served.client(ALICE_KEY);
    await alice.register(card(odd));
    await expect(alice.get(odd)).resolves.toMatchObject({ name: odd });
    await expect(alice.heartbeat(odd)).resolves.toMatchObject({ name: odd });
    await expect(alice.replace(card(odd, { description: 'renamed?' }))).resolves.toMatchObject({
      card: { description: 'renamed?' },
    });
    await expect(alice.deregister(odd)).resolves.toMatchObject({ name: odd });
  });

  describe('GET /registry/agents', () => {
    beforeEach(async () => {
      const alice = served.client(ALICE_KEY);
      const bob = served.client(BOB_KEY);
      await alice.register(math('echo'));
      await bob.register(card('delta', { skills: [{ id: 'search', name: 'Search', tags: ['math'] }] }));
      await alice.register(card('bravo', { skills: [{ id: 'translate', name: 'Translate' }] }));
      await bob.register(math('alpha'));
      await alice.register(card('charlie'));
      await served.client(ALICE_KEY, 'team-b').register(math('other-tenant'));
    });

    it("lists the tenant's live entries by name, everyone's", async () => {
      const page = await served.client(BOB_KEY).list();
      expect(page.agents.map((entry) => entry.name)).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
      expect(page.next_page_token).toBe('');
      const raw = await served.raw(AGENTS, { key: ALICE_KEY });
      expect(raw.status).toBe(200);
      expect(Object.keys(raw.json as object).sort()).toEqual(['agents', 'next_page_token']);
      const other = await served.client(ALICE_KEY, 'team-b').list();
      expect(other.agents.map((entry) => entry.name)).toEqual(['other-tenant']);
    });

    it('filters by skill (an id or a tag) and by exact name', async () => {
      const alice = served.client(ALICE_KEY);
      expect((await alice.list({ skill: 'math' })).agents.map((e) => e.name)).toEqual([
        'alpha',
        'delta',
        'echo',
      ]);
      expect((await alice.list({ skill: 'numbers' })).agents.map((e) => e.name)).toEqual(['alpha', 'echo']);
      expect((await alice.list({ skill: 'translate' })).agents.map((e) => e.name)).toEqual(['bravo']);
      expect((await alice.list({ skill: 'nothing' })).agents).toEqual([]);
      expect((await alice.list({ name: 'charlie' })).agents.map((e) => e.name)).toEqual(['charlie']);
      expect((await alice.list({ name: 'char' })).agents).toEqual([]);
      expect((await alice.list({ name: 'echo', skill: 'math' })).agents.map((e) => e.name)).toEqual(['echo']);
      // An empty parameter is no filter, as in the task API.
      const empty = await served.raw(`${AGENTS}?skill=&name=`, { key: ALICE_KEY });
      expect((empty.json as { agents: unknown[] }).agents).toHaveLength(5);
    });

    it('pages: page_size entries a page, next_page_token to go on, "" on the last', async () => {
      const alice = served.client(ALICE_KEY);
      const names: string[] = [];
      const tokens: string[] = [];
      let pageToken: string | undefined;
      do {
        const page = await alice.list({ pageSize: 2, ...(pageToken ? { pageToken } : {}) });
        expect(page.agents.length).toBeLessThanOrEqual(2);
        names.push(...page.agents.map((entry) => entry.name));
        tokens.push(page.next_page_token);
        pageToken = page.next_page_token;
      } while (pageToken);
      expect(names).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
      expect(tokens.at(-1)).toBe('');
      const skillPage = await alice.list({ skill: 'math', pageSize: 1 });
      expect(skillPage.agents.map((e) => e.name)).toEqual(['alpha']);
      const rest = await alice.find({ skill: 'math' });
      expect(rest.map((e) => e.name)).toEqual(['alpha', 'delta', 'echo']);
    });

    it('refuses a bad page_size or page_token with 422', async () => {
      for (const query of [
        'page_size=0',
        'page_size=101',
        'page_size=abc',
        'page_size=1.5',
        'page_size=-1',
      ]) {
        const response = await served.raw(`${AGENTS}?${query}`, { key: ALICE_KEY });
        expect([query, response.status]).toEqual([query, 422]);
        expect(errorOf(response).data).toEqual({
          errors: [{ pointer: '/page_size', message: 'must be an integer from 1 to 100' }],
        });
      }
      const token = await served.raw(`${AGENTS}?page_token=not-a-token`, { key: ALICE_KEY });
      expect([token.status, errorOf(token).code]).toEqual([422, 'VALIDATION_FAILED']);
      expect(errorOf(token).data).toEqual({ errors: [expect.objectContaining({ pointer: '/page_token' })] });
      // A token is bound to its query: replayed with another filter, it is refused.
      const { next_page_token: real } = await served.client(ALICE_KEY).list({ pageSize: 1 });
      const replayed = await served.raw(`${AGENTS}?page_size=1&skill=math&page_token=${real}`, {
        key: ALICE_KEY,
      });
      expect(replayed.status).toBe(422);
      const twice = await served.raw(`${AGENTS}?skill=a&skill=b`, { key: ALICE_KEY });
      expect(twice.status).toBe(422);
      await expect(served.client(ALICE_KEY).list({ pageToken: 'not-a-token' })).rejects.toBeInstanceOf(
        ValidationError,
      );
    });
  });
});

/** A response with every occurrence of `name` replaced, so answers about two names compare. */
function neutral(response: RawResponse, name: string): { status: number; body: string } {
  return { status: response.status, body: response.text.split(name).join('<name>') };
}

describe.each(STORE_KINDS)('ownership (%s store)', (storeKind) => {
  let served: RegistryServer;
  beforeEach(async () => {
    served = await serveRegistry({ ttlMs: 60_000, storeKind });
  });
  afterEach(() => served.stop());

  it('another principal, or the owner in another tenant, can neither replace, heartbeat nor delete an entry: 500+ attempts, each the not-found answer', async () => {
    const owner = served.client(ALICE_KEY);
    const names = ['alpha', 'beta', 'gamma', 'team/delta', 'epsilon'];
    const original = new Map<string, AgentCard>();
    for (const name of names) {
      original.set(name, math(name));
      await owner.register(math(name));
    }
    const intruders = [
      { key: BOB_KEY },
      { key: BOB_KEY, tenant: 'team-b' },
      { key: ALICE_KEY, tenant: 'team-b' },
      { key: CAROL_KEY, tenant: 'team-b' },
    ];
    type Attempt = { method: string; path: (name: string) => string; body?: (name: string) => unknown };
    const attempts: Attempt[] = [
      {
        method: 'PUT',
        path: (n) => `${AGENTS}/${encodeURIComponent(n)}`,
        body: (n) => card(n, { url: 'http://evil:1' }),
      },
      { method: 'POST', path: (n) => `${AGENTS}/${encodeURIComponent(n)}/heartbeat` },
      { method: 'POST', path: (n) => `${AGENTS}/${encodeURIComponent(n)}/heartbeat`, body: () => ({}) },
      { method: 'DELETE', path: (n) => `${AGENTS}/${encodeURIComponent(n)}` },
    ];
    // The answer for a name nobody registered, per intruder and attempt.
    const expected = new Map<string, { status: number; body: string }>();
    for (const [i, intruder] of intruders.entries()) {
      for (const [j, attempt] of attempts.entries()) {
        const ghost = `ghost-${i}-${j}`;
        const answer = await served.raw(attempt.path(ghost), {
          ...intruder,
          method: attempt.method,
          ...(attempt.body ? { body: attempt.body(ghost) } : {}),
        });
        expect(answer.status).toBe(404);
        expected.set(`${i}/${j}`, neutral(answer, ghost));
      }
    }
    let tried = 0;
    for (let round = 0; round < 7; round++) {
      await Promise.all(
        names.flatMap((name) =>
          intruders.flatMap((intruder, i) =>
            attempts.map(async (attempt, j) => {
              const answer = await served.raw(attempt.path(name), {
                ...intruder,
                method: attempt.method,
                ...(attempt.body ? { body: attempt.body(name) } : {}),
              });
              tried++;
              expect(neutral(answer, name)).toEqual(expected.get(`${i}/${j}`));
            }),
          ),
        ),
      );
    }
    expect(tried).toBeGreaterThanOrEqual(500);
    // Through the client too: the typed NotFoundError.
    await expect(served.client(BOB_KEY).deregister('alpha')).rejects.toBeInstanceOf(NotFoundError);
    await expect(served.client(BOB_KEY).replace(card('alpha'))).rejects.toBeInstanceOf(NotFoundError);
    await expect(served.client(ALICE_KEY, 'team-b').heartbeat('alpha')).rejects.toBeInstanceOf(NotFoundError);
    // Nothing changed: every entry is still the owner's, with its card.
    for (const name of names) {
      const entry = await owner.get(name);
      expect(entry.card).toEqual(original.get(name));
      await expect(owner.heartbeat(name)).resolves.toMatchObject({ name });
    }
    expect((await served.client(BOB_KEY, 'team-b').list()).agents).toEqual([]);
  }, 60_000);
});

describe.each(STORE_KINDS)('expiry (%s store)', (storeKind) => {
  let served: RegistryServer;
  beforeEach(async () => {
    served = await serveRegistry({ ttlMs: 150, storeKind });
  });
  afterEach(() => served.stop());

  it('an entry not renewed within ttlMs disappears everywhere, and its name is free for anyone', async () => {
    const alice = served.client(ALICE_KEY);
    const bob = served.client(BOB_KEY);
    await alice.register(math('fleeting'));
    await eventually(
      () =>
        alice.get('fleeting').then(
          () => false,
          (error: unknown) => error instanceof NotFoundError,
        ),
      'the entry expires',
    );
    expect((await bob.list()).agents).toEqual([]);
    await expect(alice.heartbeat('fleeting')).rejects.toBeInstanceOf(NotFoundError);
    await expect(alice.replace(math('fleeting'))).rejects.toBeInstanceOf(NotFoundError);
    await expect(alice.deregister('fleeting')).rejects.toBeInstanceOf(NotFoundError);
    await expect(bob.register(card('fleeting'))).resolves.toMatchObject({ name: 'fleeting' });
  });
});

describe.each(STORE_KINDS)('maxEntries (%s store)', (storeKind) => {
  let served: RegistryServer;
  beforeEach(async () => {
    served = await serveRegistry({ maxEntries: 7, ttlMs: 60_000, storeKind });
  });
  afterEach(() => served.stop());

  it('is never exceeded under concurrent registrations from several principals and tenants: 429 beyond it', async () => {
    const registrants = [
      served.client(ALICE_KEY),
      served.client(BOB_KEY),
      served.client(ALICE_KEY, 'team-b'),
      served.client(CAROL_KEY, 'team-b'),
    ];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => registrants[i % registrants.length]!.register(card(`agent-${i}`))),
    );
    const accepted = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(accepted).toHaveLength(7);
    expect(refused.every((o) => o.reason instanceof ResourceExhaustedError)).toBe(true);
    expect((refused[0]!.reason as Error).message).toBe('The registry is full');
    const total =
      (await served.client(BOB_KEY).find({})).length +
      (await served.client(CAROL_KEY, 'team-b').find({})).length;
    expect(total).toBe(7);
    await expect(served.registry.store.countEntries()).resolves.toBe(7);
    const raw = await served.raw(AGENTS, { key: BOB_KEY, body: card('one-more') });
    expect([raw.status, errorOf(raw)]).toEqual([
      429,
      { code: 'RESOURCE_EXHAUSTED', message: 'The registry is full' },
    ]);
    // A removal makes room again: whichever registrant owns an entry takes it out.
    let freed = false;
    for (const registrant of registrants) {
      for (const entry of await registrant.find({})) {
        if (!freed)
          freed = await registrant.deregister(entry.name).then(
            () => true,
            () => false,
          );
      }
    }
    expect(freed).toBe(true);
    await expect(served.client(BOB_KEY).register(card('one-more'))).resolves.toMatchObject({
      name: 'one-more',
    });
  });
});
