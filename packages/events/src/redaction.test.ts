import { ValueError } from '@agent/core';
import { normalizeKey, REDACTED, RedactionPolicy } from './redaction.js';
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
  ];

  it('serializes exactly what the copying walk would, for the default policy and a custom one', () => {
    const custom = new RedactionPolicy({ keys: ['ssn'], patterns: [/\d{3}-\d{2}-\d{4}/], mask: '***' });
    for (const policy of [RedactionPolicy.default(), custom, RedactionPolicy.none()]) {
      for (const value of [...samples, { ssn: '123-45-6789', note: 'id 123-45-6789' }]) {
        expect(policy.redactedJson(value)).toBe(JSON.stringify(policy.redact(value)));
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

  it('decides a key the same way however often it is seen', () => {
    const policy = new RedactionPolicy({ allowKeys: ['sessiontoken'] });
    for (let i = 0; i < 3; i++) {
      expect(policy.isSensitiveKey('session_token')).toBe(false);
      expect(policy.isSensitiveKey('refresh_token')).toBe(true);
      expect(policy.isSensitiveKey('input_tokens')).toBe(false);
    }
  });
});
