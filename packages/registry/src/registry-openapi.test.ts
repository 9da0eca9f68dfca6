import { APIKeyAuth } from '@agent/auth';
import { HTTPTransport } from '@agent/transport-http';
import { REGISTRY_OPERATIONS } from './operations.js';
import { Registry } from './registry.js';

describe('the registry in the OpenAPI document', () => {
  it('describes its six routes, each on its own path and method, none left undocumented', async () => {
    const registry = new Registry();
    const transport = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      authenticator: new APIKeyAuth({ validKeys: { 'sk-registry-0123456789': [] } }),
      routes: [registry],
    });
    transport.onTaskReceived(async (task) => task);
    await transport.start();
    try {
      const { paths, components } = transport.openapiDocument();
      for (const spec of Object.values(REGISTRY_OPERATIONS)) {
        const operation = paths[spec.path]?.[spec.method.toLowerCase() as 'get'];
        expect(operation?.operationId).toBe(spec.name);
        expect(operation?.['x-undocumented']).toBeUndefined();
      }
      expect(Object.keys(components.schemas)).toEqual(
        expect.arrayContaining(['RegistryCard', 'RegistryEntry']),
      );
      expect(Object.keys(paths[REGISTRY_OPERATIONS.register.path]!.post!.responses)).toEqual(
        expect.arrayContaining(['201', '409', '429', '422']),
      );
    } finally {
      await transport.stop();
      await registry.close();
    }
  });
});
