import { describeTransport, type TransportHarness } from '@agent/server/testing';
import type { RuntimeTransportOptions } from './options.js';
import { RuntimeTransport } from './runtime-transport.js';

const harness: TransportHarness = {
  kind: 'memory',
  server: (options) => new RuntimeTransport(options),
  // A view of the server's agents with credentials of its own, as a network client would be.
  client: (server, options) => (server as RuntimeTransport).client(options),
  url: (server) => (server as RuntimeTransport).url,
  construct: (options) => new RuntimeTransport(options as RuntimeTransportOptions),
};

describeTransport(harness);
