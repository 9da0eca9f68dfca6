import { toA2ASecuritySchemes } from './a2a-security.js';
import { APIKeyAuth } from './api-key-auth.js';
import { BasicAuth } from './basic-auth.js';
import { BearerTokenAuth } from './bearer-token-auth.js';
import { OAuth2DelegationAuth } from './oauth2-delegation-auth.js';
import { SecurityScheme } from './security-scheme.js';

const apiKey = new APIKeyAuth({ validKeys: {} }).securityScheme;
const bearer = new BearerTokenAuth({ secret: 's' }).securityScheme;
const basic = new BasicAuth({ validCredentials: {} }).securityScheme;
const oauth = new OAuth2DelegationAuth({
  exchangeEndpoint: 'https://idp/token',
  clientId: 'c',
  clientSecret: 's',
}).securityScheme;

describe('toA2ASecuritySchemes (A2A 1.0 canonical form)', () => {
  it('each built-in provider maps to exactly one wrapper key', () => {
    const { securitySchemes } = toA2ASecuritySchemes([apiKey, bearer, basic, oauth]);
    expect(securitySchemes).toEqual({
      apiKey: {
        apiKeySecurityScheme: {
          location: 'header',
          name: 'X-API-Key',
          description: 'API key authentication',
        },
      },
      http: {
        httpAuthSecurityScheme: {
          scheme: 'Bearer',
          bearerFormat: 'JWT',
          description: 'JWT bearer token (HS256)',
        },
      },
      http_2: { httpAuthSecurityScheme: { scheme: 'Basic', description: 'HTTP Basic authentication' } },
      oauth2: {
        oauth2SecurityScheme: {
          flows: { clientCredentials: { tokenUrl: 'https://idp/token', scopes: {} } },
          description: 'OAuth 2.0 token exchange (RFC 8693)',
        },
      },
    });
    for (const value of Object.values(securitySchemes)) expect(Object.keys(value)).toHaveLength(1);
  });

  it('requirements: one alternative per scheme with an empty scope list (OR)', () => {
    expect(toA2ASecuritySchemes([apiKey, bearer]).securityRequirements).toEqual([
      { schemes: { apiKey: { list: [] } } },
      { schemes: { http: { list: [] } } },
    ]);
  });

  it('requireAll puts every scheme in one requirement (AND)', () => {
    expect(toA2ASecuritySchemes([apiKey, bearer], { requireAll: true }).securityRequirements).toEqual([
      { schemes: { apiKey: { list: [] }, http: { list: [] } } },
    ]);
    expect(toA2ASecuritySchemes([], { requireAll: true }).securityRequirements).toEqual([]);
  });

  it('takes the native card record (dict forms) and keeps its names', () => {
    const result = toA2ASecuritySchemes({ http: bearer.toDict(), keys: apiKey.toDict() });
    expect(Object.keys(result.securitySchemes)).toEqual(['http', 'keys']);
    expect(result.securityRequirements).toEqual([
      { schemes: { http: { list: [] } } },
      { schemes: { keys: { list: [] } } },
    ]);
  });

  it('a scheme named "__proto__" in a parsed card stays an own key, never the prototype', () => {
    const card = JSON.parse(`{"__proto__":${JSON.stringify(apiKey.toDict())}}`) as Record<string, never>;
    const result = toA2ASecuritySchemes(card);
    expect(Object.getPrototypeOf(result.securitySchemes)).toBe(Object.prototype);
    expect(Object.keys(result.securitySchemes)).toEqual(['__proto__']);
    expect(result.securityRequirements).toHaveLength(1);
    expect(JSON.stringify(result.securitySchemes)).toContain('"__proto__":{"apiKeySecurityScheme"');
  });

  it('a single SecurityScheme is named by its auth type', () => {
    expect(toA2ASecuritySchemes(apiKey).securitySchemes).toHaveProperty(
      'apiKey.apiKeySecurityScheme.name',
      'X-API-Key',
    );
  });

  it('nothing configured → empty declaration', () => {
    expect(toA2ASecuritySchemes(null)).toEqual({ securitySchemes: {}, securityRequirements: [] });
    expect(toA2ASecuritySchemes(undefined)).toEqual({ securitySchemes: {}, securityRequirements: [] });
    expect(toA2ASecuritySchemes({})).toEqual({ securitySchemes: {}, securityRequirements: [] });
  });

  it('apiKey location and name come from metadata when valid', () => {
    const scheme = new SecurityScheme({ authType: 'apiKey', metadata: { in: 'query', name: 'api_key' } });
    expect(toA2ASecuritySchemes([scheme]).securitySchemes.apiKey).toEqual({
      apiKeySecurityScheme: { location: 'query', name: 'api_key' },
    });
    const bad = new SecurityScheme({ authType: 'apiKey', metadata: { location: 'body' } });
    expect(toA2ASecuritySchemes([bad]).securitySchemes.apiKey).toEqual({
      apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' },
    });
  });

  it('other http schemes keep their IANA spelling; no bearerFormat unless given', () => {
    const digest = new SecurityScheme({ authType: 'http', authScheme: 'digest' });
    expect(toA2ASecuritySchemes([digest]).securitySchemes.http).toEqual({
      httpAuthSecurityScheme: { scheme: 'Digest' },
    });
  });

  it('mutualTLS → mtlsSecurityScheme', () => {
    const mtls = new SecurityScheme({ authType: 'mutualTLS', description: 'client certificates' });
    expect(toA2ASecuritySchemes([mtls]).securitySchemes).toEqual({
      mutualTLS: { mtlsSecurityScheme: { description: 'client certificates' } },
    });
  });

  it('openIdConnect needs a URL; without one it is left out', () => {
    const oidc = new SecurityScheme({
      authType: 'openIdConnect',
      metadata: { open_id_connect_url: 'https://idp/.well-known/openid-configuration' },
    });
    expect(toA2ASecuritySchemes([oidc]).securitySchemes).toEqual({
      openIdConnect: {
        openIdConnectSecurityScheme: { openIdConnectUrl: 'https://idp/.well-known/openid-configuration' },
      },
    });
    const result = toA2ASecuritySchemes([new SecurityScheme({ authType: 'openIdConnect' })]);
    expect(result).toEqual({ securitySchemes: {}, securityRequirements: [] });
  });

  it('oauth2: given flows (exactly one) pass, required scopes go into the requirement; no flows and no endpoint → left out', () => {
    const flows = {
      authorizationCode: {
        authorizationUrl: 'https://idp/auth',
        tokenUrl: 'https://idp/token',
        scopes: { read: 'Read' },
      },
    };
    const scheme = new SecurityScheme({
      authType: 'oauth2',
      metadata: {
        flows,
        required_scopes: ['read'],
        oauth2_metadata_url: 'https://idp/.well-known/oauth-authorization-server',
      },
    });
    const result = toA2ASecuritySchemes({ idp: scheme });
    expect(result.securitySchemes.idp).toEqual({
      oauth2SecurityScheme: {
        flows,
        oauth2MetadataUrl: 'https://idp/.well-known/oauth-authorization-server',
      },
    });
    expect(result.securityRequirements).toEqual([{ schemes: { idp: { list: ['read'] } } }]);
    const twoFlows = new SecurityScheme({
      authType: 'oauth2',
      metadata: { flows: { ...flows, clientCredentials: { tokenUrl: 't', scopes: {} } } },
    });
    expect(toA2ASecuritySchemes([twoFlows]).securitySchemes).toEqual({});
    expect(toA2ASecuritySchemes([new SecurityScheme({ authType: 'oauth2' })]).securitySchemes).toEqual({});
  });

  it('already canonical entries pass through; unknown and broken entries are dropped', () => {
    const canonical = { httpAuthSecurityScheme: { scheme: 'Bearer' } };
    const result = toA2ASecuritySchemes({
      canon: canonical,
      unknown: { type: 'kerberos', scheme: null, description: '', metadata: {} },
      httpWithoutScheme: { type: 'http', scheme: null, description: '', metadata: {} },
      twoWrappers: { httpAuthSecurityScheme: { scheme: 'Bearer' }, mtlsSecurityScheme: {} } as never,
      notAnObject: 'apiKey' as never,
    });
    expect(result.securitySchemes).toEqual({ canon: canonical });
    expect(result.securityRequirements).toEqual([{ schemes: { canon: { list: [] } } }]);
  });

  it('the result is plain JSON (survives a JSON round trip unchanged)', () => {
    const result = toA2ASecuritySchemes([apiKey, bearer, oauth]);
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });
});
