/**
 * OAuth2DelegationAuth `outboundLimit`: at most N token exchanges reach the endpoint at once, the
 * rest are refused at once as an overload, which `authenticateRequest` passes on (not a 401).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentError, ConcurrencyLimit, UnavailableError, UnauthenticatedError } from '@agent/core';
import { authenticateRequest } from './authenticate-request.js';
import { Authenticator } from './authenticator.js';
import {
  DEFAULT_TOKEN_EXCHANGE_LIMIT,
  OAuth2DelegationAuth,
  TOKEN_EXCHANGE_LIMIT_NAME,
} from './oauth2-delegation-auth.js';
import { type SecurityContext } from './security-context.js';
import { SecurityScheme } from './security-scheme.js';

/** A token endpoint that holds every exchange until `release()`, counting those it holds. */
class SlowTokenEndpoint {
  inFlight = 0;
  maxInFlight = 0;
  received = 0;
  private held: ServerResponse[] = [];
  private waiters: Array<{ count: number; resolve: () => void }> = [];
  private readonly server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      this.received++;
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      this.held.push(res);
      for (const waiter of this.waiters.filter((w) => this.inFlight >= w.count)) waiter.resolve();
    });
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/token`;
  }

  holding(count: number): Promise<void> {
    if (this.inFlight >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  release(): void {
    for (const res of this.held.splice(0)) {
      this.inFlight--;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ sub: 'u', access_token: 't' }));
    }
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const settle = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

describe('OAuth2DelegationAuth outboundLimit', () => {
  let endpoint: SlowTokenEndpoint;

  beforeEach(async () => {
    endpoint = new SlowTokenEndpoint();
    await endpoint.start();
  });

  afterEach(() => endpoint.stop());

  const provider = (outboundLimit?: number | ConcurrencyLimit) =>
    new OAuth2DelegationAuth({
      exchangeEndpoint: endpoint.url,
      clientId: 'c',
      clientSecret: 's',
      ...(outboundLimit === undefined ? {} : { outboundLimit }),
    });

  it('N + 5 exchanges: N reach the endpoint, 5 are refused at once (UNAVAILABLE); the slots come back', async () => {
    const N = 4;
    const auth = provider(N);
    const calls = Array.from({ length: N + 5 }, (_, i) => settle(auth.authenticate(`subject-token-${i}`)));
    await endpoint.holding(N);
    endpoint.release();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(N);
    const refused = outcomes.flatMap((o) => (o.ok ? [] : [o.error]));
    expect(refused).toHaveLength(5);
    for (const error of refused) {
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as AgentError).data).toEqual({ retry_after_ms: 1000, limit: TOKEN_EXCHANGE_LIMIT_NAME });
    }
    expect(endpoint.received).toBe(N);
    expect(endpoint.maxInFlight).toBe(N);
    expect(auth.outboundLimit.active).toBe(0);

    const again = Array.from({ length: N }, () => auth.authenticate('subject-token'));
    await endpoint.holding(N);
    endpoint.release();
    expect(await Promise.all(again)).toHaveLength(N);
    expect(endpoint.maxInFlight).toBe(N);
  });

  it('a failed exchange gives its slot back too', async () => {
    const auth = new OAuth2DelegationAuth({
      exchangeEndpoint: 'http://127.0.0.1:1/token',
      clientId: 'c',
      clientSecret: 's',
      outboundLimit: 1,
    });
    await expect(auth.authenticate('t')).rejects.toThrow(UnauthenticatedError);
    await expect(auth.authenticate('t')).rejects.toThrow(/OAuth delegation failed/);
    expect(auth.outboundLimit.active).toBe(0);
  });

  it('authenticateRequest passes the overload on, not as a 401, and never with the credential', async () => {
    const auth = provider(1);
    const first = auth.authenticate('first-subject-token');
    await endpoint.holding(1);
    const error = await authenticateRequest({
      authenticator: auth,
      headers: { authorization: 'Bearer second-subject-token' },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as AgentError).httpStatus).toBe(503);
    expect((error as AgentError).message).not.toContain('second-subject-token');
    endpoint.release();
    await first;
  });

  it('authenticateRequest still turns any other authenticator error into UNAUTHENTICATED', async () => {
    class Down extends Authenticator {
      get securityScheme(): SecurityScheme {
        return new SecurityScheme({ authType: 'http', authScheme: 'bearer' });
      }
      async authenticate(): Promise<SecurityContext> {
        throw new UnavailableError('directory down'); // no retry_after_ms: not an overload
      }
      async refreshToken(context: SecurityContext): Promise<SecurityContext> {
        return context;
      }
    }
    await expect(
      authenticateRequest({ authenticator: new Down(), headers: { authorization: 'Bearer x-token-123' } }),
    ).rejects.toThrow(UnauthenticatedError);
  });

  it('a shared ConcurrencyLimit bounds several providers together; a bad value is refused', async () => {
    const shared = new ConcurrencyLimit(1, { name: 'idp', retryAfterMs: 200 });
    const a = provider(shared);
    const b = provider(shared);
    const held = a.authenticate('one');
    await endpoint.holding(1);
    await expect(b.authenticate('two')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      data: { retry_after_ms: 200, limit: 'idp' },
    });
    endpoint.release();
    await held;
    expect(provider().outboundLimit.max).toBe(DEFAULT_TOKEN_EXCHANGE_LIMIT);
    expect(DEFAULT_TOKEN_EXCHANGE_LIMIT).toBe(64);
    for (const bad of [0, 2.5, '8']) {
      expect(() => provider(bad as never)).toThrow(/outboundLimit must be a whole number from 1/);
    }
  });
});
