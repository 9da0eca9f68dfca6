import { ValueError } from '@agent/core';
import { SecurityContext } from './security-context.js';

describe('SecurityContext', () => {
  it('defaults: expiresAt null, issuedAt now in UTC ISO, a fresh metadata object per instance', () => {
    const before = Date.now();
    const a = new SecurityContext({ principalId: 'alice', token: 't' });
    const b = new SecurityContext({ principalId: 'bob', token: 't' });
    expect(a.expiresAt).toBeNull();
    expect(a.issuedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(a.issuedAt)).toBeGreaterThanOrEqual(before - 1);
    expect(a.metadata).toEqual({});
    expect(a.metadata).not.toBe(b.metadata);
    (a.metadata as Record<string, unknown>).x = 1;
    expect(b.metadata).toEqual({});
  });

  it('keeps what it is given verbatim and verifies nothing', () => {
    const metadata = { role: 'admin' };
    const context = new SecurityContext({
      principalId: '',
      token: 'not even a token',
      expiresAt: '2000-01-01T00:00:00Z',
      issuedAt: '1999-01-01T00:00:00Z',
      metadata,
    });
    expect(context.principalId).toBe('');
    expect(context.token).toBe('not even a token');
    expect(context.issuedAt).toBe('1999-01-01T00:00:00Z');
    expect(context.metadata).toBe(metadata);
  });

  describe('isExpired', () => {
    const at = (expiresAt: string | null) => new SecurityContext({ principalId: 'p', token: 't', expiresAt });
    const now = new Date('2026-06-01T12:00:00.000Z');

    it.each([
      ['2026-06-01T11:59:59Z', true],
      ['2026-06-01T12:00:00.001Z', false],
      ['2026-06-01T12:00:00Z', false],
      ['2026-06-01T13:59:59+02:00', true],
      ['2026-06-01T14:00:01+02:00', false],
      ['2026-06-01T07:00:00-05:00', false],
      ['2026-06-01 11:00:00+00:00', true],
      ['2026-06-01T11:00:00.123456z', true],
      ['2026-06-01T12:30+0000', false],
      ['2026-06-01T12:30+01', true],
    ])('%s → %s', (expiresAt, expected) => {
      expect(at(expiresAt).isExpired(now)).toBe(expected);
    });

    it('is false without an expiry, whatever the clock says', () => {
      expect(at(null).isExpired(new Date(8.64e15))).toBe(false);
    });

    it('uses the real clock by default', () => {
      expect(at('2000-01-01T00:00:00Z').isExpired()).toBe(true);
      expect(at('2999-01-01T00:00:00Z').isExpired()).toBe(false);
    });

    it.each([
      '',
      'tomorrow',
      '2026-02-30T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-06-01T25:00:00Z',
      '2026-06-01T12:00:00Zjunk',
      '0000-01-01T00:00:00Z',
      '2026-06-01T12:00:00+24:00',
      '1717243200',
    ])('ValueError for the invalid timestamp %j', (expiresAt) => {
      expect(() => at(expiresAt).isExpired(now)).toThrow(ValueError);
    });

    it.each(['2026-06-01T12:00:00', '2026-06-01', '2026-06-01 12:00:00.5'])(
      'TypeError for the timezone-naive %j',
      (expiresAt) => {
        const error = (() => {
          try {
            at(expiresAt).isExpired(now);
          } catch (caught) {
            return caught;
          }
        })();
        expect(error).toBeInstanceOf(TypeError);
        expect(error).not.toBeInstanceOf(ValueError);
      },
    );

    it('ValueError for a non-string expiry (what a provider copying `expires_in` leaves)', () => {
      const context = new SecurityContext({
        principalId: 'p',
        token: 't',
        expiresAt: 3600 as unknown as string,
      });
      expect(() => context.isExpired()).toThrow(ValueError);
    });
  });

  it('toDict returns a new object with the five snake_case keys, raw token included, metadata shared', () => {
    const metadata = { nested: { deep: true } };
    const context = new SecurityContext({
      principalId: 'p',
      token: 'secret-token',
      expiresAt: '2030-01-01T00:00:00Z',
      issuedAt: '2026-01-01T00:00:00Z',
      metadata,
    });
    const dict = context.toDict();
    expect(dict).toEqual({
      principal_id: 'p',
      token: 'secret-token',
      expires_at: '2030-01-01T00:00:00Z',
      issued_at: '2026-01-01T00:00:00Z',
      metadata,
    });
    expect(Object.keys(dict).sort()).toEqual([
      'expires_at',
      'issued_at',
      'metadata',
      'principal_id',
      'token',
    ]);
    expect(dict.metadata).toBe(metadata);
    expect(context.toDict()).not.toBe(dict);
  });

  it('fromDict round-trips', () => {
    const context = new SecurityContext({
      principalId: 'p',
      token: 't',
      expiresAt: null,
      metadata: { a: 1 },
    });
    const copy = SecurityContext.fromDict(context.toDict());
    expect(copy.toDict()).toEqual(context.toDict());
  });

  it('JSON.stringify redacts the token (toDict is the deliberate way to serialize it)', () => {
    const context = new SecurityContext({ principalId: 'p', token: 'secret-token' });
    const json = JSON.stringify(context);
    expect(json).not.toContain('secret-token');
    expect(JSON.parse(json)).toMatchObject({ principal_id: 'p', token: '[REDACTED]' });
  });
});
