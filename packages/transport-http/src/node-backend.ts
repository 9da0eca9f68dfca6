import { NodeHost } from '@agent/server/node';
import type { BackendOptions, HttpBackend, HttpEndpoint } from './backend.js';
import { EndpointRouter, serveRoute } from './router.js';

/**
 * The default backend: the route table straight on `NodeHost` (node:http/node:https). Per request it
 * does one map lookup (and for a path with `{name}` segments one segment comparison per such path
 * after it), at most one body read and one `JSON.stringify`; no middleware chain.
 */
export class NodeBackend implements HttpBackend {
  private routes = new EndpointRouter([]);
  private readonly host: NodeHost;

  constructor(options: BackendOptions) {
    const { maxBodyBytes } = options;
    this.host = new NodeHost({
      tls: options.tls,
      basePath: options.basePath,
      state: options.state,
      cors: options.cors,
      onRequest: (req, res, scope) => serveRoute(this.routes, maxBodyBytes, req, res, scope),
    });
  }

  setupRoutes(endpoints: readonly HttpEndpoint[]): void {
    this.routes = new EndpointRouter(endpoints);
  }

  start(host: string, port: number): Promise<number> {
    return this.host.start(host, port);
  }

  stop(): Promise<void> {
    return this.host.close();
  }
}
