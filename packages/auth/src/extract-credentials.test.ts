import {
  extractCredentials,
  stripAuthPrefix,
  type HeaderSource,
  type QuerySource,
} from './extract-credentials.js';

describe('extractCredentials', () => {
  describe('prefix removal (case-insensitive Bearer, Basic, ApiKey, apikey)', () => {
    it.each([
      ['Bearer abc', 'abc'],
      ['bearer abc', 'abc'],
      ['BEARER abc', 'abc'],
      ['Basic dXNlcjpwYXNz', 'dXNlcjpwYXNz'],
      ['basic dXNlcjpwYXNz', 'dXNlcjpwYXNz'],
      ['ApiKey k-123', 'k-123'],
      ['apikey k-123', 'k-123'],
      ['APIKEY k-123', 'k-123'],
      ['  Bearer   spaced   ', 'spaced'],
      ['Bearer\tabc', 'abc'],
      ['Bearer a b', 'a b'],
      ['Digest username="x"', 'Digest username="x"'],
      ['Token abc', 'Token abc'],
      ['  raw-token  ', 'raw-token'],
      ['BearerAbc', 'BearerAbc'],
      ['Bearer', ''],
      ['Bearer   ', ''],
      ['ApiKey', ''],
    ])('Authorization %j → %j', (header, expected) => {
      expect(extractCredentials({ Authorization: header })).toBe(expected);
      expect(stripAuthPrefix(header)).toBe(expected);
    });
  });

  describe('header containers', () => {
    it('a Headers object (case-insensitive get)', () => {
      expect(extractCredentials(new Headers({ authorization: 'Bearer h' }))).toBe('h');
      expect(extractCredentials(new Headers({ 'X-Api-KEY': 'k' }))).toBe('k');
    });

    it('a Map is read with get, canonical then lowercase name', () => {
      expect(extractCredentials(new Map([['Authorization', 'Bearer canon']]))).toBe('canon');
      expect(extractCredentials(new Map([['authorization', 'Bearer lower']]))).toBe('lower');
      expect(extractCredentials(new Map([['x-api-key', 'k']]))).toBe('k');
      expect(extractCredentials(new Map([['X-API-Key', 'K']]))).toBe('K');
    });

    it('a plain object: canonical and lowercase names (as node:http gives them)', () => {
      expect(extractCredentials({ Authorization: 'Bearer a' })).toBe('a');
      expect(extractCredentials({ authorization: 'Bearer b' })).toBe('b');
      expect(extractCredentials({ 'X-API-Key': 'c' })).toBe('c');
      expect(extractCredentials({ 'x-api-key': 'd' })).toBe('d');
      expect(extractCredentials({ 'x-api-key': ['first', 'second'] })).toBe('first');
      expect(extractCredentials({ 'X-Api-Key': 'mixed' })).toBeNull();
    });

    it('iterables of [name, value] pairs, matched case-insensitively', () => {
      expect(extractCredentials([['AUTHORIZATION', 'Bearer p']])).toBe('p');
      expect(extractCredentials([['x-Api-kEy', 'q']])).toBe('q');
      expect(extractCredentials(new Set([['Authorization', 'Basic z']] as [string, string][]))).toBe('z');
      function* pairs(): Generator<[string, string]> {
        yield ['Accept', '*/*'];
        yield ['Authorization', 'Bearer gen'];
      }
      expect(extractCredentials(pairs())).toBe('gen');
    });

    it('inherited names never count as headers', () => {
      const headers = Object.create({ authorization: 'Bearer inherited' }) as Record<string, string>;
      expect(extractCredentials(headers)).toBeNull();
      expect(extractCredentials({ ['__proto__']: 'x' } as HeaderSource)).toBeNull();
      expect(extractCredentials({}, { toString: undefined } as QuerySource)).toBeNull();
    });

    it.each([
      ['null', null],
      ['undefined', undefined],
      ['a number', 42],
      ['a string', 'Bearer x'],
      ['pairs that are not pairs', [1, 2]],
    ])('malformed headers (%s) throw their own native error', (_name, headers) => {
      expect(() => extractCredentials(headers as unknown as HeaderSource)).toThrow(TypeError);
    });

    it('a get() that throws propagates its error unchanged', () => {
      const boom = new RangeError('boom');
      const headers = {
        get(): string {
          throw boom;
        },
      };
      expect(() => extractCredentials(headers)).toThrow(boom);
    });
  });

  describe('precedence', () => {
    it('Authorization beats X-API-Key beats query', () => {
      expect(extractCredentials({ authorization: 'Bearer A', 'x-api-key': 'X' }, { api_key: 'Q' })).toBe('A');
      expect(extractCredentials({ 'x-api-key': 'X' }, { api_key: 'Q' })).toBe('X');
      expect(extractCredentials({}, { api_key: 'Q' })).toBe('Q');
    });

    it('query parameters in order api_key, apikey, token', () => {
      expect(extractCredentials({}, { token: 'T', apikey: 'K', api_key: 'A' })).toBe('A');
      expect(extractCredentials({}, { token: 'T', apikey: 'K' })).toBe('K');
      expect(extractCredentials({}, { token: 'T' })).toBe('T');
      expect(extractCredentials({}, new URLSearchParams('token=T&apikey=K'))).toBe('K');
      expect(extractCredentials({}, { token: ['T1', 'T2'] })).toBe('T1');
    });

    it('query parameters are consulted only when no usable header was found', () => {
      expect(extractCredentials({ authorization: '   ' }, { token: 'T' })).toBe('T');
      expect(extractCredentials({ 'x-api-key': '' }, { token: 'T' })).toBe('T');
      expect(extractCredentials({ authorization: 'Bearer' }, { token: 'T' })).toBe('');
    });

    it('a blank value gives the empty string when nothing better exists; nothing at all gives null', () => {
      expect(extractCredentials({ authorization: '  ' })).toBe('');
      expect(extractCredentials({ 'x-api-key': ' ' })).toBe('');
      expect(extractCredentials({})).toBeNull();
      expect(extractCredentials({}, {})).toBeNull();
      expect(extractCredentials({}, null)).toBeNull();
      expect(extractCredentials({ accept: 'x' }, { other: 'y' })).toBeNull();
    });

    it('X-API-Key and query values are trimmed, not prefix-stripped', () => {
      expect(extractCredentials({ 'x-api-key': '  Bearer k ' })).toBe('Bearer k');
      expect(extractCredentials({}, { token: ' Bearer t ' })).toBe('Bearer t');
    });
  });
});
