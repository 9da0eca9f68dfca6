import { ValueError } from '@agent/core';
import {
  normalizeKey,
  plainRedactedJson,
  REDACTED,
  RedactionPolicy,
  redactedJsonSharing,
} from './redaction.js';
import { JWT } from './test-support/fixtures.js';

describe('RedactionPolicy.default()', () => {
  const policy = RedactionPolicy.default();

  it('masks secrets by key name, case- and separator-insensitive', () => {
    const input = {
      api_key: 'k1',
      'X-API-Key': 'k2',
      apiKey: 'k3',
      access_token: 't',
      refresh_token: 't',
      Password: 'p',
      db_passwd: 'p',
      client_secret: 's',
      Authorization: 'whatever',
      'proxy-authorization': 'x',
      Cookie: 'c=1',
      'set-cookie': ['a=1'],
      credentials: { user: 'u', pass: 'p' },
      private_key: '-----BEGIN',
      'Private Key': 'pem',
    };
    const out = policy.redact(input);
    for (const key of Object.keys(input))
      expect([key, out[key as keyof typeof out]]).toEqual([key, REDACTED]);
  });

  it('keeps token counts and ordinary fields', () => {
    const input = {
      input_tokens: 5,
      total_estimated_tokens: 9,
      max_output_tokens: 3,
      tokenizer: 'cl100k',
      user: 'alice',
      note: 'the Basic setup is done',
    };
    expect(policy.redact(input)).toEqual(input);
  });

  it('masks nested objects and arrays without mutating the input', () => {
    const input = {
      report: { actions: [{ payload: { arguments: { password: 'hunter2', id: 7 } } }] },
      list: [{ token: 'abc' }, 'plain', [{ secret: 1 }]],
    };
    const before = JSON.stringify(input);
    const out = policy.redact(input);
    expect(JSON.stringify(input)).toBe(before);
    expect(out).toEqual({
      report: { actions: [{ payload: { arguments: { password: REDACTED, id: 7 } } }] },
      list: [{ token: REDACTED }, 'plain', [{ secret: REDACTED }]],
    });
    expect(out.report).not.toBe(input.report);
  });

  it('masks credential-shaped values wherever they sit', () => {
    const out = policy.redact({
      header: 'Bearer abc.def-123',
      basic: 'Basic dXNlcjpwYXNz',
      rawBasic: 'Basic alice:pa:ss',
      prose: 'Basic arithmetic',
      apikey: 'x',
      lower: 'apikey abc123',
      jwt: JWT,
      sentence: `token was ${JWT} yesterday`,
      logged: 'sent Authorization: Bearer sk-live-abcdefgh',
      list: ['Bearer zzz'],
    });
    expect(out).toEqual({
      header: REDACTED,
      basic: REDACTED,
      rawBasic: REDACTED,
      // Deliberate (see SCHEME_PREFIX in redaction.ts): any `Basic ` prefix is masked, prose included.
      prose: REDACTED,
      apikey: REDACTED,
      lower: REDACTED,
      jwt: REDACTED,
      sentence: `token was ${REDACTED} yesterday`,
      logged: `sent Authorization: Bearer ${REDACTED}`,
      list: [REDACTED],
    });
  });

  it('masks any string that starts with Bearer, Basic or ApiKey and a space, whatever follows', () => {
    const values = [
      'Basic YWxhZGRpbg==',
      'Bearer sk-live!123',
      'ApiKey k1 (prod)',
      'Bearer abc def',
      'Basic setup done',
      'BASIC x',
      'bearer \u00e9t\u00e9',
      'apikey\tk',
      '  Bearer ',
    ];
    for (const note of values) expect([note, policy.redact({ note }).note]).toEqual([note, REDACTED]);
    for (const note of ['Basically fine', 'Bearers of news', 'ApiKeys rotated', 'use Basic auth'])
      expect(policy.redact({ note }).note).toBe(note);
  });

  it('masks a scheme prefix after any leading whitespace, whatever the first character is', () => {
    // The documented rule, independent of the first-character shortcut in redactString.
    const rule = /^\s*(?:bearer|basic|apikey)\s/i;
    for (let code = 0; code <= 0xffff; code++) {
      const first = String.fromCharCode(code);
      for (const text of [
        `${first}Bearer x`,
        `${first}earer x`,
        `${first}piKey x`,
        `${first}asic y`,
        first,
      ]) {
        const expected = rule.test(text) ? REDACTED : text;
        if (policy.redactString(text) !== expected)
          expect([code, policy.redactString(text)]).toEqual([code, expected]);
        const json = policy.redactedJson([text, { text }]);
        if (json !== JSON.stringify([expected, { text: expected }]))
          expect([code, json]).toEqual([code, JSON.stringify([expected, { text: expected }])]);
      }
    }
  });

  it('masks a scheme prefix whatever its first three characters look like, and leaves shorter text alone', () => {
    // The documented rule, independent of the three-character shortcut of the one-pass writer.
    const rule = /^\s*(?:bearer|basic|apikey)\s/i;
    const seconds = [...Array.from({ length: 0x180 }, (_, code) => code), 0x212a, 0x17f, 0x3000, 0xfeff];
    for (let first = 0; first < 0x80; first++) {
      for (const second of seconds) {
        const head = String.fromCharCode(first, second);
        for (const text of [
          `${head}sic y`,
          `${head}sic `,
          `${head}arer x`,
          `${head}ikey x`,
          `${head}sic`,
          head,
        ]) {
          const expected = rule.test(text) ? REDACTED : text;
          const json = policy.redactedJson({ text });
          if (json !== JSON.stringify({ text: expected }))
            expect([first, second, json]).toEqual([first, second, JSON.stringify({ text: expected })]);
        }
      }
    }
    for (const head of ['ap', 'AP', 'be', 'Be', 'ba', 'bA']) {
      for (const third of seconds) {
        const start = head + String.fromCharCode(third);
        for (const text of [`${start}ic y`, `${start}rer x`, `${start}key x`, `${start}ic `]) {
          const expected = rule.test(text) ? REDACTED : text;
          const json = policy.redactedJson({ text });
          if (json !== JSON.stringify({ text: expected }))
            expect([text, json]).toEqual([text, JSON.stringify({ text: expected })]);
        }
      }
    }
  });

  it('masks header maps and [name, value] header pairs', () => {
    expect(policy.redact({ headers: { 'content-type': 'application/json', 'x-api-key': 'k' } })).toEqual({
      headers: { 'content-type': 'application/json', 'x-api-key': REDACTED },
    });
    expect(
      policy.redact([
        ['X-Api-Key', 'k'],
        ['Accept', 'text/plain'],
      ]),
    ).toEqual([
      ['X-Api-Key', REDACTED],
      ['Accept', 'text/plain'],
    ]);
    expect(policy.redact(new Map([['Authorization', 'raw']]))).toEqual({ Authorization: REDACTED });
  });

  it('handles cycles, dates, errors and odd keys', () => {
    const cyclic: Record<string, unknown> = { name: 'a' };
    cyclic.self = cyclic;
    expect(policy.redact(cyclic)).toEqual({ name: 'a', self: '[Circular]' });
    expect(policy.redact({ at: new Date(0) })).toEqual({ at: '1970-01-01T00:00:00.000Z' });
    const error = Object.assign(new Error(`bad ${JWT}`), { code: 'X', data: { token: 't' } });
    expect(policy.redact({ error })).toEqual({
      error: { name: 'Error', message: `bad ${REDACTED}`, code: 'X', data: { token: REDACTED } },
    });
    const proto = JSON.parse('{"__proto__": {"password": "p"}}') as object;
    const out = policy.redact(proto) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ password: REDACTED });
    expect(policy.redact(null)).toBeNull();
    expect(policy.redact(3)).toBe(3);
  });

  it('leaves empty and null secret values visible so absence stays observable', () => {
    expect(policy.redact({ password: '', token: null })).toEqual({ password: '', token: null });
  });
});

