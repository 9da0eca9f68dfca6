/**
 * A2ATransport against a scripted server, for what a well-behaved server never does: errors before
 * and inside a stream, a response to another request, oversized answers, odd cards.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIKeyAuth } from '@agent/auth';
import { CLIENT_OPERATIONS, createTask, ValueError, type TaskEvent } from '@agent/core';
import { A2ATransport } from './a2a-transport.js';
import { RemoteTaskIds } from './remote-task-ids.js';

type Handler = (body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse) => void;

let server: Server | undefined;
let transport: A2ATransport | undefined;

afterEach(async () => {
  await transport?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  transport = undefined;
});

/** A server whose card names one JSON-RPC interface at /rpc; `rpc` answers the calls. */
async function scripted(rpc: Handler, card: Record<string, unknown> = {}): Promise<string> {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/.well-known/agent-card.json') {
        const url = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            name: 'scripted',
            supportedInterfaces: [{ url: `${url}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
            ...card,
          }),
        );
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      rpc(text ? (JSON.parse(text) as Record<string, unknown>) : {}, req, res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function json(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function sse(res: ServerResponse, frames: string[], end = true): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const frame of frames) res.write(frame);
  if (end) res.end();
}

const TASK = { id: 'srv-1', contextId: 'ctx', status: { state: 'TASK_STATE_WORKING' } };

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const out: TaskEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('A2ATransport options and lifecycle', () => {
  it('refuses unknown option names and bad values with ValueError', () => {
    expect(() => new A2ATransport({ url: 'http://x' } as never)).toThrow(
      /A2ATransport does not accept the option "url"; accepted: authenticator, bindings, credentials/,
    );
    expect(() => new A2ATransport({ bindings: ['GRPC'] } as never)).toThrow(ValueError);
    expect(() => new A2ATransport({ tenant: '' })).toThrow(ValueError);
    expect(() => new A2ATransport({ timeoutMs: -1 })).toThrow(ValueError);
    expect(() => new A2ATransport({ credentials: 'k' })).toThrow(/credentials need an authenticator/);
  });

  it('is client-only', async () => {
    const t = new A2ATransport();
    await expect(t.start()).rejects.toMatchObject({ code: 'UNSUPPORTED_OPERATION' });
    expect(() => t.bind()).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_OPERATION' }));
    expect(() => t.onTaskReceived()).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_OPERATION' }));
    expect(t.validateUrl()).toBe(false);
    expect(t.timeoutMs).toBe(30_000);
    await t.stop();
    await t.stop();
  });

  it('describes itself for client.sync', () => {
    const t = new A2ATransport({
      authenticator: new APIKeyAuth({ validKeys: { k: [] } }),
      credentials: 'k',
      tenant: 't',
      bindings: ['HTTP+JSON'],
      timeoutMs: 5,
    });
    expect(t.describe()).toEqual({
      $component: {
        module: '@agent/a2a',
        exportName: 'A2ATransport',
        options: {
          timeoutMs: 5,
          maxResponseBytes: 4 * 1024 * 1024,
          tenant: 't',
          bindings: ['HTTP+JSON'],
          credentials: 'k',
          authenticator: expect.objectContaining({
            $component: expect.objectContaining({ exportName: 'APIKeyAuth' }),
          }),
        },
      },
    });
  });

  it('keeps streaming operations out of send()', async () => {
    const t = (transport = new A2ATransport());
    await expect(t.send(CLIENT_OPERATIONS.stream_task, 'http://127.0.0.1:1')).rejects.toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
    });
    await expect(
      t.send({ name: 'nope', method: 'GET', path: '/' }, 'http://127.0.0.1:1'),
    ).rejects.toMatchObject({
      code: 'METHOD_NOT_FOUND',
    });
  });
});

describe('A2ATransport against a scripted server', () => {
  it('refuses a response to another request id', async () => {
    const url = await scripted((body, _req, res) =>
      json(res, { jsonrpc: '2.0', id: 999, result: { task: TASK } }),
    );
    transport = new A2ATransport();
    await expect(transport.send(CLIENT_OPERATIONS.send_task, url, createTask('x'))).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringContaining('id 999'),
    });
  });

  it('keeps the code and message of an error it has no class for', async () => {
    const url = await scripted((body, _req, res) =>
      json(res, { jsonrpc: '2.0', id: body.id, error: { code: -32099, message: 'odd failure' } }),
    );
    transport = new A2ATransport();
    const error = await transport
      .send(CLIENT_OPERATIONS.get_task, url, { task_id: 'x' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INTERNAL', message: 'odd failure', data: { a2a_code: -32099 } });
  });

  it('reads a refusal that arrives as JSON instead of a stream', async () => {
    const url = await scripted((body, _req, res) =>
      json(res, {
        jsonrpc: '2.0',
        id: body.id,
        error: {
          code: -32004,
          message: 'no streaming here',
          data: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'UNSUPPORTED_OPERATION',
              domain: 'a2a-protocol.org',
            },
          ],
        },
      }),
    );
    transport = new A2ATransport();
    await expect(collect(transport.subscribe(url, createTask('x')))).rejects.toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
      message: 'no streaming here',
    });
  });

  it('ends a stream broken by an error frame as failed, carrying that error', async () => {
    const url = await scripted((body, _req, res) =>
      sse(res, [
        `data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { task: TASK } })}\n\n`,
        `event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: -32001, message: 'gone' } })}\n\n`,
      ]),
    );
    transport = new A2ATransport();
    const events = await collect(transport.subscribe(url, createTask('x')));
    expect(events.map((e) => e.type)).toEqual(['task.status', 'task.error', 'task.status']);
    expect(events.at(-1)).toMatchObject({
      state: 'failed',
      final: true,
      task: { id: 'srv-1', metadata: { error: { code: 'TASK_NOT_FOUND', message: 'gone' } } },
    });
  });

  it('parses frames split anywhere, and stops reading after the final status', async () => {
    const url = await scripted((body, _req, res) => {
      const frame = (result: unknown): string =>
        `data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result })}\r\n\r\n`;
      const text =
        ': keep-alive\n\n' +
        frame({ task: TASK }) +
        frame({
          statusUpdate: { taskId: 'srv-1', contextId: 'ctx', status: { state: 'TASK_STATE_COMPLETED' } },
        });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < text.length; i += 7) res.write(text.slice(i, i + 7));
      // Never ends: the client must stop at the final status by itself.
    });
    transport = new A2ATransport();
    const events = await collect(transport.subscribe(url, createTask('x')));
    expect(events.map((e) => (e.type === 'task.status' ? [e.state, e.final] : e.type))).toEqual([
      ['working', false],
      ['completed', true],
    ]);
  });

  it('continues only the tasks the server minted', async () => {
    const seen: unknown[] = [];
    const url = await scripted((body, _req, res) => {
      seen.push((body.params as { message: { taskId?: string } }).message.taskId);
      json(res, { jsonrpc: '2.0', id: body.id, result: { task: TASK } });
    });
    transport = new A2ATransport();
    const task = await transport.send<{ id: string }>(CLIENT_OPERATIONS.send_task, url, createTask('a'));
    await transport.send(CLIENT_OPERATIONS.send_task, url, createTask('b', { id: task.id }));
    await transport.send(CLIENT_OPERATIONS.send_task, url, createTask('c', { id: 'client-chosen' }));
    expect(seen).toEqual([undefined, 'srv-1', undefined]);
  });

  it('sends the session as contextId and the cancel reason as metadata', async () => {
    const params: unknown[] = [];
    const url = await scripted((body, _req, res) => {
      params.push(body.params);
      json(res, {
        jsonrpc: '2.0',
        id: body.id,
        result: body.method === 'CancelTask' ? TASK : { task: TASK },
      });
    });
    transport = new A2ATransport();
    await transport.send(
      CLIENT_OPERATIONS.send_task,
      url,
      createTask('a', { metadata: { session_id: 's-1' } }),
    );
    await transport.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: 'srv-1', reason: 'stop' });
    expect(params[0]).toMatchObject({ message: { contextId: 's-1', role: 'ROLE_USER' } });
    expect(params[0]).not.toHaveProperty('tenant');
    expect(params[1]).toEqual({ id: 'srv-1', metadata: { reason: 'stop' } });
  });

  it('refuses an answer over maxResponseBytes, and a call past its deadline', async () => {
    const url = await scripted((body, _req, res) => {
      if (body.method === 'GetTask')
        setTimeout(() => json(res, { jsonrpc: '2.0', id: body.id, result: TASK }), 500);
      else
        json(res, {
          jsonrpc: '2.0',
          id: body.id,
          result: { task: { ...TASK, metadata: { pad: 'x'.repeat(5000) } } },
        });
    });
    transport = new A2ATransport({ maxResponseBytes: 2000, timeoutMs: 100 });
    await expect(transport.send(CLIENT_OPERATIONS.send_task, url, createTask('a'))).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
    await expect(transport.send(CLIENT_OPERATIONS.get_task, url, { task_id: 'srv-1' })).rejects.toMatchObject(
      {
        code: 'DEADLINE_EXCEEDED',
      },
    );
  });

  it('is UNAVAILABLE when nobody listens', async () => {
    transport = new A2ATransport();
    await expect(transport.send(CLIENT_OPERATIONS.get_card, 'http://127.0.0.1:1')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
  });
});

describe('RemoteTaskIds', () => {
  it('forgets the oldest id past its bound, per server', () => {
    const ids = new RemoteTaskIds(2);
    ids.remember('http://a/', '1');
    ids.remember('http://a', '2');
    ids.remember('http://a', '1');
    ids.remember('http://a', '3');
    expect(['1', '2', '3'].map((id) => ids.has('http://a', id))).toEqual([true, false, true]);
    expect(ids.has('http://b', '1')).toBe(false);
  });
});
