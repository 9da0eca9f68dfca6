/** Starts a server transport around a TestAgent and a client transport, and stops both afterwards. */
import type { Authenticator } from '@agent/auth';
import type { TaskHandler, TlsOptions } from '@agent/core';
import { SSETransport } from '../sse-transport.js';
import type { SSETransportOptions } from '../options.js';
import { TestAgent } from './test-agent.js';

export interface Harness {
  agent: TestAgent;
  server: SSETransport;
  client: SSETransport;
  /** The server's base URL with its real port. */
  url: string;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  server?: Partial<SSETransportOptions>;
  client?: Partial<SSETransportOptions>;
  handler?: TaskHandler;
  authenticator?: Authenticator;
  tls?: TlsOptions;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const agent = new TestAgent();
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
