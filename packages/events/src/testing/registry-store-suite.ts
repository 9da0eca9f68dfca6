/** The one behaviour suite every RegistryStore passes (run from each backend's test file). */
import { UnavailableError, ValueError, type AgentCard, type AgentSkill } from '@agent/core';
import type { RegistryEntry, RegistryEntryQuery, RegistryStore } from '../registry/registry-store.js';
import type { TaskOwner } from '../store/run-store.js';
import { manualClock } from './fixtures.js';

export interface RegistryStoreHarness {
  /** A new, empty store on the given clock. */
  open(options: { now: () => number }): RegistryStore;
}

const ALICE: TaskOwner = { tenant: 'acme', principal_id: 'alice' };
const BOB: TaskOwner = { tenant: 'acme', principal_id: 'bob' };
const ALICE_ELSEWHERE: TaskOwner = { tenant: 'globex', principal_id: 'alice' };
const DEFAULT_TENANT: TaskOwner = { tenant: '', principal_id: 'alice' };

const START = Date.parse('2026-03-01T00:00:00.000Z');
const TTL = 30_000;
const LIMITS = { ttlMs: TTL, maxEntries: 10_000 };
const iso = (ms: number) => new Date(ms).toISOString();

function card(name: string, skills: AgentSkill[] = [], extra: Partial<AgentCard> = {}): AgentCard {
  return { name, description: `the ${name} agent`, url: `http://127.0.0.1:1/${name}`, skills, ...extra };
}