describe('RedactionPolicy options', () => {
  it('adds keys and patterns', () => {
    const policy = new RedactionPolicy({
      keys: ['ssn', 'Account-Number'],
      patterns: [/\b\d{4}-\d{4}-\d{4}-\d{4}\b/],
    });
    expect(
      policy.redact({
        user_ssn: '123',
        accountnumber: '9',
        card: 'paid with 1234-5678-9012-3456 ok',
        password: 'p',
      }),
    ).toEqual({
      user_ssn: REDACTED,
      accountnumber: REDACTED,
      card: `paid with ${REDACTED} ok`,
      password: REDACTED,
    });
  });

  it('can drop the defaults, allow keys and change the mask', () => {
    expect(
      new RedactionPolicy({ includeDefaults: false, keys: ['pin'] }).redact({
        password: 'p',
        pin: '1',
        h: 'Bearer x',
      }),
    ).toEqual({
      password: 'p',
      pin: REDACTED,
      h: 'Bearer x',
    });
    expect(
      new RedactionPolicy({ allowKeys: ['session_token'], mask: '***' }).redact({
        session_token: 'keep',
        token: 'x',
      }),
    ).toEqual({
      session_token: 'keep',
      token: '***',
    });
    expect(RedactionPolicy.none().redact({ password: 'p' })).toEqual({ password: 'p' });
  });

  it('rejects bad options', () => {
    expect(() => new RedactionPolicy({ keys: [''] })).toThrow(ValueError);
    expect(() => new RedactionPolicy({ patterns: ['x' as unknown as RegExp] })).toThrow(ValueError);
  });

  it('normalizes key names', () => {
    expect(normalizeKey('X-Api_Key Header')).toBe('xapikeyheader');
  });
});

