/**
 * A client of an HTTP-based wire reads an HTTP `Retry-After` into `data.retry_after_ms` when the
 * error body does not carry one (a proxy's bare 503 or 429), for unary calls and streams alike.
 * Runs under jest against a raw node:http server on 127.0.0.1 port 0 standing in for a proxy.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AgentError,
  CLIENT_OPERATIONS,
  ResourceExhaustedError,
  UnavailableError,
  createTask,
  type TaskEvent,
  type Transport,
} from '@agent/core';

export interface RetryAfterHarness {
  /** A client-only transport. */
  client(): Transport;
  /** A unary call the wire sends to `url` (the 429 case). */
  call(client: Transport, url: string): Promise<unknown>;
  /** The client's errors carry the HTTP `status` they came with. */
  keepsStatus?: boolean;
}

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

/** A raw node:http server standing in for a proxy in front of an agent. */
async function rawServer(answer: Answer): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const proxy503: Answer = (_req, res) => {
  res.writeHead(503, { 'content-type': 'text/html', 'retry-after': '2' }).end('<h1>Service Unavailable</h1>');
};

async function failure(call: Promise<unknown>): Promise<AgentError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgentError);
  return error as AgentError;
}

async function drain(events: AsyncIterable<TaskEvent>): Promise<void> {
  for await (const _event of events) void _event;
}

export function describeRetryAfterHeader(name: string, harness: RetryAfterHarness): void {
  describe(`${name}: Retry-After`, () => {
    const client = harness.client();
    afterAll(() => client.stop());

    it('a bare 503 with Retry-After: 2 is UNAVAILABLE with data.retry_after_ms 2000 (unary and stream)', async () => {
      const server = await rawServer(proxy503);
      try {
        const unary = await failure(client.send(CLIENT_OPERATIONS.send_task, server.url, createTask('x')));
        expect(unary).toBeInstanceOf(UnavailableError);
        expect(unary.data).toEqual({ retry_after_ms: 2000 });
        if (harness.keepsStatus) expect((unary as AgentError & { status: number }).status).toBe(503);
        const stream = await failure(drain(client.subscribe(server.url, createTask('x'))));
        expect(stream).toBeInstanceOf(UnavailableError);
        expect(stream.data).toEqual({ retry_after_ms: 2000 });
      } finally {
        await server.close();
      }
    });

    it('reads an HTTP-date on a bare 429', async () => {
      const at = new Date(Date.now() + 60_000).toUTCString();
      const server = await rawServer((_req, res) => {
        res.writeHead(429, { 'retry-after': at }).end();
      });
      try {
        const error = await failure(harness.call(client, server.url));
        expect(error).toBeInstanceOf(ResourceExhaustedError);
        const ms = (error.data as { retry_after_ms: number }).retry_after_ms;
        expect(ms).toBeGreaterThan(0);
        expect(ms).toBeLessThanOrEqual(60_000);
      } finally {
        await server.close();
      }
    });

    it("keeps the body's own retry_after_ms and the rest of its data", async () => {
      const server = await rawServer((_req, res) => {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '30' }).end(
          JSON.stringify({
            error: { code: 'UNAVAILABLE', message: 'busy', data: { retry_after_ms: 1500, limit: 'tasks' } },
          }),
        );
      });
      try {
        const error = await failure(client.send(CLIENT_OPERATIONS.get_card, server.url));
        expect(error.data).toEqual({ retry_after_ms: 1500, limit: 'tasks' });
      } finally {
        await server.close();
      }
    });

    it('adds the header to a body of ours that gave no hint; without the header, nothing', async () => {
      const server = await rawServer((req, res) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (req.url?.startsWith('/without') !== true) headers['retry-after'] = '1';
        res
          .writeHead(503, headers)
          .end(JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'down', data: { region: 'eu' } } }));
      });
      try {
        const withHeader = await failure(client.send(CLIENT_OPERATIONS.get_card, server.url));
        expect(withHeader.data).toEqual({ region: 'eu', retry_after_ms: 1000 });
        const without = await failure(client.send(CLIENT_OPERATIONS.get_card, `${server.url}/without`));
        expect(without.data).toEqual({ region: 'eu' });
      } finally {
        await server.close();
      }
    });
  });
}
