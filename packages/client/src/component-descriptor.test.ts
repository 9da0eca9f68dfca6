import { isAbsolute } from 'node:path';
import { ValueError } from '@agent/core';
import { describeComponent } from '@agent/core/internal';
import { resolveDescriptorModules, reviveComponent } from './component-descriptor.js';

describe('reviveComponent', () => {
  const built: string[] = [];
  class Auth {
    constructor(readonly options: { key: string }) {
      built.push(`auth:${options.key}`);
    }
  }
  class Transport {
    constructor(readonly options: { url: string; authenticator: Auth; extras: unknown[] }) {
      built.push(`transport:${options.url}`);
    }
  }
  const modules: Record<string, Record<string, unknown>> = {
    auth: { Auth },
    transport: { Transport },
    broken: { Thing: 42 },
  };
  const load = (specifier: string): unknown => modules[specifier];

  beforeEach(() => {
    built.length = 0;
  });

  it('builds nested descriptors depth-first, inside objects and arrays', () => {
    const descriptor = describeComponent('transport', 'Transport', {
      url: 'http://x',
      authenticator: describeComponent('auth', 'Auth', { key: 'a' }),
      extras: [describeComponent('auth', 'Auth', { key: 'b' }), 'plain', { n: 1 }],
    });
    const transport = reviveComponent(descriptor, load) as Transport;
    expect(transport).toBeInstanceOf(Transport);
    expect(transport.options.authenticator).toBeInstanceOf(Auth);
    expect(transport.options.extras[0]).toBeInstanceOf(Auth);
    expect(transport.options.extras.slice(1)).toEqual(['plain', { n: 1 }]);
    expect(built).toEqual(['auth:a', 'auth:b', 'transport:http://x']);
  });

  it('leaves values without descriptors untouched', () => {
    const buffer = Buffer.from('pem');
    expect(reviveComponent({ tls: { cert: buffer }, n: [1, 2] }, load)).toEqual({
      tls: { cert: buffer },
      n: [1, 2],
    });
  });

  it('rejects an export that is not a constructor, and a malformed descriptor', () => {
    expect(() => reviveComponent(describeComponent('broken', 'Thing', {}), load)).toThrow(ValueError);
    expect(() =>
      reviveComponent({ $component: { module: 'auth', exportName: 'Auth', options: 'x' } }, load),
    ).toThrow(/needs exportName and options/);
  });
});

describe('resolveDescriptorModules', () => {
  it('turns package names, nested ones included, into absolute file paths', () => {
    const resolved = resolveDescriptorModules(
      describeComponent('@agent/transport-memory', 'RuntimeTransport', {
        authenticator: describeComponent('@agent/auth', 'APIKeyAuth', { validKeys: {} }),
      }),
    );
    expect(isAbsolute(resolved.$component.module)).toBe(true);
    expect(resolved.$component.module).toMatch(/transport-memory[\\/]dist[\\/]index\.js$/);
    const nested = resolved.$component.options.authenticator as ReturnType<typeof describeComponent>;
    expect(nested.$component.module).toMatch(/auth[\\/]dist[\\/]index\.js$/);
    expect(nested.$component.options).toEqual({ validKeys: {} });
  });

  it('keeps absolute paths and names an unresolvable module', () => {
    expect(resolveDescriptorModules(describeComponent(__filename, 'X', {})).$component.module).toBe(
      __filename,
    );
    expect(() => resolveDescriptorModules(describeComponent('no-such-package-xyz', 'X', {}))).toThrow(
      ValueError,
    );
  });
});
