import type { Transport } from '@agent/core';
import { describeTransport, type TransportHarness } from '@agent/server/testing';
import { credentials, makeGenericClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { GRPCTransport } from './grpc-transport.js';
import type { GRPCTransportOptions } from './options.js';

const HealthClient = makeGenericClientConstructor(
  healthService as unknown as ServiceDefinition,
  'grpc.health.v1.Health',
);

type HealthCheck = (
  request: { service: string },
  callback: (error: Error | null, response?: { status?: unknown }) => void,
) => void;

const READINESS: Record<string, string> = { SERVING: 'ready', NOT_SERVING: 'stopping' };

/** The standard grpc.health.v1 Check of the whole server, in the suite's readiness words. */
async function readiness(server: Transport): Promise<string> {
  const client = new HealthClient(
    `127.0.0.1:${(server as GRPCTransport).port}`,
    credentials.createInsecure(),
  );
  try {
    const check = (client as unknown as { Check: HealthCheck }).Check.bind(client);
    const status = await new Promise<string>((resolve, reject) =>
      check({ service: '' }, (error, response) =>
        error ? reject(error) : resolve(String(response?.status)),
      ),
    );
    return READINESS[status] ?? status;
  } finally {
    client.close();
  }
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
