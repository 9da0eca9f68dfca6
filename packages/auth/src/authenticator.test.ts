import { Authenticator } from './authenticator.js';
import { SecurityContext } from './security-context.js';
import { SecurityScheme } from './security-scheme.js';

type Ctor = new () => Authenticator;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const define = require('./test-support/plain-js-authenticators.js') as (
  base: typeof Authenticator,
  scheme: typeof SecurityScheme,
  context: typeof SecurityContext,
) => Record<string, Ctor>;
const js = define(Authenticator, SecurityScheme, SecurityContext);

describe('Authenticator (abstract base)', () => {
  it('a complete TypeScript subclass works', async () => {
    class Echo extends Authenticator {
      get securityScheme(): SecurityScheme {
        return new SecurityScheme({ authType: 'http', authScheme: 'bearer' });
      }
      async authenticate(credentials: string): Promise<SecurityContext> {
        return new SecurityContext({ principalId: credentials, token: credentials });
      }
      async refreshToken(context: SecurityContext): Promise<SecurityContext> {
        return context;
      }
    }
    const auth = new Echo();
    expect(auth).toBeInstanceOf(Authenticator);
    expect((await auth.authenticate('x')).principalId).toBe('x');
  });

  it('a complete plain JavaScript subclass works, also one level further down', async () => {
    expect((await new js.Complete!().authenticate('bob')).principalId).toBe('bob');
    expect(new js.Grandchild!()).toBeInstanceOf(Authenticator);
  });

  it.each([
    ['NoScheme', 'securityScheme'],
    ['NoAuthenticate', 'authenticate'],
    ['NoRefresh', 'refreshToken'],
    ['AuthenticateNotAFunction', 'authenticate'],
    ['Legacy', 'securityScheme, refreshToken'],
  ])('plain JavaScript %s cannot be instantiated (missing %s)', (name, missing) => {
    expect(() => new js[name]!()).toThrow(TypeError);
    expect(() => new js[name]!()).toThrow(`Can't instantiate abstract class ${name} without ${missing}`);
  });

  it('names every missing member', () => {
    expect(() => new js.NothingAtAll!()).toThrow('without securityScheme, authenticate, refreshToken');
  });

  it('the base itself cannot be constructed, even bypassing TypeScript', () => {
    const Base = Authenticator as unknown as Ctor;
    expect(() => new Base()).toThrow(TypeError);
  });
});
