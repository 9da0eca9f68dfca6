/**
 * Cases for a server that serves the agent registry (`/registry/agents…`, HTTP only): register,
 * read, list with filters and paging, heartbeat, replace, deregister, the typed refusals, and an
 * entry out of reach of anyone but its owner. They speak raw HTTP: the wire is what they check.
 * Every case registers names of its own (`conformance-<id>-…`) and deregisters them when it ends,
 * so runs against one server do not see each other.
 */
import { newId } from '@agent/core';
import type { CaseContext, ConformanceCase } from '../context.js';
import { assert, errorBody } from '../expect.js';
import { credentialHeaders, type Caller } from '../presented-credentials.js';
import { rawHttp, type RawResponse } from '../raw-http.js';

const HTTP = ['http'] as const;
const AGENTS = '/registry/agents';
/** The registry's page size bounds. */
const MAX_PAGE_SIZE = 100;
/** Entry times are ISO 8601 UTC. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface Skill {
  id: string;
  name: string;
  tags?: string[];
}

interface Card {
  name: string;
  description: string;
  url: string;
  version?: string;
  skills?: Skill[];
}

interface Entry {
  name: string;
  card: Card;
  registered_at: string;
  heartbeat_at: string;
  expires_at: string;
}

interface Page {
  agents: Entry[];
  next_page_token: string;
}

/** Who sends a request: the first principal (default), the second one, or nobody. */

interface Call {
  as?: Caller;
  /** Sent as `X-Tenant`. */
  tenant?: string;
  /** A value is sent as JSON; a string as it is (malformed JSON). */
  body?: unknown;
  raw?: string;
}

function base(ctx: CaseContext): string {
  assert.ok(ctx.httpUrl, 'the registry cases need --transport http');
  return ctx.httpUrl;
}

function call(ctx: CaseContext, method: string, path: string, options: Call = {}): Promise<RawResponse> {
  const headers = credentialHeaders(ctx, options.as ?? 'self');
  if (options.tenant !== undefined) headers['x-tenant'] = options.tenant;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  return rawHttp(base(ctx), path, { method, headers, body, signal: ctx.signal });
}

const agentPath = (name: string): string => `${AGENTS}/${encodeURIComponent(name)}`;

function expectStatus(res: RawResponse, status: number, what: string): void {
  assert.equal(
    res.status,
    status,
    `${what}: expected HTTP ${status}, got ${res.status} ${res.text.slice(0, 300)}`,
  );
}

function expectError(res: RawResponse, status: number, code: string, what: string) {
  expectStatus(res, status, what);
  assert.match(String(res.headers['content-type']), /application\/json/, `${what}: error bodies are JSON`);
  const error = errorBody(res.json);
  assert.equal(error.code, code, `${what}: expected error.code ${code}, got ${String(error.code)}`);
  assert.equal(typeof error.message, 'string', `${what}: error.message is a string`);
  return error;
}

function expectPointer(res: RawResponse, pointer: string, what: string): void {
  const error = expectError(res, 422, 'VALIDATION_FAILED', what);
  const errors = (error.data as { errors?: { pointer: string }[] } | undefined)?.errors ?? [];
  assert.ok(
    errors.some((e) => e.pointer === pointer),
    `${what}: data.errors names ${pointer}: ${JSON.stringify(errors)}`,
  );
}

function expectNotRegistered(res: RawResponse, name: string, what: string): void {
  const error = expectError(res, 404, 'NOT_FOUND', what);
  assert.equal(error.message, `Agent ${name} is not registered`, `${what}: the not-found message`);
}

/** An entry as the wire carries it: exactly its five fields, its times ISO 8601 UTC. */
function expectEntry(res: RawResponse, status: number, card: Card, what: string): Entry {
  expectStatus(res, status, what);
  const entry = res.json as Entry;
  assert.deepEqual(
    Object.keys(entry).sort(),
    ['card', 'expires_at', 'heartbeat_at', 'name', 'registered_at'],
    `${what}: an entry has exactly name, card, registered_at, heartbeat_at, expires_at (no owner)`,
  );
  assert.equal(entry.name, card.name, `${what}: the entry's name is the card's`);
  assert.deepEqual(entry.card, card, `${what}: the entry carries the card as registered`);
  for (const field of ['registered_at', 'heartbeat_at', 'expires_at'] as const) {
    assert.match(entry[field], ISO_UTC, `${what}: ${field} is ISO 8601 UTC`);
  }
  assert.ok(
    Date.parse(entry.expires_at) > Date.parse(entry.heartbeat_at),
    `${what}: expires_at (${entry.expires_at}) comes after heartbeat_at (${entry.heartbeat_at})`,
  );
  assert.ok(
    Date.parse(entry.heartbeat_at) >= Date.parse(entry.registered_at),
    `${what}: heartbeat_at is not before registered_at`,
  );
  return entry;
}

