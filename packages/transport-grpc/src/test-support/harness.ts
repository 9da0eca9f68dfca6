import { APIKeyAuth } from '@agent/auth';
import { createTask, type AgentCard, type Task } from '@agent/core';
import { createTestAgent, type TestAgent } from '@agent/test-support';
import { GRPCTransport } from '../grpc-transport.js';
import type { GRPCTransportOptions } from '../options.js';

/**
 * The shared test agent as these tests know it, after the reference server's demo agent: an echo
 * also answers with an artifact, and each streamed chunk is followed by a progress event.
 */
export function createDemoHandler(
  card: AgentCard = { name: 'demo', description: 'demo agent', url: '' },
): TestAgent {
  return createTestAgent({ card, echoArtifact: true, streamProgress: true, sleepProgress: false });
}

/** Starts servers and clients for one test file and stops all of them in `closeAll()`. */
export class Harness {
  private readonly transports: GRPCTransport[] = [];
  private readonly handlers: TestAgent[] = [];

  async server(
    options: Partial<GRPCTransportOptions> = {},
    handler = createDemoHandler(),
  ): Promise<{ server: GRPCTransport; handler: TestAgent; url: string }> {
    const server = new GRPCTransport({ url: 'grpc://127.0.0.1:0', ...options });
    server.bind(handler);
    this.transports.push(server);
    this.handlers.push(handler);
    await server.start();
    return { server, handler, url: server.url };
  }

  client(options: Partial<GRPCTransportOptions> = {}): GRPCTransport {
    // A client certificate needs the secure scheme, as on the server.
    const url = options.tls ? 'grpcs://127.0.0.1:0' : 'grpc://127.0.0.1:0';
    const client = new GRPCTransport({ url, ...options });
    this.transports.push(client);
    return client;
  }

  async closeAll(): Promise<void> {
    for (const handler of this.handlers.splice(0)) handler.cancelAll();
    await Promise.all(this.transports.splice(0).map((transport) => transport.stop()));
  }
}

export const API_KEY = 'test-key-0123456789';
export const apiKeyAuth = (): APIKeyAuth => new APIKeyAuth({ validKeys: { [API_KEY]: ['tasks'] } });

export function task(text: string): Task {
  return createTask(text);
}
