import { Authenticator } from './authenticator.js';
import { LazyCredentials } from './lazy-credentials.js';
import { SecurityContext } from './security-context.js';
import { SecurityScheme } from './security-scheme.js';

/** An authenticator whose calls stay pending until the test settles them. */
class Gate extends Authenticator {
  calls: { credentials: string; resolve: (c: SecurityContext) => void; reject: (e: unknown) => void }[] = [];
  constructor(private readonly scheme = new SecurityScheme({ authType: 'http', authScheme: 'bearer' })) {
    super();
  }
  get securityScheme(): SecurityScheme {
    return this.scheme;
  }
  authenticate(credentials: string): Promise<SecurityContext> {
    return new Promise((resolve, reject) => this.calls.push({ credentials, resolve, reject }));
  }
  async refreshToken(context: SecurityContext): Promise<SecurityContext> {
    return context;
  }
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
const ctx = (token: string) => new SecurityContext({ principalId: 'p', token });

describe('LazyCredentials', () => {
  it('authenticates nothing until first use', async () => {
    const gate = new Gate();
    const lazy = new LazyCredentials(gate, 'raw');
    await flush();
    expect(gate.calls).toHaveLength(0);
    expect(lazy.current).toBeUndefined();
  });

  it('concurrent first calls share one in-flight authentication', async () => {
    const gate = new Gate();
    const lazy = new LazyCredentials(gate, 'raw');
    const results = Promise.all([lazy.getContext(), lazy.headers(), lazy.metadata(), lazy.getContext()]);
    await flush();
    expect(gate.calls).toHaveLength(1);
    expect(gate.calls[0]!.credentials).toBe('raw');
    const context = ctx('T');
    gate.calls[0]!.resolve(context);
    const [a, headers, metadata, d] = await results;
    expect(a).toBe(context);
    expect(d).toBe(context);
    expect(headers).toEqual({ Authorization: 'Bearer T' });
    expect(metadata).toEqual({ authorization: 'Bearer T' });
  });

  it('caches the context for later calls', async () => {
    const gate = new Gate();
    const lazy = new LazyCredentials(gate, 'raw');
    const first = lazy.getContext();
    await flush();
    gate.calls[0]!.resolve(ctx('T'));
    const context = await first;
    expect(await lazy.getContext()).toBe(context);
    expect(lazy.current).toBe(context);
    expect(gate.calls).toHaveLength(1);
  });

  it('a failure is shared by the waiting callers but not cached', async () => {
    const gate = new Gate();
    const lazy = new LazyCredentials(gate, 'raw');
    const both = Promise.allSettled([lazy.getContext(), lazy.getContext()]);
    await flush();
    const failure = new Error('denied');
    gate.calls[0]!.reject(failure);
    const settled = await both;
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason).toBe(failure);
    const retry = lazy.getContext();
    await flush();
    expect(gate.calls).toHaveLength(2);
    gate.calls[1]!.resolve(ctx('second'));
    expect((await retry).token).toBe('second');
  });

  it('a synchronous throw from a plain JavaScript authenticator becomes a rejection', async () => {
    const gate = new Gate();
    gate.authenticate = () => {
      throw new Error('sync');
    };
    await expect(new LazyCredentials(gate, 'raw').getContext()).rejects.toThrow('sync');
  });

  it('reset forgets the context; an attempt in flight during reset cannot install a stale one', async () => {
    const gate = new Gate();
    const lazy = new LazyCredentials(gate, 'raw');
    const stale = lazy.getContext();
    await flush();
    lazy.reset();
    const fresh = lazy.getContext();
    await flush();
    expect(gate.calls).toHaveLength(2);
    gate.calls[1]!.resolve(ctx('fresh'));
    gate.calls[0]!.resolve(ctx('stale'));
    expect((await stale).token).toBe('stale');
    expect((await fresh).token).toBe('fresh');
    expect((await lazy.getContext()).token).toBe('fresh');
  });

  it('setContext replaces the cache', async () => {
    const gate = new Gate();
    const lazy = new LazyCredentials(gate, 'raw');
    lazy.setContext(ctx('given'));
    expect(await lazy.headers()).toEqual({ Authorization: 'Bearer given' });
    expect(gate.calls).toHaveLength(0);
  });

  it('headers follow the authenticator scheme (API key)', async () => {
    const gate = new Gate(new SecurityScheme({ authType: 'apiKey' }));
    const lazy = new LazyCredentials(gate, 'raw');
    lazy.setContext(ctx('k'));
    expect(await lazy.headers()).toEqual({ 'X-API-Key': 'k', Authorization: 'ApiKey k' });
    expect(await lazy.metadata()).toEqual({ 'x-api-key': 'k', authorization: 'ApiKey k' });
  });
});
