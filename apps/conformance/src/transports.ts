import type { Authenticator } from '@agent/auth';
import type { Transport } from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import { GRPCTransport } from '@agent/transport-grpc';
import { RuntimeTransport, type RegistrableAgent } from '@agent/transport-memory';
import type { TransportName } from './context.js';

/** An in-process target for `--transport memory`: the agent and the server-side authenticator. */
export interface InProcessTarget {
  agent: RegistrableAgent;
  authenticator?: Authenticator;
}

export interface ClientTransportOptions {
  transport: TransportName;
  url: string;
  /** Client-side authenticator deciding the header scheme, and the raw credential. */
  authenticator?: Authenticator;
  credentials?: string;
  inProcess?: InProcessTarget;
  timeoutMs?: number;
}

/** Builds the client side of one transport; the caller stops it when done. */
export function createClientTransport(options: ClientTransportOptions): Transport {
  const { url, authenticator, credentials, timeoutMs } = options;
  const auth = authenticator && credentials !== undefined ? { authenticator, credentials } : {};
  switch (options.transport) {
    case 'http':
      return new HTTPTransport({ url, timeoutMs, ...auth });
    case 'sse':
      return new SSETransport({ url, timeoutMs, ...auth });
    case 'ws':
      return new WebSocketTransport({ url, timeoutMs, ...auth });
    case 'grpc':
      return new GRPCTransport({ url, timeoutMs, ...auth });
    case 'memory': {
      const target = options.inProcess;
      if (!target) throw new Error('--transport memory runs against an in-process agent');
      // Server-side checks use the server's authenticator, exactly as on the wire.
      const transport = new RuntimeTransport({
        authenticator: target.authenticator,
        ...(credentials !== undefined ? { credentials } : {}),
      });
      transport.registerAgent(target.agent, { name: 'conformance', url });
      return transport;
    }
  }
}
