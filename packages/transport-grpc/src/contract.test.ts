import type { Transport } from '@agent/core';
import { describeTransport, type TransportHarness } from '@agent/server/testing';
import { checkHealth } from './health-check.js';
import { GRPCTransport } from './grpc-transport.js';
import type { GRPCTransportOptions } from './options.js';

const READINESS: Record<string, string> = { SERVING: 'ready', NOT_SERVING: 'stopping' };

/** The standard grpc.health.v1 Check of the whole server, in the suite's readiness words. */
async function readiness(server: Transport): Promise<string> {
  const status = await checkHealth((server as GRPCTransport).url);
  return READINESS[status] ?? status;
}

const harness: TransportHarness = {
  kind: 'grpc',
  server: (options) => new GRPCTransport({ url: 'grpc://127.0.0.1:0', health: true, ...options }),
  client: (_server, options) => new GRPCTransport({ url: 'grpc://127.0.0.1:0', ...options }),
  url: (server) => (server as GRPCTransport).url,
  construct: (options) =>
    new GRPCTransport({ url: 'grpc://127.0.0.1:0', ...options } as unknown as GRPCTransportOptions),
  urlFor: (host) => `grpc://${host}:0`,
  readiness,
};

describeTransport(harness);
