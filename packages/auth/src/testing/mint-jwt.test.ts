import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { epochSeconds, mintJwt, signJwtInput } from './index.js';

const decode = (segment: string) =>
  JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('mintJwt', () => {
  it.each(['HS256', 'HS384', 'HS512'] as const)('mints %s tokens jsonwebtoken verifies', (algorithm) => {
    const token = mintJwt({ secret: 'k', algorithm, claims: { sub: 'a' } });
    expect(jwt.verify(token, 'k', { algorithms: [algorithm] })).toEqual({ sub: 'a' });
  });

  it('writes claims exactly as given (no iat added) and merges header overrides', () => {
    const [header, payload] = mintJwt({
      secret: 'k',
      claims: { x: 1 },
      header: { alg: 'RS256', kid: 'k1' },
    }).split('.') as [string, string];
    expect(decode(header)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'k1' });
    expect(decode(payload)).toEqual({ x: 1 });
  });

  it('alg none has an empty signature', () => {
    const token = mintJwt({ secret: 'ignored', algorithm: 'none' });
    expect(token.endsWith('.')).toBe(true);
    expect(decode(token.split('.')[0]!)).toEqual({ alg: 'none', typ: 'JWT' });
  });

  it('signJwtInput signs an arbitrary signing input', () => {
    const expected = createHmac('sha256', 'k').update('a.b').digest('base64url');
    expect(signJwtInput('a.b', 'k')).toBe(`a.b.${expected}`);
  });

  it('epochSeconds floors to whole seconds', () => {
    expect(epochSeconds(new Date(1999))).toBe(1);
  });
});
