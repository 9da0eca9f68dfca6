import type { Transport } from '@agent/core';
import { describeTransport, type TransportHarness } from '@agent/server/testing';
import { rawRequest } from '@agent/test-support';
import { SSETransport } from './sse-transport.js';

function base(server: Transport): string {
  return (server as SSETransport).url.replace(/\/+$/, '');
}

const harness: TransportHarness = {
  kind: 'sse',
  server: (options) => new SSETransport({ url: 'http://127.0.0.1:0', ...options }),
  client: (server, options) => new SSETransport({ url: base(server), ...options }),
  url: base,
  construct: (options) => new SSETransport({ url: 'http://127.0.0.1:0', ...options }),
  urlFor: (host) => `http://${host.includes(':') ? `[${host}]` : host}:0`,
  async readiness(server) {
    const res = await rawRequest(`${base(server)}/readyz`, { method: 'GET' });
    return (res.json as { status: string }).status;
  },
  rawPostUrl: (server) => `${base(server)}/rpc`,
};

describeTransport(harness);