describe('RedactionPolicy.redactedJson', () => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl';
  const samples: unknown[] = [
    { id: 't1', api_key: 'sk-live-1', nested: { Authorization: 'Bearer abcdefghijkl', ok: 'fine' } },
    {
      headers: [
        ['X-Api-Key', 'k-1'],
        ['accept', 'text/plain'],
        ['cookie', null],
      ],
      token: '',
    },
    { text: `see ${jwt} and Bearer abcdefgh12345 there`, password: null, n: 3, flag: false },
    ['Basic dXNlcjpwYXNz', { secret: { deep: 1 } }, [1, 2], { when: new Date(0) }],
    {
      map: new Map<unknown, unknown>([
        ['token', 'x'],
        [1, 'one'],
      ]),
      set: new Set(['a', jwt]),
    },
    { error: Object.assign(new Error('boom'), { code: 'E', data: { credentials: 'c' } }) },
    { skip: undefined, fn: () => 1, list: [undefined, () => 1], __proto__x: 1 },
    JSON.parse('{"__proto__": {"token": "t"}, "input_tokens": 12}'),
    'Bearer plain-string',
    42,
    // Plain data the native serializer may write as it is, and near misses of each rule.
    {
      id: 'clean',
      parts: [{ type: 'text', content: 'hello' }],
      usage: { input_tokens: 3, output_tokens: 4 },
      list: [1, 'two', null, true, [['accept', 'text/plain']]],
      empty: {},
      none: null,
    },
    { token: null, password: undefined, secret: '', note: 'fine' },
    { TOKEN: 'kelvin sign lowercases to k' },
    { 'x-api-key': 'k', 'Set-Cookie': 'c', 'refresh token': 't' },
    [' bearer abc', '\tBasic x', '\u00a0ApiKey x', '\u3000bearer x', 'basically fine', 'apikeys are fine'],
    ['eyJ only', 'Bearer', 'a Bearer x', 'eyJabcde.fghij.', `x${jwt}`, 'yJ'],
    [
      ['Authorization', 'x'],
      ['cookie', undefined],
      ['token', null],
    ],
    Object.assign(Object.create(null) as object, { a: 1, api_key: 'k' }),
    Object.assign(Object.create(null) as object, { a: 1, b: [2] }),
    { withToJson: { toJSON: () => ({ token: 'x', text: 'Bearer abcdefghij' }) } },
    {
      instance: new (class Box {
        value = 'v';
        token = 't';
      })(),
    },
    { subclass: new (class List extends Array<unknown> {})() },
    { date: new Date(1), text: 'ok' },
    { deep: Array.from({ length: 250 }).reduce<unknown>((inner) => ({ inner }), 'bottom') },
    { deepSecret: Array.from({ length: 250 }).reduce<unknown>((inner) => ({ inner }), { token: 'x' }) },
    { nested: { run_context: { agent_chain: ['a'], permissions: {}, budget: null } }, at: 1.5e-7 },
    { unicode: 'héllo \u2028 ☃ \ud83d\ude00', quote: 'say "hi"\n' },
    { ssn_like: '123-45-6789' },
    // A string value's closing quote and a null are written with the key that follows or precedes them.
    { a: 'x', token: 'masked', b: 'y', c: null, d: 'z', skip: undefined, e: { f: 'g' }, h: 'i' },
    { first: null, s: 'v', password: null, t: 'w', n: 1, u: 'last' },
    { only: 'x' },
    { s: 'x', nested: { t: 'y' }, list: ['a', null, 'b'], end: null },
  ];

  it('serializes exactly what the copying walk would, for the default policy and a custom one', () => {
    const custom = new RedactionPolicy({ keys: ['ssn'], patterns: [/\d{3}-\d{2}-\d{4}/], mask: '***' });
    const cases: PolicyAndMask[] = [
      [RedactionPolicy.default(), REDACTED],
      [custom, '***'],
      [RedactionPolicy.none(), REDACTED],
    ];
    for (const [policy, mask] of cases) {
      for (const value of [...samples, ...moreSamples(), { ssn: '123-45-6789', note: 'id 123-45-6789' }]) {
        const text = policy.redactedJson(value);
        expect(text).toBe(JSON.stringify(policy.redact(value)));
        expect(text).toBe(replacerJson([policy, mask], value));
      }
    }
  });

  it('writes byte for byte what the replacer path writes, where the walk differs too', () => {
    for (const policy of policies()) {
      for (const value of [...samples, ...moreSamples(), ...replacerOnlySamples()]) {
        expect(policy[0].redactedJson(value)).toBe(replacerJson(policy, value));
      }
    }
  });

  it('masks and escapes long strings as the replacer path does, the same string again, and after the turn', async () => {
    const long = (inner: string): string => `${'a'.repeat(1500)} ${inner} ${'z'.repeat(1500)}`;
    const strings = [
      long('plain text'),
      long(`a token ${jwt} inside`),
      long('Bearer abcdefghijkl1234'),
      long('a "quote" and a \\ backslash'),
      long('a control \u0001 character'),
      long('a lone \ud800 surrogate'),
      long('no mask, only ☃ and 😀'),
      `Bearer ${'b'.repeat(3000)}`,
    ];
    const values = strings.map((text) => ({ text, parts: [{ content: text }], again: text }));
    for (const policy of policies()) {
      // Twice in the same turn (the second time its scan is remembered), then once in a later turn.
      for (let round = 0; round < 2; round++)
        for (const value of values) expect(policy[0].redactedJson(value)).toBe(replacerJson(policy, value));
      await new Promise((resolve) => setImmediate(resolve));
      for (const value of values) expect(policy[0].redactedJson(value)).toBe(replacerJson(policy, value));
    }
  });

  it('reads a getter once and masks what it returned', () => {
    let reads = 0;
    const value = {
      id: 'x',
      get token() {
        reads++;
        return reads === 1 ? 'first-secret' : 'later';
      },
      get note() {
        return `Bearer ${'z'.repeat(12)}`;
      },
    };
    expect(RedactionPolicy.default().redactedJson(value)).toBe(
      '{"id":"x","token":"[REDACTED]","note":"[REDACTED]"}',
    );
    expect(reads).toBe(1);
    let plainReads = 0;
    const counted = {
      get list() {
        plainReads++;
        return [{ ok: 1 }, 'plain'];
      },
    };
    expect(RedactionPolicy.none().redactedJson(counted)).toBe('{"list":[{"ok":1},"plain"]}');
    expect(plainReads).toBe(1);
  });

  it('matches the replacer path on 2,000 generated plain values', () => {
    const random = seeded(20240611);
    for (let index = 0; index < 2000; index++) {
      const value = generate(random, 0);
      for (const policy of policies()) {
        const text = policy[0].redactedJson(value);
        if (text !== replacerJson(policy, value)) {
          // Name the failing case in the message rather than dumping all 2,000.
          expect([index, text]).toEqual([index, replacerJson(policy, value)]);
        }
      }
    }
  });

  it('falls back to the walk for what JSON cannot carry', () => {
    const cyclic: Record<string, unknown> = { token: 'x', name: 'loop' };
    cyclic.self = cyclic;
    const policy = RedactionPolicy.default();
    expect(policy.redactedJson(cyclic)).toBe(JSON.stringify(policy.redact(cyclic)));
    expect(policy.redactedJson({ big: 10n })).toBe('{"big":"10"}');
  });

  it('writes a value of many thousand pieces, and the small one after it, as the replacer path does', () => {
    // A text of some hundred thousand pieces, with secrets and escapes spread through it.
    const big = Array.from({ length: 20_000 }, (_, index) => ({
      index,
      parts: [{ type: 'text', content: index % 97 === 0 ? `Bearer ${'x'.repeat(12)}` : `chunk ${index}` }],
      api_key: index % 101 === 0 ? 'sk-live' : null,
      note: index % 103 === 0 ? 'say "hi"' : undefined,
    }));
    for (const policy of policies()) {
      expect(policy[0].redactedJson(big)).toBe(replacerJson(policy, big));
      // Nothing of the large text is left over in what the next call writes.
      expect(policy[0].redactedJson({ id: 'small' })).toBe('{"id":"small"}');
      expect(policy[0].redactedJson([])).toBe('[]');
      expect(policy[0].redactedJson({})).toBe('{}');
    }
  });

  it('writes texts of every length around the powers of two, in any order, as JSON does', () => {
    // An array of n numbers is 2n pieces, short texts and long ones, one after the other.
    const lengths: number[] = [];
    for (let pieces = 16; pieces <= 16_384; pieces *= 2)
      for (let n = pieces / 2 - 2; n <= pieces / 2 + 2; n++) lengths.push(n);
    const order = [
      ...lengths,
      ...[...lengths].reverse(),
      ...lengths.map((_, i) => lengths[(i * 7) % lengths.length]!),
    ];
    const policy = RedactionPolicy.default();
    for (const n of order) {
      const value = Array.from({ length: n }, (_, index) => index);
      expect(policy.redactedJson(value)).toBe(JSON.stringify(value));
      expect(policy.redactedJson({ n })).toBe(`{"n":${n}}`);
    }
  });

  it('writes only own keys, as JSON does, also while getters change the object being written', () => {
    const policy = RedactionPolicy.default();
    const changing = (change: (holder: Record<string, unknown>) => void): Record<string, unknown> => {
      const holder: Record<string, unknown> = {
        a: 1,
        get b() {
          change(holder);
          return 2;
        },
        token: 'sk-1',
        d: 'x',
      };
      return holder;
    };
    const changes: ((holder: Record<string, unknown>) => void)[] = [
      (holder) => delete holder.token,
      (holder) => (holder.added = 'new'),
      (holder) => Object.defineProperty(holder, 'd', { enumerable: false }),
    ];
    for (const change of changes) {
      expect(policy.redactedJson(changing(change))).toBe(replacerJson([policy, REDACTED], changing(change)));
    }
    const prototype = Object.prototype as Record<string, unknown>;
    prototype.inherited = 'Bearer abcdefghijkl';
    try {
      expect(policy.redactedJson({ a: 1, nested: { b: 2 } })).toBe('{"a":1,"nested":{"b":2}}');
    } finally {
      delete prototype.inherited;
    }
    // Nor one that a getter adds while the value is written.
    const polluting = {
      get first() {
        prototype.added = 'x';
        return 1;
      },
      nested: { b: 2 },
    };
    try {
      expect(policy.redactedJson(polluting)).toBe('{"first":1,"nested":{"b":2}}');
    } finally {
      delete prototype.added;
    }
  });

  it('decides a key the same way however often it is seen', () => {
    const policy = new RedactionPolicy({ allowKeys: ['sessiontoken'] });
    for (let i = 0; i < 3; i++) {
      expect(policy.isSensitiveKey('session_token')).toBe(false);
      expect(policy.isSensitiveKey('refresh_token')).toBe(true);
      expect(policy.isSensitiveKey('input_tokens')).toBe(false);
    }
  });
});