function expectPage(res: RawResponse, what: string): Page {
  expectStatus(res, 200, what);
  const page = res.json as Page;
  assert.deepEqual(
    Object.keys(page).sort(),
    ['agents', 'next_page_token'],
    `${what}: {agents, next_page_token}`,
  );
  assert.ok(Array.isArray(page.agents), `${what}: agents is an array`);
  assert.equal(typeof page.next_page_token, 'string', `${what}: next_page_token is a string`);
  return page;
}

function names(page: Page): string[] {
  return page.agents.map((entry) => entry.name);
}

function card(name: string, skills: Skill[] = [{ id: 'echo', name: 'Echo' }]): Card {
  return {
    name,
    description: 'registered by the conformance suite',
    url: 'http://127.0.0.1:9/conformance',
    version: '1.0.0',
    skills,
  };
}

/** Names unique to one run of one case. */
function prefix(): string {
  return `conformance-${newId()}`;
}

/**
 * Runs `work` with a `register` that records each name it registered, and deregisters them all
 * afterwards (as their owner, in their tenant), whatever `work` did.
 */
async function withEntries(
  ctx: CaseContext,
  work: (register: (card: Card, options?: Call) => Promise<Entry>) => Promise<void>,
): Promise<void> {
  const registered: { name: string; options: Call }[] = [];
  try {
    await work(async (entryCard, options = {}) => {
      const res = await call(ctx, 'POST', AGENTS, { ...options, body: entryCard });
      const entry = expectEntry(res, 201, entryCard, `register ${entryCard.name}`);
      registered.push({ name: entryCard.name, options });
      return entry;
    });
  } finally {
    for (const { name, options } of registered) {
      // Best effort: a case may have removed it already.
      await call(ctx, 'DELETE', agentPath(name), { as: options.as, tenant: options.tenant }).catch(
        () => undefined,
      );
    }
  }
}

/** Every page of a listing, walked with `page_size`; the names in the order served. */
async function walk(ctx: CaseContext, query: string, pageSize: number, what: string): Promise<Page[]> {
  const pages: Page[] = [];
  let token = '';
  for (;;) {
    const tokenPart = token === '' ? '' : `&page_token=${encodeURIComponent(token)}`;
    const page = expectPage(
      await call(ctx, 'GET', `${AGENTS}?${query}&page_size=${pageSize}${tokenPart}`),
      `${what}, page ${pages.length + 1}`,
    );
    assert.ok(page.agents.length <= pageSize, `${what}: a page holds at most page_size entries`);
    pages.push(page);
    if (page.next_page_token === '') return pages;
    assert.ok(pages.length < 1000, `${what}: the listing never ends`);
    token = page.next_page_token;
  }
}

/** A refusal made comparable across names: the name in the message and data made neutral. */
function neutral(res: RawResponse, name: string): { status: number; body: string } {
  return { status: res.status, body: res.text.split(name).join('<name>') };
}

/** The three owner-only operations on `name`, as `as` in `tenant`. */
function ownerOnlyCalls(
  ctx: CaseContext,
  name: string,
  options: Call,
): [string, () => Promise<RawResponse>][] {
  return [
    [
      'replace',
      () =>
        call(ctx, 'PUT', agentPath(name), { ...options, body: { ...card(name), description: 'taken over' } }),
    ],
    ['heartbeat', () => call(ctx, 'POST', `${agentPath(name)}/heartbeat`, options)],
    ['deregister', () => call(ctx, 'DELETE', agentPath(name), options)],
  ];
}

