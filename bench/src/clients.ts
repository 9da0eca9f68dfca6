/** A transport's own client for each wire, pointed at a server child: what an application would use. */
import type { Transport } from '@agent/core';
import { GRPCTransport } from '@agent/transport-grpc';
import { HTTPTransport } from '@agent/transport-http';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import type { ServerUrls } from './child.js';

export type Wire = 'http' | 'sse' | 'ws' | 'grpc';

export const WIRE_NAMES: Record<Wire, string> = {
  http: 'HTTP',
  sse: 'SSE JSON-RPC',
  ws: 'WebSocket',
  grpc: 'gRPC',
};

export function clientFor(wire: Wire, urls: ServerUrls): { transport: Transport; url: string } {
  const url = wire === 'http' ? urls.http : urls[wire];
  if (!url) throw new Error(`the server announced no ${wire} URL`);
  switch (wire) {
    case 'http':
      return { transport: new HTTPTransport({ url }), url };
    case 'sse':
      return { transport: new SSETransport({ url }), url };
    case 'ws':
      return { transport: new WebSocketTransport({ url }), url };
    case 'grpc':
      return { transport: new GRPCTransport({ url }), url };
  }
}