/**
 * Today's serializer before the one-pass writer, verbatim: JSON.stringify with the masking replacer,
 * the copying walk when JSON throws. The oracle every redactedJson output must equal byte for byte.
 */
function replacerJson([policy, mask]: PolicyAndMask, value: unknown): string {
  const replacer = function (this: unknown, key: string, item: unknown): unknown {
    if (
      key !== '' &&
      !Array.isArray(this) &&
      item !== null &&
      item !== undefined &&
      item !== '' &&
      policy.isSensitiveKey(key)
    )
      return mask;
    if (typeof item === 'string') return policy.redactString(item);
    if (typeof item !== 'object' || item === null) return item;
    if (Array.isArray(item)) {
      const pair = item.length === 2 && typeof item[0] === 'string' && item[1] !== null;
      return pair && policy.isSensitiveKey(item[0] as string) ? [item[0], mask] : item;
    }
    if (item instanceof Map) return Object.fromEntries([...item.entries()].map(([k, v]) => [String(k), v]));
    if (item instanceof Set) return [...item];
    if (item instanceof Error) {
      const error = item as Error & { code?: unknown; data?: unknown };
      const body: Record<string, unknown> = { name: error.name, message: error.message };
      if (error.code !== undefined) body.code = error.code;
      if (error.data !== undefined) body.data = error.data;
      return body;
    }
    return item;
  };
  try {
    return JSON.stringify(value, replacer);
  } catch {
    return JSON.stringify(policy.redact(value));
  }
}

