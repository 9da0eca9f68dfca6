/** Starts a server transport around the shared test agent and a client transport, and stops both afterwards. */
import type { Authenticator } from '@agent/auth';
import type { TaskHandler, TlsOptions } from '@agent/core';
import { createTestAgent, type TestAgent } from '@agent/test-support';
import { SSETransport } from '../sse-transport.js';
import type { SSETransportOptions } from '../options.js';

export interface Harness {
  agent: TestAgent;
  server: SSETransport;
  client: SSETransport;
  /** The server's base URL with its real port. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The shared test agent as these tests know it: each task runs on its own, independent of who
 * watches it, so a stream consumer that goes away does not stop the task.
 */
export function createSseTestAgent(): TestAgent {
  return createTestAgent({
    card: { name: 'test-agent', description: 'answers the SSE tests', url: '' },
    detached: true,
    announceWorking: false,
    unknown: 'complete',
  });
}

export interface HarnessOptions {
  server?: Partial<SSETransportOptions>;
  client?: Partial<SSETransportOptions>;
  handler?: TaskHandler;
  authenticator?: Authenticator;
  tls?: TlsOptions;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const agent = createSseTestAgent();
  const scheme = options.tls ? 'https' : 'http';
  const server = new SSETransport({
    url: `${scheme}://127.0.0.1:0`,
    stopGraceMs: 1000,
    ...(options.authenticator ? { authenticator: options.authenticator } : {}),
    ...(options.tls ? { tls: options.tls } : {}),
    ...options.server,
  });
  server.bind(options.handler ?? agent);
  await server.start();
  const client = new SSETransport({ url: server.url, ...options.client });
  return {
    agent,
    server,
    client,
    url: server.url,
    async stop() {
      await client.stop();
      await server.stop();
    },
  };
}
