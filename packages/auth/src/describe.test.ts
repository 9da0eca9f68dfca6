import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type ComponentDescriptor } from '@agent/core';
import { isComponentDescriptor } from '@agent/core/internal';
import * as publicApi from './index.js';
import { mintJwt } from './testing/index.js';

/** What client.sync does in its worker: structured-clone the recipe, look up the export, construct. */
function rebuild(descriptor: ComponentDescriptor): publicApi.Authenticator {
  const { module, exportName, options } = structuredClone(descriptor).$component;
  expect(module).toBe('@agent/auth');
  const Export = (publicApi as unknown as Record<string, new (options: unknown) => publicApi.Authenticator>)[
    exportName
  ];
  if (!Export) throw new Error(`no export ${exportName}`);
  return new Export(options);
}

describe('describe(): providers can be rebuilt from their descriptor', () => {
  it('APIKeyAuth', async () => {
    const original = new publicApi.APIKeyAuth({ validKeys: { k1: ['a'] }, description: 'd' });
    const descriptor = original.describe();
    expect(isComponentDescriptor(descriptor)).toBe(true);
    expect(descriptor.$component).toEqual({
      module: '@agent/auth',
      exportName: 'APIKeyAuth',
      options: { validKeys: { k1: ['a'] }, description: 'd' },
    });
    const copy = rebuild(descriptor);
    expect((await copy.authenticate('k1')).principalId).toBe('api-key-k1');
    expect(copy.securityScheme.toDict()).toEqual(original.securityScheme.toDict());
  });

  it('BearerTokenAuth (the test clock is not part of the recipe)', async () => {
    const original = new publicApi.BearerTokenAuth({
      secret: 's',
      algorithm: 'HS384',
      issuer: 'i',
      audience: 'a',
      leewaySeconds: 5,
      now: () => 0,
    });
    expect(original.describe().$component.options).toEqual({
      secret: 's',
      algorithm: 'HS384',
      issuer: 'i',
      audience: 'a',
      leewaySeconds: 5,
    });
    const copy = rebuild(original.describe());
    const jwt = mintJwt({ secret: 's', algorithm: 'HS384', claims: { sub: 'x', iss: 'i', aud: 'a' } });
    expect((await copy.authenticate(jwt)).principalId).toBe('x');
    expect(copy.securityScheme.toDict()).toEqual(original.securityScheme.toDict());
  });

  it('APIKeyAuth and BasicAuth keep their tenant lists', async () => {
    const keys = rebuild(
      new publicApi.APIKeyAuth({ validKeys: { k1: [] }, tenants: { k1: ['acme'] } }).describe(),
    );
    expect((await keys.authenticate('k1')).metadata).toEqual({ tenants: ['acme'] });
    const users = rebuild(
      new publicApi.BasicAuth({ validCredentials: { u: 'p' }, tenants: { u: ['', 'acme'] } }).describe(),
    );
    expect((await users.authenticate('u:p')).metadata).toEqual({ tenants: ['', 'acme'] });
  });

  it('BasicAuth', async () => {
    const copy = rebuild(new publicApi.BasicAuth({ validCredentials: { u: 'p' } }).describe());
    expect((await copy.authenticate('u:p')).principalId).toBe('u');
  });

  it('OAuth2DelegationAuth keeps every option, the default timeout and outbound limit made explicit', () => {
    const original = new publicApi.OAuth2DelegationAuth({
      exchangeEndpoint: 'https://idp/token',
      clientId: 'c',
      clientSecret: 's',
      scope: 'x',
    });
    expect(original.describe().$component.options).toEqual({
      exchangeEndpoint: 'https://idp/token',
      clientId: 'c',
      clientSecret: 's',
      scope: 'x',
      timeoutMs: 10000,
      outboundLimit: 64,
    });
    const copy = rebuild(original.describe()) as publicApi.OAuth2DelegationAuth;
    expect(copy.timeoutMs).toBe(10000);
    expect(copy.outboundLimit.max).toBe(64);
    expect(copy.securityScheme.toDict()).toEqual(original.securityScheme.toDict());
  });
});

describe('describe(): rebuilt in a real worker thread from the built package', () => {
  async function inWorker(
    descriptor: ComponentDescriptor,
    credentials: string,
  ): Promise<Record<string, unknown>> {
    const worker = new Worker(join(__dirname, 'test-support', 'rebuild-worker.js'), {
      workerData: { descriptor, credentials },
    });
    try {
      return await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    } finally {
      await worker.terminate();
    }
  }

  it('a BearerTokenAuth recipe verifies tokens in the worker', async () => {
    const auth = new publicApi.BearerTokenAuth({ secret: 'worker-secret', audience: 'agents' });
    const good = mintJwt({ secret: 'worker-secret', claims: { sub: 'w', aud: 'agents' } });
    expect(await inWorker(auth.describe(), good)).toEqual({
      ok: true,
      principalId: 'w',
      scheme: auth.securityScheme.toDict(),
    });
    const bad = mintJwt({ secret: 'worker-secret', claims: { sub: 'w', aud: 'others' } });
    expect(await inWorker(auth.describe(), bad)).toEqual({
      ok: false,
      message: 'Token authentication failed: audience mismatch',
      code: 'UNAUTHENTICATED',
    });
  });

  it('an APIKeyAuth recipe carries its keys', async () => {
    const auth = new publicApi.APIKeyAuth({ validKeys: { 'worker-key-1': [] } });
    expect(await inWorker(auth.describe(), 'worker-key-1')).toMatchObject({
      ok: true,
      principalId: 'api-key-worker-k',
    });
  });
});