export const registryCases: ConformanceCase[] = [
  {
    id: 'registry.register',
    title:
      'POST /registry/agents registers a card: 201 and the entry, which GET /registry/agents/{name} reads back',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const sent = card(`${prefix()}-agent`, [{ id: 'echo', name: 'Echo', tags: ['text'] }]);
      await withEntries(ctx, async (register) => {
        const entry = await register(sent);
        assert.equal(entry.registered_at, entry.heartbeat_at, 'a new entry was last renewed when registered');
        const read = expectEntry(await call(ctx, 'GET', agentPath(sent.name)), 200, sent, 'GET the entry');
        assert.deepEqual(read, entry, 'GET answers the entry as registered');
      });
    },
  },
  {
    id: 'registry.list.filters',
    title: 'GET /registry/agents lists by name ascending; ?name= is exact, ?skill= matches a skill id or tag',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const p = prefix();
      const skill = `${p}-skill`;
      await withEntries(ctx, async (register) => {
        // Registered out of order: the listing sorts.
        await register(card(`${p}-c`, [{ id: 'other', name: 'Other' }]));
        await register(card(`${p}-a`, [{ id: skill, name: 'By id' }]));
        await register(card(`${p}-b`, [{ id: 'tagged', name: 'By tag', tags: ['x', skill] }]));
        const bySkill = expectPage(await call(ctx, 'GET', `${AGENTS}?skill=${skill}`), '?skill=');
        assert.deepEqual(names(bySkill), [`${p}-a`, `${p}-b`], '?skill= matches the skill id and the tag');
        assert.equal(bySkill.next_page_token, '', 'one page: the token is ""');
        const byName = expectPage(await call(ctx, 'GET', `${AGENTS}?name=${p}-c`), '?name=');
        assert.deepEqual(names(byName), [`${p}-c`], '?name= is the exact card name');
        assert.deepEqual(
          names(expectPage(await call(ctx, 'GET', `${AGENTS}?name=${p}`), '?name= a prefix')),
          [],
          '?name= never matches a prefix',
        );
        assert.deepEqual(
          names(expectPage(await call(ctx, 'GET', `${AGENTS}?skill=${skill}&name=${p}-b`), 'both')),
          [`${p}-b`],
          'both filters apply together',
        );
        assert.deepEqual(
          names(expectPage(await call(ctx, 'GET', `${AGENTS}?skill=${p}-none`), 'no match')),
          [],
          'a skill nobody has lists nothing',
        );
        const all = (await walk(ctx, 'skill=', MAX_PAGE_SIZE, 'unfiltered')).flatMap(names);
        assert.deepEqual([...all].sort(), all, 'the whole listing is by name ascending');
        for (const name of [`${p}-a`, `${p}-b`, `${p}-c`])
          assert.ok(all.includes(name), `the listing has ${name}`);
      });
    },
  },
  {
    id: 'registry.list.paging',
    title:
      'page_size (1-100) pages the listing with next_page_token, "" on the last page; bad values are 422',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const p = prefix();
      const skill = `${p}-page`;
      const expected = [`${p}-a`, `${p}-b`, `${p}-c`];
      await withEntries(ctx, async (register) => {
        for (const name of [...expected].reverse())
          await register(card(name, [{ id: skill, name: 'Paged' }]));
        const ones = await walk(ctx, `skill=${skill}`, 1, 'page_size=1');
        assert.deepEqual(ones.flatMap(names), expected, 'page_size=1 walks every entry once, in order');
        for (const page of ones.slice(0, -1))
          assert.notEqual(page.next_page_token, '', 'a token before the last page');
        const twos = await walk(ctx, `skill=${skill}`, 2, 'page_size=2');
        assert.deepEqual(
          twos.map(names),
          [expected.slice(0, 2), expected.slice(2)],
          'page_size=2: two pages',
        );
        const whole = expectPage(await call(ctx, 'GET', `${AGENTS}?skill=${skill}`), 'default page size');
        assert.deepEqual(names(whole), expected, 'the default page holds all three');
        for (const size of ['0', String(MAX_PAGE_SIZE + 1), '-1', 'ten']) {
          expectPointer(
            await call(ctx, 'GET', `${AGENTS}?page_size=${size}`),
            '/page_size',
            `page_size=${size}`,
          );
        }
        expectPointer(
          await call(ctx, 'GET', `${AGENTS}?page_token=made-up-token`),
          '/page_token',
          'a made-up page_token',
        );
      });
    },
  },
  {
    id: 'registry.heartbeat',
    title: 'POST /registry/agents/{name}/heartbeat (no body or {}) renews the entry: expires_at moves on',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const sent = card(`${prefix()}-agent`);
      await withEntries(ctx, async (register) => {
        const first = await register(sent);
        const path = `${agentPath(sent.name)}/heartbeat`;
        expectEntry(await call(ctx, 'POST', path), 200, sent, 'heartbeat without a body');
        let renewed = expectEntry(
          await call(ctx, 'POST', path, { body: {} }),
          200,
          sent,
          'heartbeat with {}',
        );
        // Time must pass for expires_at to move: renewed until it does, as long as the case may run.
        while (Date.parse(renewed.expires_at) <= Date.parse(first.expires_at)) {
          assert.ok(!ctx.signal.aborted, 'expires_at never moved on');
          await new Promise((resolve) => setTimeout(resolve, 20));
          renewed = expectEntry(await call(ctx, 'POST', path), 200, sent, 'heartbeat');
        }
        assert.equal(renewed.registered_at, first.registered_at, 'a heartbeat keeps registered_at');
        assert.ok(
          Date.parse(renewed.heartbeat_at) > Date.parse(first.heartbeat_at),
          'a heartbeat moves heartbeat_at',
        );
        const read = expectEntry(
          await call(ctx, 'GET', agentPath(sent.name)),
          200,
          sent,
          'GET after heartbeats',
        );
        assert.equal(read.expires_at, renewed.expires_at, 'GET shows the renewed expiry');
      });
    },
  },
  {
    id: 'registry.replace',
    title:
      "PUT /registry/agents/{name} replaces the owner's card and renews it; a card of another name is 422",
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const sent = card(`${prefix()}-agent`);
      await withEntries(ctx, async (register) => {
        const first = await register(sent);
        const changed = {
          ...sent,
          description: 'replaced by the conformance suite',
          skills: [{ id: 'new', name: 'New' }],
        };
        const replaced = expectEntry(
          await call(ctx, 'PUT', agentPath(sent.name), { body: changed }),
          200,
          changed,
          'PUT a new card',
        );
        assert.equal(replaced.registered_at, first.registered_at, 'a replace keeps registered_at');
        assert.ok(Date.parse(replaced.expires_at) >= Date.parse(first.expires_at), 'a replace renews');
        expectEntry(await call(ctx, 'GET', agentPath(sent.name)), 200, changed, 'GET after the replace');
        expectPointer(
          await call(ctx, 'PUT', agentPath(sent.name), {
            body: { ...changed, name: `${sent.name}-renamed` },
          }),
          '/name',
          'PUT a card named otherwise than the path',
        );
        expectError(
          await call(ctx, 'PUT', agentPath(sent.name), { body: { name: sent.name } }),
          422,
          'VALIDATION_FAILED',
          'PUT an invalid card',
        );
        expectEntry(
          await call(ctx, 'GET', agentPath(sent.name)),
          200,
          changed,
          'the refused PUTs changed nothing',
        );
        const unknown = `${prefix()}-never`;
        expectNotRegistered(
          await call(ctx, 'PUT', agentPath(unknown), { body: card(unknown) }),
          unknown,
          'PUT a name nobody registered',
        );
      });
    },
  },
  {
    id: 'registry.deregister',
    title:
      'DELETE /registry/agents/{name} answers the removed entry; the name is then unknown, and free again',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const sent = card(`${prefix()}-agent`);
      await withEntries(ctx, async (register) => {
        const first = await register(sent);
        const removed = expectEntry(await call(ctx, 'DELETE', agentPath(sent.name)), 200, sent, 'DELETE');
        assert.equal(removed.registered_at, first.registered_at, 'DELETE answers the entry it removed');
        expectNotRegistered(await call(ctx, 'GET', agentPath(sent.name)), sent.name, 'GET after DELETE');
        expectNotRegistered(await call(ctx, 'DELETE', agentPath(sent.name)), sent.name, 'DELETE again');
        expectNotRegistered(
          await call(ctx, 'POST', `${agentPath(sent.name)}/heartbeat`),
          sent.name,
          'heartbeat after DELETE',
        );
        const listed = expectPage(
          await call(ctx, 'GET', `${AGENTS}?name=${encodeURIComponent(sent.name)}`),
          'list',
        );
        assert.deepEqual(names(listed), [], 'the listing leaves it out');
        await register(sent);
      });
    },
  },
  {
    id: 'registry.duplicate',
    title: 'registering a live name again answers 409 ALREADY_EXISTS and leaves the entry as it was',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const sent = card(`${prefix()}-agent`);
      await withEntries(ctx, async (register) => {
        const first = await register(sent);
        for (const [what, body] of [
          ['the same card', sent],
          ['another card of that name', { ...sent, url: 'http://127.0.0.1:9/elsewhere' }],
        ] as const) {
          const error = expectError(await call(ctx, 'POST', AGENTS, { body }), 409, 'ALREADY_EXISTS', what);
          assert.equal(error.message, `Agent ${sent.name} is already registered`, `${what}: the message`);
        }
        const read = expectEntry(
          await call(ctx, 'GET', agentPath(sent.name)),
          200,
          sent,
          'GET after the refusals',
        );
        assert.deepEqual(read, first, 'the refused registrations neither changed nor renewed the entry');
      });
    },
  },
  {
    id: 'registry.not-found',
    title:
      'GET, PUT, heartbeat and DELETE of a name nobody registered answer 404 NOT_FOUND "Agent <name> is not registered"',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const name = `${prefix()}-never`;
      const answers = [
        ['GET', await call(ctx, 'GET', agentPath(name))],
        ...(await Promise.all(
          ownerOnlyCalls(ctx, name, {}).map(async ([what, send]) => [what, await send()] as const),
        )),
      ] as const;
      for (const [what, res] of answers) expectNotRegistered(res, name, what);
    },
  },
  {
    id: 'registry.body.malformed',
    title:
      'an invalid card answers 422 VALIDATION_FAILED naming the field, malformed JSON 400; nothing is registered',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const name = `${prefix()}-invalid`;
      const { url: _url, ...noUrl } = card(name);
      expectPointer(await call(ctx, 'POST', AGENTS, { body: noUrl }), '/url', 'a card without url');
      expectPointer(
        await call(ctx, 'POST', AGENTS, { body: { ...card(name), name: '' } }),
        '/name',
        'an empty name',
      );
      expectPointer(
        await call(ctx, 'POST', AGENTS, { body: { ...card(name), skills: [{ id: 'x' }] } }),
        '/skills/0/name',
        'a skill without a name',
      );
      expectPointer(
        await call(ctx, 'POST', AGENTS, { body: { ...card(name), url: 42 } }),
        '/url',
        'a url that is not a string',
      );
      for (const body of [[card(name)], 'text', null]) {
        expectError(
          await call(ctx, 'POST', AGENTS, { body }),
          422,
          'VALIDATION_FAILED',
          `body ${JSON.stringify(body).slice(0, 20)}`,
        );
      }
      expectError(
        await call(ctx, 'POST', AGENTS, { raw: `{"name": "${name}", ` }),
        400,
        'INVALID_REQUEST',
        'malformed JSON',
      );
      expectNotRegistered(await call(ctx, 'GET', agentPath(name)), name, 'GET after the refusals');
    },
  },
  {
    id: 'registry.body.too-large',
    title: 'a card over the body limit (4 MiB) answers 413 PAYLOAD_TOO_LARGE, on POST and on PUT',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const big = { ...card(`${prefix()}-big`), description: 'x'.repeat(4 * 1024 * 1024 + 16) };
      expectError(await call(ctx, 'POST', AGENTS, { body: big }), 413, 'PAYLOAD_TOO_LARGE', 'POST');
      expectError(
        await call(ctx, 'PUT', agentPath(big.name), { body: big }),
        413,
        'PAYLOAD_TOO_LARGE',
        'PUT',
      );
      expectNotRegistered(await call(ctx, 'GET', agentPath(big.name)), big.name, 'GET after the refusals');
    },
  },
  {
    id: 'registry.auth.missing',
    title: 'with an authenticator the registry routes need credentials: 401 UNAUTHENTICATED',
    transports: HTTP,
    registry: true,
    auth: 'required',
    async run(ctx) {
      const name = `${prefix()}-agent`;
      for (const [method, path, body] of [
        ['POST', AGENTS, card(name)],
        ['GET', AGENTS, undefined],
        ['GET', agentPath(name), undefined],
        ['POST', `${agentPath(name)}/heartbeat`, undefined],
      ] as const) {
        expectError(
          await call(ctx, method, path, { as: 'anonymous', body }),
          401,
          'UNAUTHENTICATED',
          `${method} ${path} without credentials`,
        );
      }
    },
  },
  {
    id: 'registry.owner.other-principal',
    title:
      'another principal reads an entry but its replace, heartbeat and delete answer exactly as for an unknown name, and change nothing',
    transports: HTTP,
    registry: true,
    otherPrincipal: true,
    async run(ctx) {
      const p = prefix();
      const sent = card(`${p}-agent`);
      await withEntries(ctx, async (register) => {
        const first = await register(sent);
        // Readable by everyone of the tenant.
        expectEntry(
          await call(ctx, 'GET', agentPath(sent.name), { as: 'other' }),
          200,
          sent,
          "the other's GET",
        );
        const listed = expectPage(
          await call(ctx, 'GET', `${AGENTS}?name=${encodeURIComponent(sent.name)}`, { as: 'other' }),
          "the other's list",
        );
        assert.deepEqual(names(listed), [sent.name], "the other's listing has it");
        // Out of its reach, and indistinguishable from a name nobody registered; tried many times.
        for (let round = 0; round < 20; round++) {
          const unknown = `${p}-never-${round}`;
          const stranger = ownerOnlyCalls(ctx, unknown, { as: 'other' });
          const theirs = ownerOnlyCalls(ctx, sent.name, { as: 'other' });
          for (let i = 0; i < theirs.length; i++) {
            const [what, send] = theirs[i]!;
            const nobodys = await stranger[i]![1]();
            expectNotRegistered(nobodys, unknown, `the other's ${what} of an unknown name`);
            assert.deepEqual(
              neutral(await send(), sent.name),
              neutral(nobodys, unknown),
              `the other's ${what} of the entry answers as for an unknown name`,
            );
          }
        }
        const duplicate = await call(ctx, 'POST', AGENTS, { as: 'other', body: card(sent.name) });
        const own = await call(ctx, 'POST', AGENTS, { body: sent });
        expectError(duplicate, 409, 'ALREADY_EXISTS', "the other's registration of the name");
        assert.deepEqual(
          neutral(duplicate, sent.name),
          neutral(own, sent.name),
          'the duplicate answer is the same whoever holds the name',
        );
        const read = expectEntry(
          await call(ctx, 'GET', agentPath(sent.name)),
          200,
          sent,
          'the owner reads it back',
        );
        assert.deepEqual(read, first, 'neither replaced nor renewed by the other');
      });
    },
  },
  {
    id: 'registry.owner.other-tenant',
    title:
      'in another tenant (X-Tenant) the owner neither sees nor touches its entry, answered as an unknown name; the name is free there',
    transports: HTTP,
    registry: true,
    async run(ctx) {
      const p = prefix();
      const tenant = `${p}-tenant`.slice(0, 128);
      const sent = card(`${p}-agent`);
      await withEntries(ctx, async (register) => {
        const first = await register(sent);
        const read = await call(ctx, 'GET', agentPath(sent.name), { tenant });
        // A principal restricted to some tenants may not act for this one at all: out of reach too.
        if (read.status === 403) {
          expectError(read, 403, 'PERMISSION_DENIED', 'a tenant the principal may not act for');
          return;
        }
        expectNotRegistered(read, sent.name, 'GET from another tenant');
        const listed = expectPage(
          await call(ctx, 'GET', `${AGENTS}?name=${encodeURIComponent(sent.name)}`, { tenant }),
          'list in another tenant',
        );
        assert.deepEqual(names(listed), [], "another tenant's listing leaves it out");
        const unknown = `${p}-never`;
        const stranger = ownerOnlyCalls(ctx, unknown, { tenant });
        const theirs = ownerOnlyCalls(ctx, sent.name, { tenant });
        for (let i = 0; i < theirs.length; i++) {
          const [what, send] = theirs[i]!;
          assert.deepEqual(
            neutral(await send(), sent.name),
            neutral(await stranger[i]![1](), unknown),
            `${what} from another tenant answers as for an unknown name`,
          );
        }
        // Names are unique per tenant: the same name registers there as another entry.
        await register(sent, { tenant });
        const own = expectEntry(
          await call(ctx, 'GET', agentPath(sent.name)),
          200,
          sent,
          'the first tenant reads it',
        );
        assert.deepEqual(own, first, "the first tenant's entry is untouched");
      });
    },
  },
];
