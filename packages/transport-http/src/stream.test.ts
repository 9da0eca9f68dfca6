/** `POST /tasks/stream` on the wire, on both backends, and the client's side of a stream. */
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIKeyAuth } from '@agent/auth';
import {
  CLIENT_OPERATIONS,
  DeadlineExceededError,
  InternalError,
  PayloadTooLargeError,
  TaskCanceledError,
  UnavailableError,
  ValidationError,
  createTask,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { createTestAgent, rawRequest, type TestAgent } from '@agent/test-support';
import { encodeEvent } from './codec.js';
import { HTTPTransport } from './http-transport.js';

const STREAM = CLIENT_OPERATIONS.stream_task.path;

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

describe.each(['node', 'express'] as const)('POST /tasks/stream on the %s backend', (backend) => {
  let transport: HTTPTransport;
  let handler: TestAgent;

  async function serve(
    options: Partial<ConstructorParameters<typeof HTTPTransport>[0]> = {},
    announceWorking = false,
  ): Promise<void> {
    handler = createTestAgent({ announceWorking });
    transport = new HTTPTransport({ url: 'http://127.0.0.1:0', backend, ...options });
    transport.bind(handler);
    await transport.start();
  }

  afterEach(async () => {
    handler.cancelAll();
    await transport.stop();
  });

  it('answers text/event-stream frames: id, event type and the bare TaskEvent, ending with the final status', async () => {
    await serve();
    const task = createTask('stream 2');
    const response = await rawRequest(`${transport.url}${STREAM}`, { body: task });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-accel-buffering']).toBe('no');
    const frames = response.text.split('\n\n');
    expect(frames.pop()).toBe('');
    const events = frames.map((frame, index) => {
      const [id, event, data, ...rest] = frame.split('\n');
      expect(rest).toEqual([]);
      expect(id).toBe(`id: ${index + 1}`);
      const parsed = JSON.parse(data!.replace(/^data: /, '')) as TaskEvent;
      expect(event).toBe(`event: ${parsed.type}`);
      return parsed;
    });
    expect(events.map((e) => e.type)).toEqual(['task.artifact', 'task.artifact', 'task.status']);
    expect(events[2]).toMatchObject({ task_id: task.id, state: 'completed', final: true });
  });

  it('answers a refusal before the first event as a plain JSON error', async () => {
    await serve({ authenticator: new APIKeyAuth({ validKeys: { 'sk-stream-key-1': [] } }) });
    const unauthenticated = await rawRequest(`${transport.url}${STREAM}`, { body: createTask('stream 1') });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.json).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    const invalid = await rawRequest(`${transport.url}${STREAM}`, {
      body: { id: 'x', state: 'dreaming' },
      headers: { 'x-api-key': 'sk-stream-key-1' },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.json).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    expect(handler.calls).toHaveLength(0);
  });

  it('takes a client that goes away mid-stream as no cancel: the task goes on, the call is released', async () => {
    // A leaked stream call would hold stop() for the whole grace and time the test out.
    await serve({ stopGraceMs: 60_000 }, true);
    handler.holdTasks();
    const task = createTask('hold');
    await new Promise<void>((resolve) => {
      const req = request(`${transport.url}${STREAM}`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json' },
      });
      req.on('error', () => undefined);
      req.on('response', (res) => {
        res.on('error', () => undefined);
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('close', resolve);
      // The first event (`working`) arrives once the task runs.
      req.end(JSON.stringify(task));
    });
    const client = new HTTPTransport({ url: transport.url });
    try {
      const read = await client.send<Task>(CLIENT_OPERATIONS.get_task, transport.url, { task_id: task.id });
      expect(read.state).toBe('working');
      handler.release(task.id);
      const rest = await collect(client.subscribeTask(transport.url, task.id, { after: 1 }));
      expect(rest.at(-1)).toMatchObject({ type: 'task.status', state: 'completed', final: true });
    } finally {
      await client.stop();
    }
    await transport.stop();
    expect(handler.cancels).toHaveLength(0);
  });
});

// The host's stop, not the backend, gives up on the request: one backend is enough (it takes seconds).
describe('stop() with an open stream', () => {
  it('ends a stream the server gives up on during stop as UNAVAILABLE, after the events it sent', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const agent = createTestAgent({ announceWorking: false });
    const stubborn = {
      ...agent,
      handleTask: agent.handleTask.bind(agent),
      getAgentCard: agent.getAgentCard.bind(agent),
      async *handleTaskStreaming(task: Task): AsyncGenerator<TaskEvent> {
        yield { type: 'task.progress', task_id: task.id, timestamp: new Date().toISOString() };
        started();
        await new Promise<never>(() => undefined);
      },
      cancelTask: () => Promise.reject(new ValidationError('not this one')),
    };
    const server = new HTTPTransport({ url: 'http://127.0.0.1:0', stopGraceMs: 10 });
    server.bind(stubborn);
    await server.start();
    const client = new HTTPTransport({ url: server.url });
    const seen: TaskEvent[] = [];
    const run = (async () => {
      for await (const event of client.subscribe(server.url, createTask('stubborn'))) seen.push(event);
    })();
    await running;
    // The stream may end before the stop resolves (the host closes it as it gives up on it).
    const ended = expect(run).rejects.toBeInstanceOf(UnavailableError);
    await server.stop();
    await ended;
    expect(seen.map((event) => event.type)).toEqual(['task.progress']);
    await client.stop();
  });
});

describe('the client side of a stream', () => {
  let foreign: Server;
  let url: string;
  /** What the foreign server does with a stream request. */
  let answer: (res: ServerResponse) => void;

  beforeAll(async () => {
    foreign = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(res));
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    foreign.closeAllConnections();
    return new Promise<void>((resolve) => foreign.close(() => resolve()));
  });

  const clients: HTTPTransport[] = [];
  function client(options: Partial<ConstructorParameters<typeof HTTPTransport>[0]> = {}): HTTPTransport {
    const transport = new HTTPTransport({ url, ...options });
    clients.push(transport);
    return transport;
  }
  afterEach(() => Promise.all(clients.splice(0).map((c) => c.stop())));

  const working: TaskEvent = {
    type: 'task.status',
    task_id: 't1',
    state: 'working',
    final: false,
    timestamp: '2026-01-01T00:00:00Z',
  };

  function streamHead(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
  }

  it('reports a stream that ends before its final status as UNAVAILABLE', async () => {
    answer = (res) => {
      streamHead(res);
      res.end(encodeEvent(working));
    };
    const stream = collect(client().subscribe(url, createTask('x')));
    await expect(stream).rejects.toThrow(/ended before its final status/);
    await expect(stream).rejects.toBeInstanceOf(UnavailableError);
  });

  it('refuses a frame that is no TaskEvent, and one over maxResponseBytes', async () => {
    answer = (res) => {
      streamHead(res);
      res.end('data: not json\n\n');
    };
    await expect(collect(client().subscribe(url, createTask('x')))).rejects.toBeInstanceOf(InternalError);
    answer = (res) => {
      streamHead(res);
      res.end(`data: ${'x'.repeat(4096)}\n\n`);
    };
    await expect(
      collect(client({ maxResponseBytes: 1024 }).subscribe(url, createTask('x'))),
    ).rejects.toBeInstanceOf(PayloadTooLargeError);
  });

  it('refuses a 200 that is not text/event-stream', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(working));
    };
    const stream = collect(client().subscribe(url, createTask('x')));
    await expect(stream).rejects.toBeInstanceOf(InternalError);
    await expect(stream).rejects.toThrow(/not text\/event-stream/);
  });

  it('reads a stream from any event-stream server: CRLF lines, comments, split frames', async () => {
    const final = { ...working, state: 'completed' as const, final: true };
    answer = (res) => {
      streamHead(res);
      const text = `: hello\r\n\r\nevent: task.status\r\ndata: ${JSON.stringify(working)}\r\n\r\ndata: ${JSON.stringify(final)}\r\n\r\n`;
      const bytes = Buffer.from(text);
      res.write(bytes.subarray(0, 40));
      setTimeout(() => res.end(bytes.subarray(40)), 20);
    };
    await expect(collect(client().subscribe(url, createTask('x')))).resolves.toEqual([working, final]);
  });

  it('drops a final status the stream ended in the middle of, and reports UNAVAILABLE', async () => {
    const final = { ...working, state: 'completed' as const, final: true };
    answer = (res) => {
      streamHead(res);
      res.end(encodeEvent(working) + encodeEvent(final).trimEnd());
    };
    await expect(collect(client().subscribe(url, createTask('x')))).rejects.toBeInstanceOf(UnavailableError);
  });

  it('ends with TASK_CANCELED when the caller aborts mid-stream', async () => {
    answer = (res) => {
      streamHead(res);
      res.write(encodeEvent(working));
    };
    const controller = new AbortController();
    const events = client().subscribe(url, createTask('x'), { signal: controller.signal });
    const iterator = events[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual(working);
    controller.abort();
    await expect(iterator.next()).rejects.toBeInstanceOf(TaskCanceledError);
  });

  it('applies timeoutMs to the opening of the stream only', async () => {
    answer = () => undefined;
    await expect(collect(client({ timeoutMs: 50 }).subscribe(url, createTask('x')))).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    const final = { ...working, state: 'completed' as const, final: true };
    answer = (res) => {
      streamHead(res);
      res.flushHeaders();
      setTimeout(() => res.end(encodeEvent(final)), 600);
    };
    await expect(collect(client({ timeoutMs: 200 }).subscribe(url, createTask('x')))).resolves.toEqual([
      final,
    ]);
  });
});
