/**
 * Interop C1/C2: the official SDK client (`@a2a-js/sdk` 1.3.0) discovers our server from its public
 * card, with authentication off, by API key and by bearer token; the raw card is canonical A2A 1.0
 * (it passes the card schema) and is cacheable (Cache-Control max-age, ETag, 304).
 */
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { rawRequest } from '@agent/test-support';
import { validateA2ACard } from '../card-schema.js';
import {
  AUTH_MODES,
  sdkClient,
  startInterop,
  type AuthMode,
  type InteropServer,
} from './test-support/harness.js';

const CARD_PATH = '/.well-known/agent-card.json';

/** The wrapper key each auth mode's scheme must use (none: no scheme at all). */
const WRAPPER: Record<AuthMode, string | undefined> = {
  none: undefined,
  apiKey: 'apiKeySecurityScheme',
  bearer: 'httpAuthSecurityScheme',
};

describe.each(AUTH_MODES)('card with auth %s', (auth) => {
  let server: InteropServer;

  beforeAll(async () => {
    server = await startInterop({ auth });
  });
  afterAll(async () => {
    await server.close();
  });

  it('C1: createFromUrl without credentials selects the JSONRPC interface at 1.0', async () => {
    const client = await sdkClient(server, 'alice', { anonymous: true });
    expect(client.transport.protocolName).toBe('JSONRPC');
    expect(client.protocolVersion).toBe('1.0');
    const card = await new DefaultAgentCardResolver().resolve(server.url);
    expect(card.supportedInterfaces.map((entry) => entry.protocolBinding)).toEqual(['JSONRPC', 'HTTP+JSON']);
    expect(card.supportedInterfaces[0]!.url).toBe(server.jsonRpcUrl);
    expect(card.supportedInterfaces[1]!.url).toBe(server.restUrl);
    expect(card.capabilities?.streaming).toBe(true);
    const wrapper = WRAPPER[auth];
    const schemes = Object.values(card.securitySchemes ?? {});
    if (wrapper === undefined) {
      expect(schemes).toEqual([]);
      expect(card.securityRequirements ?? []).toEqual([]);
    } else {
      // The SDK parsed our JSON into its oneof: the wrapper key was canonical.
      expect(schemes.map((scheme) => scheme.scheme?.$case)).toEqual([wrapper]);
      expect(card.securityRequirements.length).toBeGreaterThan(0);
      for (const requirement of card.securityRequirements) {
        for (const name of Object.keys(requirement.schemes)) expect(card.securitySchemes[name]).toBeDefined();
      }
    }
    if (auth === 'apiKey') {
      const scheme = schemes[0]!.scheme;
      expect(scheme?.$case === 'apiKeySecurityScheme' && scheme.value).toMatchObject({
        location: 'header',
        name: 'X-API-Key',
      });
    }
    if (auth === 'bearer') {
      const scheme = schemes[0]!.scheme;
      expect(scheme?.$case === 'httpAuthSecurityScheme' && scheme.value.scheme.toLowerCase()).toBe('bearer');
    }
  });

  it('C1: the REST interface is selectable too', async () => {
    const client = await sdkClient(server, 'alice', { anonymous: true, binding: 'HTTP+JSON' });
    expect(client.transport.protocolName).toBe('HTTP+JSON');
    expect(client.protocolVersion).toBe('1.0');
  });

  it('C2: the raw card is public, canonical A2A 1.0 and passes the card schema', async () => {
    const response = await rawRequest(`${server.url}${CARD_PATH}`);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const card = validateA2ACard(response.json);
    const interfaces = card.supportedInterfaces as Array<Record<string, unknown>>;
    expect(interfaces).toEqual([
      { url: server.jsonRpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: server.restUrl, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ]);
    // 1.0 moved these off the card.
    for (const gone of ['url', 'preferredTransport', 'additionalInterfaces', 'protocolVersion', 'security']) {
      expect(card).not.toHaveProperty(gone);
    }
    const schemes = (card.securitySchemes ?? {}) as Record<string, Record<string, unknown>>;
    const wrapper = WRAPPER[auth];
    if (wrapper === undefined) {
      expect(card).not.toHaveProperty('securitySchemes');
      expect(card).not.toHaveProperty('securityRequirements');
    } else {
      for (const scheme of Object.values(schemes)) expect(Object.keys(scheme)).toEqual([wrapper]);
      const requirements = card.securityRequirements as Array<{ schemes: Record<string, { list: unknown }> }>;
      expect(requirements.length).toBeGreaterThan(0);
      for (const requirement of requirements) {
        for (const [name, scopes] of Object.entries(requirement.schemes)) {
          expect(Object.keys(schemes)).toContain(name);
          expect(Array.isArray(scopes.list)).toBe(true);
        }
      }
    }
  });

  it('C2: Cache-Control max-age, a strong ETag, and 304 on If-None-Match', async () => {
    const first = await rawRequest(`${server.url}${CARD_PATH}`);
    expect(first.headers['cache-control']).toMatch(/max-age=300\b/);
    const etag = first.headers.etag;
    expect(typeof etag).toBe('string');
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await rawRequest(`${server.url}${CARD_PATH}`);
    expect(again.headers.etag).toBe(etag);
    expect(again.text).toBe(first.text);
    const notModified = await rawRequest(`${server.url}${CARD_PATH}`, {
      headers: { 'if-none-match': etag! },
    });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.etag).toBe(etag);
    expect(notModified.headers['cache-control']).toMatch(/max-age=300\b/);
    const stale = await rawRequest(`${server.url}${CARD_PATH}`, { headers: { 'if-none-match': '"stale"' } });
    expect(stale.status).toBe(200);
    expect(stale.text).toBe(first.text);
  });
});

describe('card options', () => {
  it('C2: cardMaxAgeSeconds, an interface tenant and a disabled push capability show on the card', async () => {
    const server = await startInterop({
      auth: 'none',
      a2a: { cardMaxAgeSeconds: 60, tenant: 't1', push: false },
    });
    try {
      const response = await rawRequest(`${server.url}${CARD_PATH}`);
      expect(response.headers['cache-control']).toMatch(/max-age=60\b/);
      const card = validateA2ACard(response.json);
      for (const entry of card.supportedInterfaces as Array<Record<string, unknown>>)
        expect(entry.tenant).toBe('t1');
      expect((card.capabilities as Record<string, unknown>).pushNotifications).toBeUndefined();
      const parsed = await new DefaultAgentCardResolver().resolve(server.url);
      expect(parsed.supportedInterfaces.map((entry) => entry.tenant)).toEqual(['t1', 't1']);
    } finally {
      await server.close();
    }
  });
});
