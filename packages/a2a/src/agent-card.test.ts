import { APIKeyAuth, BasicAuth } from '@agent/auth';
import type { AgentCard } from '@agent/core';
import { a2aInterfacesOf, fromA2AAgentCard, toA2AAgentCard } from './agent-card.js';

const native: AgentCard = {
  name: 'n',
  description: '',
  url: 'http://x',
  skills: [
    { id: 's', name: 'Skill', description: 'does', tags: ['t'] },
    { id: 'bare', name: 'Bare' },
  ],
};
const urls = { jsonRpcUrl: 'http://x/a2a', restUrl: 'http://x/a2a/rest' };

describe('toA2AAgentCard', () => {
  it('fills required fields, interfaces in order, capabilities and security', () => {
    const card = toA2AAgentCard(native, {
      ...urls,
      tenant: 't',
      pushNotifications: true,
      extendedAgentCard: false,
      authenticator: new APIKeyAuth({ validKeys: { k: [] } }),
      fields: { provider: { organization: 'o', url: 'https://o' } },
    });
    expect(card).toEqual({
      name: 'n',
      description: 'n',
      version: '1.0.0',
      supportedInterfaces: [
        { url: 'http://x/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 't' },
        { url: 'http://x/a2a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 't' },
      ],
      provider: { organization: 'o', url: 'https://o' },
      capabilities: { streaming: true, pushNotifications: true },
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: [
        { id: 's', name: 'Skill', description: 'does', tags: ['t'] },
        { id: 'bare', name: 'Bare', description: 'Bare', tags: [] },
      ],
      securitySchemes: {
        apiKey: { apiKeySecurityScheme: expect.objectContaining({ location: 'header', name: 'X-API-Key' }) },
      },
      securityRequirements: [{ schemes: { apiKey: { list: [] } } }],
    });
  });

  it('advertises Basic for BasicAuth and nothing without an authenticator', () => {
    const basic = toA2AAgentCard(native, {
      ...urls,
      pushNotifications: false,
      extendedAgentCard: true,
      authenticator: new BasicAuth({ validCredentials: { u: 'p' } }),
    });
    expect(Object.values(basic.securitySchemes!)).toEqual([
      { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Basic' }) },
    ]);
    expect(basic.capabilities).toEqual({ streaming: true, extendedAgentCard: true });
    const open = toA2AAgentCard(native, { ...urls, pushNotifications: false, extendedAgentCard: false });
    expect(open).not.toHaveProperty('securitySchemes');
    expect(open).not.toHaveProperty('securityRequirements');
  });
});

describe('fromA2AAgentCard', () => {
  it('reads a canonical card back and ignores non-canonical scheme entries', () => {
    const card = fromA2AAgentCard({
      name: 'remote',
      description: 'd',
      version: '3',
      capabilities: { streaming: true },
      supportedInterfaces: [
        { url: 'http://r/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'a' },
        { url: 'http://r/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ],
      skills: [{ id: 's', name: 'S', description: 'x', tags: [] }],
      securitySchemes: {
        key: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
        bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
        sdk: { scheme: { $case: 'httpAuthSecurityScheme', value: { scheme: 'Bearer' } } },
      },
      securityRequirements: [{ schemes: { key: { list: [] } } }],
    });
    expect(card).toMatchObject({
      name: 'remote',
      url: 'http://r/rpc',
      version: '3',
      capabilities: { streaming: true },
      skills: [{ id: 's', name: 'S', description: 'x', tags: [] }],
      securitySchemes: {
        key: { type: 'apiKey', scheme: null, metadata: { name: 'X-API-Key', location: 'header' } },
        bearer: { type: 'http', scheme: 'bearer', metadata: { bearer_format: 'JWT' } },
      },
    });
    expect(card.securitySchemes).not.toHaveProperty('sdk');
    expect((card.metadata!.a2a as { protocolVersion: string }).protocolVersion).toBe('1.0');
    expect(a2aInterfacesOf(card.metadata!.a2a)[0]).toEqual({
      url: 'http://r/rpc',
      protocolBinding: 'JSONRPC',
      protocolVersion: '1.0',
      tenant: 'a',
    });
  });

  it('tolerates junk', () => {
    expect(fromA2AAgentCard(null)).toMatchObject({ name: '', url: '' });
    expect(a2aInterfacesOf({ supportedInterfaces: [{ url: 1 }, 'x'] })).toEqual([]);
  });
});