/** What SQLite's BINARY collation does, computed independently of the store's own comparison. */
function byteOrder(names: string[]): string[] {
  return [...names].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

const names = (entries: RegistryEntry[]) => entries.map((entry) => entry.name);

/** Opens a fresh store (on a fresh clock at START) before each test and closes it after. */
function openEach(harness: RegistryStoreHarness): {
  store(): RegistryStore;
  clock: ReturnType<typeof manualClock>;
} {
  const clock = manualClock(START);
  let opened: RegistryStore;
  beforeEach(() => {
    clock.set(START);
    opened = harness.open({ now: clock.now });
  });
  afterEach(async () => {
    await opened.close();
  });
  return { store: () => opened, clock };
}

async function register(store: RegistryStore, owner: TaskOwner, name: string, skills: AgentSkill[] = []) {
  const result = await store.createEntry(owner, card(name, skills), LIMITS);
  if (!('entry' in result)) throw new Error(`could not register ${name}: ${result.refused}`);
  return result.entry;
}

async function allPages(store: RegistryStore, query: RegistryEntryQuery): Promise<string[][]> {
  const pages: string[][] = [];
  let pageToken = '';
  do {
    const page = await store.listEntries({ ...query, pageToken });
    pages.push(names(page.entries));
    pageToken = page.next_page_token;
  } while (pageToken !== '' && pages.length < 1000);
  return pages;
}

export function describeRegistryStore(name: string, harness: RegistryStoreHarness): void {
  describeEntries(name, harness);
  describeOwnership(name, harness);
  describeExpiry(name, harness);
  describeListing(name, harness);
  describeArguments(name, harness);
}

function describeEntries(name: string, harness: RegistryStoreHarness): void {
  describe(`${name} entries (shared RegistryStore suite)`, () => {
    const { store } = openEach(harness);

    it('registers a card under its name, stamped with the clock', async () => {
      const agent = card('writer', [{ id: 'write', name: 'Write', tags: ['text'] }], { version: '1.2.0' });
      const result = await store().createEntry(ALICE, agent, { ttlMs: 1500, maxEntries: 10 });
      const expected: RegistryEntry = {
        tenant: 'acme',
        name: 'writer',
        principal_id: 'alice',
        card: agent,
        registered_at: iso(START),
        heartbeat_at: iso(START),
        expires_at: iso(START + 1500),
      };
      expect(result).toEqual({ entry: expected });
      expect(await store().getEntry('acme', 'writer')).toEqual(expected);
      expect(await store().countEntries()).toBe(1);
    });

    it('refuses a second live entry of a name in a tenant, whoever asks, and keeps the first', async () => {
      await register(store(), ALICE, 'writer');
      const again = card('writer', [], { description: 'an impostor' });
      expect(await store().createEntry(ALICE, again, LIMITS)).toEqual({ refused: 'exists' });
      expect(await store().createEntry(BOB, again, LIMITS)).toEqual({ refused: 'exists' });
      expect((await store().getEntry('acme', 'writer'))!.card.description).toBe('the writer agent');
      // Names are unique per tenant only.
      expect(await store().createEntry(ALICE_ELSEWHERE, again, LIMITS)).toMatchObject({
        entry: { tenant: 'globex', name: 'writer' },
      });
      expect(await store().countEntries()).toBe(2);
    });

    it('refuses to hold more than maxEntries live entries, counting every tenant', async () => {
      const limits = { ttlMs: TTL, maxEntries: 3 };
      await store().createEntry(ALICE, card('a'), limits);
      await store().createEntry(BOB, card('b'), limits);
      await store().createEntry(ALICE_ELSEWHERE, card('c'), limits);
      expect(await store().createEntry(DEFAULT_TENANT, card('d'), limits)).toEqual({ refused: 'full' });
      // An existing name is the more specific answer.
      expect(await store().createEntry(BOB, card('a'), limits)).toEqual({ refused: 'exists' });
      expect(await store().countEntries()).toBe(3);
      await store().deleteEntry(BOB, 'b');
      expect(await store().createEntry(DEFAULT_TENANT, card('d'), limits)).toMatchObject({
        entry: { name: 'd' },
      });
      expect(await store().createEntry(ALICE, card('e'), { ttlMs: TTL, maxEntries: 4 })).toMatchObject({
        entry: { name: 'e' },
      });
    });

    it('never goes over maxEntries, and registers a contested name once, under concurrent calls', async () => {
      const limits = { ttlMs: TTL, maxEntries: 10 };
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store().createEntry(ALICE, card(`agent-${i}`), limits)),
      );
      expect(results.filter((r) => 'entry' in r)).toHaveLength(10);
      expect(results.filter((r) => 'refused' in r && r.refused === 'full')).toHaveLength(40);
      expect(await store().countEntries()).toBe(10);
      const contenders = Array.from({ length: 20 }, (_, i) => ({ tenant: 'race', principal_id: `p${i}` }));
      const race = await Promise.all(
        contenders.map((owner) => store().createEntry(owner, card('prize'), { ttlMs: TTL, maxEntries: 100 })),
      );
      expect(race.filter((r) => 'entry' in r)).toHaveLength(1);
      expect(race.filter((r) => 'refused' in r && r.refused === 'exists')).toHaveLength(19);
    });

    it('replaces the card of its own entry and renews it, keeping registered_at', async () => {
      await register(store(), ALICE, 'writer', [{ id: 'write', name: 'Write' }]);
      const replaced = await store().replaceEntry(
        ALICE,
        card('writer', [{ id: 'edit', name: 'Edit' }], { url: 'http://127.0.0.1:2/' }),
        TTL,
      );
      expect(replaced).toMatchObject({
        name: 'writer',
        principal_id: 'alice',
        card: { url: 'http://127.0.0.1:2/', skills: [{ id: 'edit', name: 'Edit' }] },
        registered_at: iso(START),
      });
      expect(await store().getEntry('acme', 'writer')).toEqual(replaced);
      expect((await store().listEntries({ tenant: 'acme', skill: 'write' })).entries).toEqual([]);
      expect(names((await store().listEntries({ tenant: 'acme', skill: 'edit' })).entries)).toEqual([
        'writer',
      ]);
      // By card.name: a card naming no entry of the owner's replaces nothing.
      expect(await store().replaceEntry(ALICE, card('reader'), TTL)).toBeNull();
      expect(await store().getEntry('acme', 'reader')).toBeNull();
    });

    it('deletes its own entry and returns it; the name is then free for anyone', async () => {
      const entry = await register(store(), ALICE, 'writer');
      expect(await store().deleteEntry(ALICE, 'writer')).toEqual(entry);
      expect(await store().getEntry('acme', 'writer')).toBeNull();
      expect(await store().deleteEntry(ALICE, 'writer')).toBeNull();
      expect(await store().heartbeatEntry(ALICE, 'writer', TTL)).toBeNull();
      expect(await store().countEntries()).toBe(0);
      expect(await store().createEntry(BOB, card('writer'), LIMITS)).toMatchObject({
        entry: { principal_id: 'bob' },
      });
    });

    it('returns copies: mutating an answer or the card given changes nothing stored', async () => {
      const given = card('writer', [{ id: 'write', name: 'Write', tags: ['text'] }], {
        metadata: { region: 'eu' },
      });
      const result = await store().createEntry(ALICE, given, LIMITS);
      given.skills![0]!.tags!.push('given-later');
      (given.metadata as Record<string, unknown>).region = 'us';
      const answers = [
        (result as { entry: RegistryEntry }).entry,
        (await store().getEntry('acme', 'writer'))!,
        (await store().listEntries({ tenant: 'acme' })).entries[0]!,
        (await store().heartbeatEntry(ALICE, 'writer', TTL))!,
        (await store().replaceEntry(
          ALICE,
          card('writer', [{ id: 'write', name: 'Write', tags: ['text'] }], {
            metadata: { region: 'eu' },
          }),
          TTL,
        ))!,
      ];
      for (const answer of answers) {
        answer.card.skills![0]!.tags!.push('mutated');
        answer.card.metadata!.region = 'mutated';
        answer.card.name = 'mutated';
        answer.expires_at = 'mutated';
      }
      const stored = (await store().getEntry('acme', 'writer'))!;
      expect(stored.card).toEqual(
        card('writer', [{ id: 'write', name: 'Write', tags: ['text'] }], {
          metadata: { region: 'eu' },
        }),
      );
      expect(stored.expires_at).toBe(iso(START + TTL));
      const deleted = (await store().deleteEntry(ALICE, 'writer'))!;
      expect(deleted.card.metadata).toEqual({ region: 'eu' });
    });

    it('stores the card as JSON: undefined fields vanish', async () => {
      const given = { ...card('writer'), version: undefined, metadata: { gone: undefined, kept: 1 } };
      const { entry } = (await store().createEntry(ALICE, given as AgentCard, LIMITS)) as {
        entry: RegistryEntry;
      };
      expect(entry.card).not.toHaveProperty('version');
      expect((await store().getEntry('acme', 'writer'))!.card.metadata).toEqual({ kept: 1 });
    });

    it('refuses calls after close, and close is idempotent', async () => {
      await register(store(), ALICE, 'writer');
      await store().close();
      await store().close();
      const calls = [
        store().createEntry(ALICE, card('x'), LIMITS),
        store().replaceEntry(ALICE, card('writer'), TTL),
        store().heartbeatEntry(ALICE, 'writer', TTL),
        store().deleteEntry(ALICE, 'writer'),
        store().getEntry('acme', 'writer'),
        store().listEntries({ tenant: 'acme' }),
        store().countEntries(),
      ];
      for (const call of calls) await expect(call).rejects.toThrow(UnavailableError);
    });
  });
}