type PolicyAndMask = [RedactionPolicy, string];

function policies(): PolicyAndMask[] {
  return [
    [RedactionPolicy.default(), REDACTED],
    [new RedactionPolicy({ keys: ['ssn', 'pin'], patterns: [/\d{3}-\d{2}-\d{4}/], mask: '***' }), '***'],
    [RedactionPolicy.none(), REDACTED],
    // A mask its own pattern matches and an allowed key: header pairs write both through redactString.
    [
      new RedactionPolicy({ patterns: [/X-/i], mask: '[X-HIDDEN] "q"', allowKeys: ['session_token'] }),
      '[X-HIDDEN] "q"',
    ],
    [new RedactionPolicy({ includeDefaults: false, keys: ['pin'], mask: '' }), ''],
  ];
}

const JWT_LIKE = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl';

function withOwn(target: object, entries: [string, unknown][]): object {
  for (const [key, value] of entries)
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

/** Plain data (and near-plain) the one-pass writer must write exactly as the walk does. */
function moreSamples(): unknown[] {
  return [
    [],
    {},
    [[]],
    [{}, [], [[{}]]],
    { a: [{ b: [{ c: [1, [2, [3, { token: 'deep' }]]] }] }] },
    Array.from({ length: 5 }, (_, i) => ({
      id: i,
      parts: [{ type: 'text', content: `m${i}` }],
      password: `p${i}`,
    })),
    {
      'k\u00e9y': 'v\u00e9',
      'quo"te': 'a"b',
      'back\\slash': 'c\\d',
      'new\nline': 'x\ty\r\b\f\u0001\u001f',
      '': 'empty key',
    },
    {
      emoji: '\ud83d\ude00',
      lone: '\ud800',
      loneLow: 'x\udc00y',
      sep: '\u2028\u2029',
      nul: '\u0000',
      del: '\u007f',
    },
    withOwn({}, [
      ['__proto__', { token: 't', keep: 1 }],
      ['n', 1],
    ]),
    withOwn(Object.create(null) as object, [
      ['__proto__', 'Bearer abcdefghijkl'],
      ['secret', 's'],
    ]),
    {
      zero: -0,
      big: 1e21,
      small: 1e-7,
      nan: NaN,
      inf: Infinity,
      ninf: -Infinity,
      max: Number.MAX_VALUE,
      int: 2 ** 53 + 2,
    },
    [-0, NaN, Infinity, -Infinity, 0.1 + 0.2, -5e-324, 5e-324],
    { 10: 'ten', 2: 'two', b: 'b', a: 'a', 1.5: 'float key', '-1': 'neg' },
    [
      ['authorization', 'Bearer x'],
      ['Accept', 'json'],
      ['Cookie', ''],
      ['token', undefined],
      ['token', null],
    ],
    [['X-Api-Key', { nested: 'object' }]],
    ['token', 'x'],
    ['ssn', '123-45-6789'],
    ['pin', 7],
    [['token'], ['token', 'a', 'b'], [1, 'token'], ['note', 'ok']],
    {
      password: '',
      token: null,
      secret: undefined,
      apiKey: 0,
      cookie: false,
      credentials: [],
      privateKey: {},
    },
    { token: NaN, password: Symbol('s'), secret: () => 1 },
    { list: [undefined, () => 1, Symbol('x'), null], fn: () => 1, sym: Symbol('y') },
    // eslint-disable-next-line no-sparse-arrays
    [1, , 3],
    [
      ' Bearer abc',
      '\n\tbasic x',
      '\u00a0apikey z',
      '\ufeffBearer q',
      'bearer',
      'Bearer\u00a0x',
      'BASIC  x',
      'ApIkEy\tk',
    ],
    ['abc', 'A', 'b', 'Basic', 'apikeys x', '0 Bearer abcdefghij', 'xBearer abcdefghijk'],
    { long: `${'lorem ipsum '.repeat(300)}${JWT_LIKE} tail ${'dolor '.repeat(200)}` },
    { log: `GET / Authorization: Bearer ${'a'.repeat(40)} and ${JWT_LIKE}.` },
    {
      ssn: '123-45-6789',
      note: 'id 123-45-6789 and 987-65-4321',
      pin: '0000',
      spin: 'x',
      header: 'X-Forwarded',
    },
    { session_token: 'kept by one policy', 'x-token': 'masked' },
    Object.assign(Object.create(null) as object, {
      nested: Object.assign(Object.create(null) as object, { token: 'x' }),
    }),
    { arr: Object.assign([1, 2], { extra: 'ignored', token: 'ignored too' }) },
    { frozen: Object.freeze({ token: 'x', ok: 'y' }) },
    { bool: true, no: false, nul: null, str: '', num: 0 },
  ];
}

/** Values the replacer path and the copying walk write differently; redactedJson keeps the former. */
function replacerOnlySamples(): unknown[] {
  const instance = new (class Holder {
    token = 'x';
    note = 'y';
  })();
  return [
    { token: { toJSON: () => null }, password: { toJSON: () => '' }, secret: { toJSON: () => 'x' } },
    { when: new Date(0), invalid: new Date(NaN), token: new Date(0) },
    { instance, list: [instance], token: instance },
    { toJSON: () => ({ token: 'x', ok: [1, 'Bearer abcdefghijk'] }) },
    { nested: { toJSON: (key: string) => `key was ${key}` } },
    Object.assign(() => 1, { toJSON: () => ({ fn: true }) }),
    {
      fn: Object.assign(() => 1, { toJSON: () => 'fn json' }),
      token: Object.assign(() => 1, { toJSON: () => '' }),
    },
    { big: 10n, token: 11n },
    { map: new Map([['token', 'x']]), set: new Set([1, 'Bearer abcdefghijk']), err: new Error('e') },
    { boxed: Object('str') as object, num: Object(3) as object, token: Object('') as object },
    { regex: /x/, typed: new Uint8Array([1, 2]) },
    Object.defineProperty({ a: 1 }, 'toJSON', {
      value: () => ({ hidden: 'Bearer abcdefghijk' }),
      enumerable: false,
    }),
    { toJSON: 'not a function', token: 'x' },
  ];
}

/** mulberry32: a small seeded generator so every run checks the same 2,000 values. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FUZZ_KEYS = [
  'id',
  'content',
  'parts',
  'type',
  'token',
  'input_tokens',
  'Authorization',
  'x-api-key',
  'api_key',
  'Set-Cookie',
  'password',
  'ssn',
  'pin',
  'session_token',
  '__proto__',
  '',
  '0',
  '17',
  'k\u00e9',
  'a"b',
  'line\nbreak',
  '\ud83d\ude00',
  'privateKey',
  'notes',
  'toJSONish',
  'headers',
];
const FUZZ_STRINGS = [
  '',
  'hello',
  'Bearer abcdefghijkl',
  'bearer x',
  ' basic y',
  '\tApiKey z',
  'Basically',
  'Bearers',
  'a Bearer abcdefghij',
  `jwt ${JWT_LIKE} end`,
  JWT_LIKE,
  'eyJ',
  'id 123-45-6789',
  'X-Header',
  'quote " and \\ slash',
  'ctrl \u0001\u001f',
  'uni \u00e9\u2028\ud83d\ude00',
  'lone \ud800',
  '\u00a0Bearer nbsp',
  'token',
  'password',
  '2026-01-01T00:00:00.000Z',
];
const FUZZ_NUMBERS = [0, -0, 1, -1, 1.5, 1e21, 1e-7, NaN, Infinity, -Infinity, 2 ** 31, Number.MIN_VALUE];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function generate(random: () => number, depth: number): unknown {
  const roll = random();
  if (depth > 4 || roll < 0.45) {
    const kind = random();
    if (kind < 0.45) return pick(random, FUZZ_STRINGS);
    if (kind < 0.65) return pick(random, FUZZ_NUMBERS);
    if (kind < 0.75) return random() < 0.5;
    if (kind < 0.88) return null;
    if (kind < 0.95) return undefined;
    return () => 1;
  }
  if (roll < 0.6) return [pick(random, FUZZ_KEYS), generate(random, depth + 1)]; // a header pair, or not
  if (roll < 0.75) return Array.from({ length: Math.floor(random() * 5) }, () => generate(random, depth + 1));
  const target = random() < 0.15 ? (Object.create(null) as object) : {};
  const entries: [string, unknown][] = Array.from({ length: Math.floor(random() * 6) }, () => [
    pick(random, FUZZ_KEYS),
    generate(random, depth + 1),
  ]);
  return withOwn(target, entries);
}

describe('text shared between the values of one write', () => {
  const policy = RedactionPolicy.default();
  const part = { id: 't1', metadata: { password: 'hunter2', note: 'Bearer abcdefgh12345' }, parts: [1, 'x'] };

  it('writes the part as its own text where the value holds it, and the whole as redactedJson does', () => {
    const whole = { type: 'task.status', task: part, also: [part] };
    const { text, plain } = plainRedactedJson(policy, part);
    expect(plain).toBe(true);
    expect(text).toBe(policy.redactedJson(part));
    expect(redactedJsonSharing(policy, whole, part, text)).toBe(policy.redactedJson(whole));
  });

  it('stands the text in for that very object only, and only during the call', () => {
    const marker = '{"shared":true}';
    const twin = JSON.parse(JSON.stringify(part)) as typeof part;
    expect(redactedJsonSharing(policy, { a: part, b: twin }, part, marker)).toBe(
      `{"a":${marker},"b":${policy.redactedJson(twin)}}`,
    );
    // Over once the call returns.
    expect(policy.redactedJson({ a: part })).toBe(`{"a":${policy.redactedJson(part)}}`);
  });

  it('says when the copying path wrote a value (a Date inside): such a text is not to be shared', () => {
    const dated = { at: new Date('2026-03-01T00:00:00.000Z'), token: 'sk-1' };
    const { text, plain } = plainRedactedJson(policy, dated);
    expect(plain).toBe(false);
    expect(text).toBe(policy.redactedJson(dated));
    expect(JSON.parse(text)).toEqual({ at: '2026-03-01T00:00:00.000Z', token: REDACTED });
  });
});
