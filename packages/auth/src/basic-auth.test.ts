import { UnauthenticatedError, ValueError } from '@agent/core';
import { BasicAuth, decodeBasicCredential } from './basic-auth.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('BasicAuth', () => {
  const users = { alice: 'wonder:land', bob: 'builder', ünï: 'cödé', ['__proto__']: 'not-special' } as Record<
    string,
    string
  >;
  const auth = new BasicAuth({ validCredentials: users });

  it.each([
    ['base64 alice', b64('alice:wonder:land'), 'alice'],
    ['raw alice (password with a colon, split at the first)', 'alice:wonder:land', 'alice'],
    ['base64 bob', b64('bob:builder'), 'bob'],
    ['raw bob', 'bob:builder', 'bob'],
    ['base64 UTF-8 user', b64('ünï:cödé'), 'ünï'],
    ['raw UTF-8 user', 'ünï:cödé', 'ünï'],
  ])('accepts %s', async (_name, credential, principal) => {
    const context = await auth.authenticate(credential);
    expect(context.principalId).toBe(principal);
    expect(context.token).toBe(credential);
    expect(context.expiresAt).toBeNull();
  });

  it.each([
    ['wrong password (base64)', b64('bob:builde')],
    ['wrong password (raw)', 'bob:Builder'],
    ['password with extra suffix', 'bob:builder '],
    ['unknown user', b64('carol:builder')],
    ['username case differs', 'Bob:builder'],
    ['empty password', 'bob:'],
    ['empty username', ':builder'],
    ['inherited name as user: toString', 'toString:function toString() { [native code] }'],
    ['inherited name as user: constructor', 'constructor:x'],
    ['only a colon', ':'],
  ])('rejects %s as "Invalid username or password"', async (_name, credential) => {
    const error = await auth.authenticate(credential).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect((error as Error).message).toBe('Invalid username or password');
  });

  it.each([
    ['no colon (raw)', 'bobbuilder'],
    ['no colon (base64)', b64('bobbuilder')],
    ['empty', ''],
  ])('rejects %s as malformed', async (_name, credential) => {
    await expect(auth.authenticate(credential)).rejects.toThrow(
      'Invalid basic credentials: expected username:password',
    );
  });

  it('an own __proto__ user is a normal user', async () => {
    await expect(auth.authenticate('__proto__:not-special')).resolves.toMatchObject({
      principalId: '__proto__',
    });
  });

  it('never echoes the username or password in errors', async () => {
    const error = (await auth.authenticate('mallory:hunter2').catch((e: unknown) => e)) as Error;
    expect(error.message).not.toMatch(/mallory|hunter2/);
  });

  it('strict base64 first: a raw value that is also valid base64 is read as encoded', () => {
    // "a:bc" is not base64; "YWJj" is base64 of "abc"; "dXNlcjpwYXNz" is base64 of "user:pass".
    expect(decodeBasicCredential('dXNlcjpwYXNz')).toBe('user:pass');
    expect(decodeBasicCredential('a:bc')).toBe('a:bc');
    expect(decodeBasicCredential('YWJj')).toBe('abc');
  });

  it.each([
    ['missing padding', 'dXNlcjpwYXM'],
    ['whitespace inside', 'dXNl cjpwYXNz'],
    ['base64url alphabet', 'dXNlcjp-YXNz'],
    ['padding in the middle', 'dX==cjpwYXNz'],
  ])('falls back to the raw text when base64 is not strict: %s', (_name, value) => {
    expect(decodeBasicCredential(value)).toBe(value);
  });

  it('falls back to the raw text when the bytes are not UTF-8', () => {
    const notUtf8 = Buffer.from([0xff, 0xfe, 0x3a, 0x41]).toString('base64');
    expect(decodeBasicCredential(notUtf8)).toBe(notUtf8);
  });

  it('a raw value that happens to be base64 is therefore not accepted raw', async () => {
    // A user whose raw "user:pass" is never seen raw: its base64 form is decoded first.
    const shadow = new BasicAuth({ validCredentials: { user: 'pass' } });
    await expect(shadow.authenticate('dXNlcjpwYXNz')).resolves.toMatchObject({ principalId: 'user' });
  });

  it('stores the map by reference', async () => {
    const map: Record<string, string> = {};
    const late = new BasicAuth({ validCredentials: map });
    await expect(late.authenticate('x:y')).rejects.toThrow(UnauthenticatedError);
    map.x = 'y';
    await expect(late.authenticate('x:y')).resolves.toMatchObject({ principalId: 'x' });
    expect(late.validCredentials).toBe(map);
  });

  it('non-string stored passwords never match', async () => {
    const odd = new BasicAuth({ validCredentials: { n: 5 as unknown as string } });
    await expect(odd.authenticate('n:5')).rejects.toThrow('Invalid username or password');
  });

  it('non-string credentials are rejected, not crashed on', async () => {
    await expect(auth.authenticate(undefined as unknown as string)).rejects.toThrow(UnauthenticatedError);
  });

  it('advertises http basic; refreshToken returns the same object', async () => {
    expect(auth.securityScheme.toDict()).toEqual({
      type: 'http',
      scheme: 'basic',
      description: 'HTTP Basic authentication',
      metadata: {},
    });
    const context = await auth.authenticate('bob:builder');
    expect(await auth.refreshToken(context)).toBe(context);
  });

  it('a missing credentials map is a ValueError', () => {
    expect(() => new BasicAuth({ validCredentials: null as unknown as Record<string, string> })).toThrow(
      ValueError,
    );
  });
});