function describeOwnership(name: string, harness: RegistryStoreHarness): void {
  describe(`${name} ownership (shared RegistryStore suite)`, () => {
    const { store, clock } = openEach(harness);

    it('gives another principal, and the same principal in another tenant, null for every write, as for an absent name', async () => {
      const entry = await register(store(), ALICE, 'writer', [{ id: 'write', name: 'Write' }]);
      clock.set(START + 1000);
      for (const stranger of [
        BOB,
        ALICE_ELSEWHERE,
        DEFAULT_TENANT,
        { tenant: 'acme', principal_id: 'Alice' },
      ]) {
        for (let attempt = 0; attempt < 50; attempt += 1) {
          const forged = card('writer', [], { url: `http://127.0.0.1:9/${attempt}` });
          expect(await store().replaceEntry(stranger, forged, TTL)).toBeNull();
          expect(await store().heartbeatEntry(stranger, 'writer', TTL)).toBeNull();
          expect(await store().deleteEntry(stranger, 'writer')).toBeNull();
        }
        // The same answer as for a name nobody registered.
        expect(await store().replaceEntry(stranger, card('nobody'), TTL)).toBeNull();
        expect(await store().heartbeatEntry(stranger, 'nobody', TTL)).toBeNull();
        expect(await store().deleteEntry(stranger, 'nobody')).toBeNull();
      }
      // Untouched: same card, not renewed.
      expect(await store().getEntry('acme', 'writer')).toEqual(entry);
      expect(await store().countEntries()).toBe(1);
    });

    it('shows an entry to every principal of its tenant and to no other tenant', async () => {
      const entry = await register(store(), ALICE, 'writer');
      expect(await store().getEntry('acme', 'writer')).toEqual(entry);
      expect(await store().getEntry('globex', 'writer')).toBeNull();
      expect(await store().getEntry('', 'writer')).toBeNull();
      expect(names((await store().listEntries({ tenant: 'acme' })).entries)).toEqual(['writer']);
      expect(await store().listEntries({ tenant: 'globex' })).toEqual({ entries: [], next_page_token: '' });
      expect(await store().listEntries({ tenant: '', name: 'writer' })).toEqual({
        entries: [],
        next_page_token: '',
      });
    });

    it('lets the owner renew and replace while others are refused', async () => {
      await register(store(), ALICE, 'writer');
      clock.set(START + 10_000);
      expect(await store().heartbeatEntry(BOB, 'writer', TTL)).toBeNull();
      expect(await store().heartbeatEntry(ALICE, 'writer', TTL)).toMatchObject({
        heartbeat_at: iso(START + 10_000),
        expires_at: iso(START + 10_000 + TTL),
      });
    });
  });
}

