import { AgentError } from '@agent/core';
import { isA2ACard, validateA2ACard } from './card-schema.js';

function card(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'echo',
    description: 'Echoes',
    version: '1.0.0',
    supportedInterfaces: [
      { url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      {
        url: 'http://127.0.0.1:1/a2a/rest',
        protocolBinding: 'HTTP+JSON',
        protocolVersion: '1.0',
        tenant: 't1',
      },
    ],
    capabilities: { streaming: true, pushNotifications: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echo', tags: ['echo'] }],
    securitySchemes: {
      apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
      oauth: {
        oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://t/token', scopes: {} } } },
      },
      mtls: { mtlsSecurityScheme: {} },
    },
    securityRequirements: [{ schemes: { apiKey: { list: [] } } }, { schemes: { bearer: { list: [] } } }],
    ...overrides,
  };
}

function pointers(value: unknown): string[] {
  try {
    validateA2ACard(value);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe('VALIDATION_FAILED');
    return ((error as AgentError).data as { errors: { pointer: string }[] }).errors.map((e) => e.pointer);
  }
  return [];
}

describe('validateA2ACard', () => {
  it('accepts a canonical 1.0 card', () => {
    expect(pointers(card())).toEqual([]);
    expect(isA2ACard(card())).toBe(true);
    expect(isA2ACard({ name: 'native', url: 'http://x' })).toBe(false);
  });

  it('refuses a security scheme without a wrapper key, with two, or in the SDK in-memory form', () => {
    expect(pointers(card({ securitySchemes: { k: { type: 'apiKey', in: 'header', name: 'X' } } }))).toContain(
      '/securitySchemes/k',
    );
    const two = {
      apiKeySecurityScheme: { location: 'header', name: 'X' },
      mtlsSecurityScheme: {},
    };
    expect(pointers(card({ securitySchemes: { k: two } }))).toContain('/securitySchemes/k');
    const sdkForm = { scheme: { $case: 'httpAuthSecurityScheme', value: { scheme: 'Bearer' } } };
    expect(pointers(card({ securitySchemes: { k: sdkForm } }))).toContain('/securitySchemes/k');
  });

  it('refuses two OAuth flows in one scheme (flows is a oneof)', () => {
    const flows = {
      clientCredentials: { tokenUrl: 'https://t', scopes: {} },
      deviceCode: { deviceAuthorizationUrl: 'https://d', tokenUrl: 'https://t', scopes: {} },
    };
    expect(pointers(card({ securitySchemes: { o: { oauth2SecurityScheme: { flows } } } }))).toContain(
      '/securitySchemes/o/oauth2SecurityScheme/flows',
    );
  });

  it('refuses the 0.3 requirement form and missing 1.0 fields', () => {
    expect(pointers(card({ securityRequirements: [{ apiKey: [] }] }))).toContain(
      '/securityRequirements/0/apiKey',
    );
    expect(pointers(card({ securityRequirements: [{ schemes: { apiKey: [] } }] }))).toContain(
      '/securityRequirements/0/schemes/apiKey',
    );
    expect(
      pointers(card({ supportedInterfaces: [{ url: 'http://x', protocolBinding: 'JSONRPC' }] })),
    ).toContain('/supportedInterfaces/0/protocolVersion');
    expect(pointers(card({ skills: [{ id: 's', name: 'S', description: 'd' }] }))).toContain(
      '/skills/0/tags',
    );
    const { supportedInterfaces: _dropped, ...legacy } = card({ url: 'http://x' });
    expect(pointers(legacy)).toContain('/supportedInterfaces');
  });
});
