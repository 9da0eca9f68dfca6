import { request } from 'node:http';
import type { Transport } from '@agent/core';
import { describeTransport, type TransportHarness } from '@agent/server/testing';
import { HTTPTransport } from './http-transport.js';
import type { BackendName, HTTPTransportOptions } from './options.js';

/** GETs `url` and resolves with the `status` field of its JSON body. */
function statusField(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        try {
          resolve(String((JSON.parse(text) as { status?: unknown }).status));
        } catch (error) {
          reject(error as Error);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function harness(backend: BackendName): TransportHarness {
  const http = (transport: Transport): HTTPTransport => transport as HTTPTransport;
  return {
    kind: 'http',
    server: (options) => new HTTPTransport({ url: 'http://127.0.0.1:0', backend, ...options }),
    client: (server, options) => new HTTPTransport({ url: http(server).url, backend, ...options }),
    url: (server) => http(server).url,
    construct: (options) =>
      new HTTPTransport({ url: 'http://127.0.0.1:0', backend, ...options } as HTTPTransportOptions),
    urlFor: (host) => `http://${host}:0`,
    readiness: (server) => statusField(`${http(server).url}/readyz`),
    rawPostUrl: (server) => `${http(server).url}/tasks/`,
  };
}

describe.each(['node', 'express'] as const)('backend %s', (backend) => {
  describeTransport(harness(backend));
});