function describeExpiry(name: string, harness: RegistryStoreHarness): void {
  describe(`${name} expiry (shared RegistryStore suite)`, () => {
    const { store, clock } = openEach(harness);

    it('hides an entry from every method from the instant expires_at is reached', async () => {
      await store().createEntry(ALICE, card('writer'), { ttlMs: 1000, maxEntries: 10 });
      clock.set(START + 999);
      expect(await store().getEntry('acme', 'writer')).not.toBeNull();
      expect(await store().countEntries()).toBe(1);
      clock.set(START + 1000);
      expect(await store().getEntry('acme', 'writer')).toBeNull();
      expect(await store().listEntries({ tenant: 'acme' })).toEqual({ entries: [], next_page_token: '' });
      expect(await store().listEntries({ tenant: 'acme', name: 'writer' })).toEqual({
        entries: [],
        next_page_token: '',
      });
      expect(await store().countEntries()).toBe(0);
      expect(await store().replaceEntry(ALICE, card('writer'), TTL)).toBeNull();
      expect(await store().heartbeatEntry(ALICE, 'writer', TTL)).toBeNull();
      expect(await store().deleteEntry(ALICE, 'writer')).toBeNull();
    });

    it('lets anyone register an expired name, as a new entry', async () => {
      await store().createEntry(ALICE, card('writer'), { ttlMs: 1000, maxEntries: 10 });
      clock.set(START + 5000);
      const result = await store().createEntry(BOB, card('writer', [], { description: 'new' }), LIMITS);
      expect(result).toEqual({
        entry: {
          tenant: 'acme',
          name: 'writer',
          principal_id: 'bob',
          card: card('writer', [], { description: 'new' }),
          registered_at: iso(START + 5000),
          heartbeat_at: iso(START + 5000),
          expires_at: iso(START + 5000 + TTL),
        },
      });
      expect(await store().heartbeatEntry(ALICE, 'writer', TTL)).toBeNull();
      expect(await store().heartbeatEntry(BOB, 'writer', TTL)).not.toBeNull();
    });

    it('does not count expired entries against maxEntries', async () => {
      const limits = { ttlMs: 1000, maxEntries: 2 };
      await store().createEntry(ALICE, card('a'), limits);
      await store().createEntry(ALICE, card('b'), limits);
      expect(await store().createEntry(ALICE, card('c'), limits)).toEqual({ refused: 'full' });
      clock.set(START + 1000);
      expect(await store().createEntry(ALICE, card('c'), limits)).toMatchObject({ entry: { name: 'c' } });
      // The expired entry being replaced does not count either.
      expect(await store().createEntry(BOB, card('a'), limits)).toMatchObject({
        entry: { principal_id: 'bob' },
      });
      expect(await store().countEntries()).toBe(2);
    });

    it('renews on heartbeat and replace: ttl after the last one, whatever the TTL of each call', async () => {
      await store().createEntry(ALICE, card('writer'), { ttlMs: 1000, maxEntries: 10 });
      clock.set(START + 900);
      expect(await store().heartbeatEntry(ALICE, 'writer', 1000)).toMatchObject({
        registered_at: iso(START),
        heartbeat_at: iso(START + 900),
        expires_at: iso(START + 1900),
      });
      clock.set(START + 1800);
      expect(await store().replaceEntry(ALICE, card('writer'), 200)).toMatchObject({
        registered_at: iso(START),
        heartbeat_at: iso(START + 1800),
        expires_at: iso(START + 2000),
      });
      clock.set(START + 1999);
      expect(await store().getEntry('acme', 'writer')).not.toBeNull();
      clock.set(START + 2000);
      expect(await store().getEntry('acme', 'writer')).toBeNull();
    });

    it('expires each entry on its own deadline when TTLs differ and renewals interleave', async () => {
      const at = (ms: number) => clock.set(START + ms);
      await store().createEntry(ALICE, card('long'), { ttlMs: 10_000, maxEntries: 10 });
      await store().createEntry(ALICE, card('short'), { ttlMs: 1000, maxEntries: 10 });
      at(500);
      await store().createEntry(ALICE, card('medium'), { ttlMs: 3000, maxEntries: 10 });
      await store().heartbeatEntry(ALICE, 'short', 100);
      const live = async () => names((await store().listEntries({ tenant: 'acme' })).entries);
      expect(await live()).toEqual(['long', 'medium', 'short']);
      at(600);
      expect(await live()).toEqual(['long', 'medium']);
      at(3500);
      expect(await live()).toEqual(['long']);
      await store().createEntry(ALICE, card('later'), { ttlMs: 1, maxEntries: 10 });
      expect(await live()).toEqual(['later', 'long']);
      at(3501);
      expect(await live()).toEqual(['long']);
      at(10_000);
      expect(await live()).toEqual([]);
      expect(await store().countEntries()).toBe(0);
    });
  });
}

