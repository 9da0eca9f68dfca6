import { request } from 'node:http';
import type { Transport } from '@agent/core';
import { describeTransport, type TransportHarness } from '@agent/server/testing';
import { WebSocketTransport } from './websocket-transport.js';

/** GET `/readyz` on the http form of the server's URL; the JSON body's `status`. */
function readiness(server: Transport): Promise<string> {
  const url = new URL(
    `${(server as WebSocketTransport).url.replace(/^ws/, 'http').replace(/\/$/, '')}/readyz`,
  );
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        try {
          resolve((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { status: string }).status);
        } catch (error) {
          reject(error as Error);
        }
      });
    })
      .on('error', reject)
      .end();
  });
}

const harness: TransportHarness = {
  kind: 'ws',
  server: (options) => new WebSocketTransport({ url: 'ws://127.0.0.1:0', pingIntervalMs: 0, ...options }),
  client: (_server, options) =>
    new WebSocketTransport({ url: 'ws://127.0.0.1:0', pingIntervalMs: 0, ...options }),
  url: (server) => (server as WebSocketTransport).url,
  construct: (options) => new WebSocketTransport({ url: 'ws://127.0.0.1:0', ...options }),
  urlFor: (host) => `ws://${host.includes(':') ? `[${host}]` : host}:0`,
  readiness,
};

describeTransport(harness);