function describeListing(name: string, harness: RegistryStoreHarness): void {
  describe(`${name} listing (shared RegistryStore suite)`, () => {
    const { store } = openEach(harness);

    it('orders by name in UTF-8 byte order and pages through every entry', async () => {
      const all = ['b', 'a', 'B', 'a b', 'é', 'e', '😀', 'ｚ', '\uFFFD', 'Z', '0', 'a-1', 'ab'];
      for (const agent of all) await register(store(), ALICE, agent);
      await register(store(), ALICE_ELSEWHERE, 'not-in-acme');
      const expected = byteOrder(all);
      // UTF-16 order would put the emoji before U+FF5A; byte order puts it last.
      expect(expected.slice(-1)).toEqual(['😀']);
      const one = await store().listEntries({ tenant: 'acme', pageSize: 100 });
      expect(names(one.entries)).toEqual(expected);
      expect(one.next_page_token).toBe('');
      const pages = await allPages(store(), { tenant: 'acme', pageSize: 3 });
      expect(pages.flat()).toEqual(expected);
      expect(pages.map((page) => page.length)).toEqual([3, 3, 3, 3, 1]);
      const exact = await allPages(store(), { tenant: 'acme', pageSize: all.length });
      expect(exact).toEqual([expected]);
    });

    it('ends with an empty token, and defaults to 50 a page', async () => {
      expect(await store().listEntries({ tenant: 'acme' })).toEqual({ entries: [], next_page_token: '' });
      for (let i = 0; i < 51; i += 1) await register(store(), ALICE, `agent-${String(i).padStart(2, '0')}`);
      const first = await store().listEntries({ tenant: 'acme' });
      expect(first.entries).toHaveLength(50);
      expect(first.next_page_token).not.toBe('');
      const second = await store().listEntries({ tenant: 'acme', pageToken: first.next_page_token });
      expect(names(second.entries)).toEqual(['agent-50']);
      expect(second.next_page_token).toBe('');
    });

    it('keeps later pages stable when entries come and go after the first page', async () => {
      for (const agent of ['a', 'b', 'c', 'd', 'e']) await register(store(), ALICE, agent);
      const first = await store().listEntries({ tenant: 'acme', pageSize: 2 });
      expect(names(first.entries)).toEqual(['a', 'b']);
      await register(store(), ALICE, 'aa'); // before the cursor: not seen, shifts nothing
      await register(store(), BOB, 'bb'); // after it: seen
      await store().deleteEntry(ALICE, 'b'); // the cursor's own entry may go
      const second = await store().listEntries({
        tenant: 'acme',
        pageSize: 2,
        pageToken: first.next_page_token,
      });
      expect(names(second.entries)).toEqual(['bb', 'c']);
      const third = await store().listEntries({
        tenant: 'acme',
        pageSize: 2,
        pageToken: second.next_page_token,
      });
      expect(names(third.entries)).toEqual(['d', 'e']);
      expect(third.next_page_token).toBe('');
    });

    it('filters by skill id or skill tag, and by exact name', async () => {
      await register(store(), ALICE, 'writer', [{ id: 'write', name: 'Write', tags: ['text', 'docs'] }]);
      await register(store(), BOB, 'reader', [
        { id: 'read', name: 'Read', tags: ['text'] },
        { id: 'docs', name: 'Docs' },
      ]);
      await register(store(), ALICE, 'painter', [{ id: 'paint', name: 'Paint', tags: ['image'] }]);
      await register(store(), ALICE, 'idle');
      await register(store(), ALICE_ELSEWHERE, 'other-writer', [{ id: 'write', name: 'Write' }]);
      const list = async (query: Omit<RegistryEntryQuery, 'tenant'>) =>
        names((await store().listEntries({ tenant: 'acme', ...query })).entries);
      expect(await list({ skill: 'write' })).toEqual(['writer']);
      expect(await list({ skill: 'text' })).toEqual(['reader', 'writer']);
      expect(await list({ skill: 'docs' })).toEqual(['reader', 'writer']);
      expect(await list({ skill: 'image' })).toEqual(['painter']);
      expect(await list({ skill: 'Write' })).toEqual([]);
      expect(await list({ skill: 'wri' })).toEqual([]);
      expect(await list({ name: 'reader' })).toEqual(['reader']);
      expect(await list({ name: 'Reader' })).toEqual([]);
      expect(await list({ name: 'reader', skill: 'text' })).toEqual(['reader']);
      expect(await list({ name: 'reader', skill: 'image' })).toEqual([]);
      // An empty filter is no filter.
      expect(await list({ name: '', skill: '' })).toEqual(['idle', 'painter', 'reader', 'writer']);
      expect(await allPages(store(), { tenant: 'acme', skill: 'text', pageSize: 1 })).toEqual([
        ['reader'],
        ['writer'],
      ]);
      expect(await allPages(store(), { tenant: 'acme', name: 'idle', pageSize: 1 })).toEqual([['idle']]);
    });

    it('matches only well-shaped skills: a string never matches by substring', async () => {
      const odd = [
        card('a', 'demo' as never),
        card('b', [null, 'demo', { id: 5, tags: 'demo' }] as never),
        card('c', [{ id: 'x', name: 'X', tags: ['demo', 7] }] as never),
        card('d', [{ name: 'no id', tags: ['other'] }] as never),
      ];
      for (const agent of odd) await store().createEntry(ALICE, agent, LIMITS);
      const skill = async (value: string) =>
        names((await store().listEntries({ tenant: 'acme', skill: value })).entries);
      expect(await skill('demo')).toEqual(['c']);
      expect(await skill('dem')).toEqual([]);
      expect(await skill('other')).toEqual(['d']);
      expect(await skill('5')).toEqual([]);
      expect(await skill('7')).toEqual([]);
    });

    it('refuses a token of another tenant or filter, and a malformed one, with ValueError', async () => {
      for (const agent of ['a', 'b', 'c']) await register(store(), ALICE, agent, [{ id: 's', name: 'S' }]);
      for (const agent of ['a', 'b', 'c'])
        await register(store(), ALICE_ELSEWHERE, agent, [{ id: 's', name: 'S' }]);
      const { next_page_token: token } = await store().listEntries({ tenant: 'acme', pageSize: 1 });
      const filtered = (await store().listEntries({ tenant: 'acme', skill: 's', pageSize: 1 }))
        .next_page_token;
      expect(token).not.toBe('');
      // The page size may change between pages; nothing else may.
      expect(
        names((await store().listEntries({ tenant: 'acme', pageSize: 5, pageToken: token })).entries),
      ).toEqual(['b', 'c']);
      const refused: RegistryEntryQuery[] = [
        { tenant: 'globex', pageToken: token },
        { tenant: '', pageToken: token },
        { tenant: 'acme', skill: 's', pageToken: token },
        { tenant: 'acme', name: 'b', pageToken: token },
        { tenant: 'acme', pageToken: filtered },
        { tenant: 'acme', skill: 'other', pageToken: filtered },
        { tenant: 'acme', pageToken: 'not a token' },
        { tenant: 'acme', pageToken: Buffer.from('[1,"x","a"]').toString('base64url') },
        { tenant: 'acme', pageToken: Buffer.from('{}').toString('base64url') },
        { tenant: 'acme', pageToken: token.slice(0, -3) },
      ];
      for (const query of refused) {
        const error = await store()
          .listEntries(query)
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ValueError);
        expect(error).toMatchObject({ code: 'VALUE_ERROR', data: { field: 'pageToken' } });
      }
    });
  });
}

function describeArguments(name: string, harness: RegistryStoreHarness): void {
  describe(`${name} arguments (shared RegistryStore suite)`, () => {
    const { store } = openEach(harness);

    it('rejects bad cards with ValueError, storing nothing', async () => {
      const cyclic = card('cyclic') as AgentCard & { self?: unknown };
      cyclic.self = cyclic;
      const bad = [
        null,
        'writer',
        [],
        { description: 'no name' },
        card(''),
        { ...card('x'), name: 5 },
        card('lone \uD800 surrogate'),
        cyclic,
      ];
      for (const agent of bad as AgentCard[]) {
        await expect(store().createEntry(ALICE, agent, LIMITS)).rejects.toThrow(ValueError);
        await expect(store().replaceEntry(ALICE, agent, TTL)).rejects.toThrow(ValueError);
      }
      expect(await store().countEntries()).toBe(0);
    });

    it('rejects a bad ttlMs, maxEntries or options object with ValueError', async () => {
      await register(store(), ALICE, 'writer');
      for (const ttlMs of [0, -1, 1.5, NaN, Infinity, '1000', null, undefined, 1e300]) {
        await expect(
          store().createEntry(ALICE, card('x'), { ttlMs: ttlMs as number, maxEntries: 10 }),
        ).rejects.toThrow(/ttlMs/);
        await expect(store().replaceEntry(ALICE, card('writer'), ttlMs as number)).rejects.toThrow(
          ValueError,
        );
        await expect(store().heartbeatEntry(ALICE, 'writer', ttlMs as number)).rejects.toThrow(ValueError);
      }
      // An expiry past year 9999 is refused rather than stored as an unsortable timestamp.
      await expect(store().heartbeatEntry(ALICE, 'writer', Number.MAX_SAFE_INTEGER)).rejects.toThrow(/9999/);
      for (const maxEntries of [0, -1, 2.5, NaN, '10', undefined])
        await expect(
          store().createEntry(ALICE, card('x'), { ttlMs: TTL, maxEntries: maxEntries as number }),
        ).rejects.toThrow(/maxEntries/);
      for (const options of [undefined, null, 'fast', { ttlMs: TTL, maxEntries: 10, ttl: 5 }])
        await expect(store().createEntry(ALICE, card('x'), options as never)).rejects.toThrow(ValueError);
      expect(await store().countEntries()).toBe(1);
      expect((await store().getEntry('acme', 'writer'))!.expires_at).toBe(iso(START + TTL));
    });

    it('rejects bad owners, tenants and names with ValueError', async () => {
      const owners = [
        undefined,
        null,
        'alice',
        { tenant: 'acme' },
        { tenant: 'acme', principal_id: '' },
        { tenant: 5, principal_id: 'p' },
      ];
      for (const owner of owners as TaskOwner[]) {
        await expect(store().createEntry(owner, card('x'), LIMITS)).rejects.toThrow(ValueError);
        await expect(store().replaceEntry(owner, card('x'), TTL)).rejects.toThrow(ValueError);
        await expect(store().heartbeatEntry(owner, 'x', TTL)).rejects.toThrow(ValueError);
        await expect(store().deleteEntry(owner, 'x')).rejects.toThrow(ValueError);
      }
      for (const bad of ['', 5, null, undefined, 'lone \uDC00']) {
        await expect(store().heartbeatEntry(ALICE, bad as string, TTL)).rejects.toThrow(ValueError);
        await expect(store().deleteEntry(ALICE, bad as string)).rejects.toThrow(ValueError);
        await expect(store().getEntry('acme', bad as string)).rejects.toThrow(ValueError);
      }
      for (const tenant of [undefined, null, 5]) {
        await expect(store().getEntry(tenant as unknown as string, 'x')).rejects.toThrow(ValueError);
        await expect(store().listEntries({ tenant: tenant as unknown as string })).rejects.toThrow(
          ValueError,
        );
      }
    });

    it('rejects a bad query with ValueError', async () => {
      const queries = [
        undefined,
        'acme',
        {},
        { tenant: 'acme', pageSize: 0 },
        { tenant: 'acme', pageSize: 101 },
        { tenant: 'acme', pageSize: 2.5 },
        { tenant: 'acme', skill: 5 },
        { tenant: 'acme', name: ['a'] },
        { tenant: 'acme', pageToken: 7 },
        { tenant: 'acme', limit: 5 },
      ];
      for (const query of queries)
        await expect(store().listEntries(query as RegistryEntryQuery)).rejects.toThrow(ValueError);
      expect((await store().listEntries({ tenant: 'acme', pageSize: 100 })).entries).toEqual([]);
      expect((await store().listEntries({ tenant: 'acme', pageSize: 1, name: undefined })).entries).toEqual(
        [],
      );
    });
  });
}
