import { once } from 'node:events';
import { createServer } from 'node:net';
import {
  BudgetExceededError,
  ResourceExhaustedError,
  TaskCanceledError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnavailableError,
  ValueError,
  createTask,
  type TaskEvent,
} from '@agent/core';
import { sleep } from '@agent/core/internal';
import { HTTPTransport } from '@agent/transport-http';
import { AgentClient, type AgentClientOptions } from './agent-client.js';
import { setRetryRuntime } from './retry-runtime.js';
import {
  ScriptedServer,
  drop,
  error,
  events,
  json,
  statusEvent,
  taskNamed,
} from './test-support/scripted-server.js';

const CARD = { name: 'scripted', description: 'a scripted agent', url: 'http://127.0.0.1' };
const unavailable = error(503, 'UNAVAILABLE');
const rateLimited = error(429, 'RESOURCE_EXHAUSTED');

async function collect(stream: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of stream) all.push(event);
  return all;
}

describe('AgentClient retries against a real HTTP server', () => {
  let server: ScriptedServer;
  let transport: HTTPTransport;
  /** The backoff waits the client asked for, in order. */
  let delays: number[];
  /** Called as each backoff wait starts, with its signal. */
  let onSleep: (signal: AbortSignal | undefined) => void;

  /** A client whose waits are recorded and end at once; jitter always draws the middle. */
  function clientWith(options: Partial<AgentClientOptions> = {}): AgentClient {
    const client = new AgentClient({ transport, baseUrl: server.url, ...options });
    setRetryRuntime(client, {
      random: () => 0.5,
      sleep: (ms, signal) => {
        delays.push(ms);
        onSleep(signal);
        return signal?.aborted ? Promise.reject(signal.reason as Error) : Promise.resolve();
      },
    });
    return client;
  }

  beforeEach(async () => {
    server = await new ScriptedServer().start();
    transport = new HTTPTransport({ url: server.url });
    delays = [];
    onSleep = () => undefined;
  });

  afterEach(async () => {
    await transport.stop();
    await server.stop();
  });

  it('getTask, listTasks and getAgentCard succeed after transient failures, backing off with jitter', async () => {
    server
      .on('GET /tasks/t1', unavailable, rateLimited, json(200, taskNamed('t1')))
      .on('GET /tasks', unavailable, json(200, { tasks: [taskNamed('t1')], next_page_token: '' }))
      .on('GET /.well-known/agent.json', rateLimited, json(200, CARD));
    const client = clientWith();
    expect((await client.getTask('t1')).id).toBe('t1');
    expect((await client.listTasks()).tasks).toHaveLength(1);
    expect((await client.getAgentCard()).name).toBe('scripted');
    expect(server.attempts('GET /tasks/t1')).toBe(3);
    expect(server.attempts('GET /tasks')).toBe(2);
    expect(server.attempts('GET /.well-known/agent.json')).toBe(2);
    // Full jitter with random() = 0.5: half of 100·2^0, half of 100·2^1; each call starts again.
    expect(delays).toEqual([50, 100, 50, 50]);
  });

  it('backoff grows exponentially up to maxDelayMs', async () => {
    server.on('GET /tasks/t1', unavailable);
    const client = clientWith({ retry: { maxAttempts: 6, baseDelayMs: 100, maxDelayMs: 500 } });
    await expect(client.getTask('t1')).rejects.toBeInstanceOf(UnavailableError);
    expect(server.attempts('GET /tasks/t1')).toBe(6);
    expect(delays).toEqual([50, 100, 200, 250, 250]);
  });

  it('stops at maxAttempts and rejects with the last error', async () => {
    server.on('GET /tasks/t1', unavailable, unavailable, rateLimited, json(200, taskNamed('t1')));
    const client = clientWith();
    await expect(client.getTask('t1')).rejects.toBeInstanceOf(ResourceExhaustedError);
    expect(server.attempts('GET /tasks/t1')).toBe(3);
  });

  it('a refused connection is UNAVAILABLE and retried', async () => {
    const port = await closedPort();
    const client = clientWith({ baseUrl: `http://127.0.0.1:${port}` });
    const failure = client.getAgentCard();
    await expect(failure).rejects.toBeInstanceOf(UnavailableError);
    await expect(failure).rejects.toMatchObject({ data: { code: 'ECONNREFUSED' } });
    expect(delays).toHaveLength(2);
  });

  it('never retries BUDGET_EXCEEDED (429 too) nor errors that are not transient', async () => {
    server
      .on('POST /tasks/', error(429, 'BUDGET_EXCEEDED'), json(200, taskNamed('t1')))
      .on('GET /tasks/t1', error(404, 'TASK_NOT_FOUND'), json(200, taskNamed('t1')))
      .on('GET /tasks', error(500, 'INTERNAL'), json(200, { tasks: [], next_page_token: '' }));
    const client = clientWith();
    await expect(client.sendTask(createTask('x', { id: 't1' }))).rejects.toBeInstanceOf(BudgetExceededError);
    await expect(client.getTask('t1')).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(client.listTasks()).rejects.toMatchObject({ code: 'INTERNAL' });
    expect(server.attempts('POST /tasks/')).toBe(1);
    expect(server.attempts('GET /tasks/t1')).toBe(1);
    expect(server.attempts('GET /tasks')).toBe(1);
    expect(delays).toEqual([]);
  });

  it('sendTask resubmits the same task id after a transient failure', async () => {
    server.on('POST /tasks/', unavailable, drop, json(200, taskNamed('t-send')));
    const client = clientWith();
    const done = await client.sendTask(createTask('hello', { id: 't-send' }));
    expect(done.state).toBe('completed');
    const sent = server.seen.filter((request) => request.route === 'POST /tasks/');
    expect(sent).toHaveLength(3);
    expect(sent.map((request) => (JSON.parse(request.body) as { id: string }).id)).toEqual([
      't-send',
      't-send',
      't-send',
    ]);
  });

  it('sendTask of a task without an id is sent once', async () => {
    server.on('POST /tasks/', unavailable, json(200, taskNamed('t1')));
    const client = clientWith();
    const { id: _id, ...anonymous } = createTask('x');
    await expect(client.sendTask(anonymous as never)).rejects.toBeInstanceOf(UnavailableError);
    expect(server.attempts('POST /tasks/')).toBe(1);
  });

  it('sends once over a transport whose agent mints its own ids (a resend could run the task twice)', async () => {
    server.on('POST /tasks/', unavailable, json(200, taskNamed('t-mint')));
    const minting = Object.assign(Object.create(transport) as HTTPTransport, {
      resubmissionIsIdempotent: false,
    });
    const client = new AgentClient({ transport: minting, baseUrl: server.url });
    await expect(client.sendTask(createTask('x', { id: 't-mint' }))).rejects.toBeInstanceOf(UnavailableError);
    expect(server.attempts('POST /tasks/')).toBe(1);
    // Reads stay retried on it.
    server.on('GET /tasks/t-mint', unavailable, json(200, taskNamed('t-mint')));
    setRetryRuntime(client, { random: () => 0.5, sleep: () => Promise.resolve() });
    expect((await client.getTask('t-mint')).id).toBe('t-mint');
  });

  it("sends the call's traceparent with every attempt", async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    server.on('GET /tasks/t-trace', unavailable, json(200, taskNamed('t-trace')));
    server.on('POST /tasks/', json(200, taskNamed('t-trace')));
    const client = clientWith();
    await client.getTask('t-trace', { traceparent });
    await client.sendTask(createTask('x', { id: 't-trace' }), { traceparent });
    expect(server.seen.map((request) => request.traceparent)).toEqual([
      traceparent,
      traceparent,
      traceparent,
    ]);
    await expect(client.getTask('t-trace', { traceparent: 5 as never })).rejects.toThrow(ValueError);
  });

  it('retry: false turns retries off for one call; a call object turns them on for a client without', async () => {
    server.on('GET /tasks/t1', unavailable, json(200, taskNamed('t1')));
    const client = clientWith();
    await expect(client.getTask('t1', { retry: false })).rejects.toBeInstanceOf(UnavailableError);
    expect(server.attempts('GET /tasks/t1')).toBe(1);

    server.on('GET /tasks/t1', unavailable, json(200, taskNamed('t1')));
    const quiet = clientWith({ retry: false });
    await expect(quiet.getTask('t1')).rejects.toBeInstanceOf(UnavailableError);
    server.on('GET /tasks/t1', unavailable, json(200, taskNamed('t1')));
    expect((await quiet.getTask('t1', { retry: { baseDelayMs: 10 } })).id).toBe('t1');
    expect(server.attempts('GET /tasks/t1')).toBe(4);
    expect(delays).toEqual([5]);
  });

  it('a call replaces the fields it names and keeps the client’s others', async () => {
    server.on('GET /tasks/t1', unavailable);
    const client = clientWith({ retry: { maxAttempts: 2, baseDelayMs: 40 } });
    await expect(client.getTask('t1', { retry: { maxAttempts: 4 } })).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(server.attempts('GET /tasks/t1')).toBe(4);
    expect(delays).toEqual([20, 40, 80]);
    delays = [];
    await expect(client.getTask('t1', { retry: { retryOn: ['INTERNAL'] } })).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(server.attempts('GET /tasks/t1')).toBe(5);
  });

  it('honours the server’s retry_after_ms, and gives up when it asks for more than maxDelayMs', async () => {
    server.on(
      'GET /tasks/t1',
      error(503, 'UNAVAILABLE', { retry_after_ms: 1234 }),
      error(429, 'RESOURCE_EXHAUSTED', { retry_after_ms: 0 }),
      json(200, taskNamed('t1')),
    );
    const client = clientWith();
    expect((await client.getTask('t1')).id).toBe('t1');
    expect(delays).toEqual([1234, 0]);

    delays = [];
    server.on(
      'GET /tasks/t1',
      error(503, 'UNAVAILABLE', { retry_after_ms: 60_000 }),
      json(200, taskNamed('t1')),
    );
    await expect(client.getTask('t1')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      data: { retry_after_ms: 60_000 },
    });
    expect(server.attempts('GET /tasks/t1')).toBe(4);
    expect(delays).toEqual([]);
  });

  it('a deadline shorter than the backoff stops retrying and rejects with the last error', async () => {
    server.on('GET /tasks/t1', unavailable, json(200, taskNamed('t1')));
    const client = clientWith({ retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    await expect(client.getTask('t1', { timeoutMs: 5_000 })).rejects.toBeInstanceOf(UnavailableError);
    expect(server.attempts('GET /tasks/t1')).toBe(1);
    expect(delays).toEqual([]);
  });

  it('an abort during the backoff rejects at once with the abort reason', async () => {
    server.on('GET /tasks/t1', unavailable, json(200, taskNamed('t1')));
    const client = new AgentClient({
      transport,
      baseUrl: server.url,
      retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    const controller = new AbortController();
    const reason = new TaskCanceledError('user left');
    setRetryRuntime(client, {
      random: () => 0.5,
      // The real wait of 30 s: only the abort can end it within the test's time.
      sleep: (ms, signal) => {
        const waiting = sleep(ms, signal);
        controller.abort(reason);
        return waiting;
      },
    });
    await expect(client.getTask('t1', { signal: controller.signal })).rejects.toBe(reason);

    const plain = new AbortController();
    setRetryRuntime(client, {
      random: () => 0.5,
      sleep: (ms, signal) => {
        const waiting = sleep(ms, signal);
        plain.abort();
        return waiting;
      },
    });
    server.on('GET /tasks/t1', unavailable, json(200, taskNamed('t1')));
    await expect(client.getTask('t1', { signal: plain.signal })).rejects.toBeInstanceOf(TaskCanceledError);
    expect(server.attempts('GET /tasks/t1')).toBe(2);
  });

  describe('cancelTask', () => {
    it('after a lost answer, resolves with the task the first attempt canceled', async () => {
      const canceled = taskNamed('t-cancel', 'canceled');
      server
        .on('POST /tasks/cancel', drop, error(409, 'TASK_NOT_CANCELABLE'))
        .on('GET /tasks/t-cancel', json(200, canceled));
      const client = clientWith();
      expect(await client.cancelTask('t-cancel', 'stop')).toMatchObject({
        id: 't-cancel',
        state: 'canceled',
      });
      expect(server.attempts('POST /tasks/cancel')).toBe(2);
    });

    it('keeps TaskNotCancelableError when the task ended otherwise, or when nothing was retried', async () => {
      server
        .on('POST /tasks/cancel', unavailable, error(409, 'TASK_NOT_CANCELABLE'))
        .on('GET /tasks/t-done', json(200, taskNamed('t-done', 'completed')));
      const client = clientWith();
      await expect(client.cancelTask('t-done')).rejects.toBeInstanceOf(TaskNotCancelableError);
      server.on('POST /tasks/cancel', error(409, 'TASK_NOT_CANCELABLE'));
      await expect(client.cancelTask('t-done')).rejects.toBeInstanceOf(TaskNotCancelableError);
      expect(server.attempts('GET /tasks/t-done')).toBe(1);
    });
  });

  describe('streams', () => {
    const running = taskNamed('t-stream', 'working');
    const [first, second, last] = [
      statusEvent(running, 1),
      statusEvent(running, 2),
      statusEvent(running, 3, true),
    ] as [TaskEvent, TaskEvent, TaskEvent];

    it('streamTask resubmits the task after a failure before its first event', async () => {
      server.on('POST /tasks/stream', unavailable, events([first, second, last]));
      const client = clientWith();
      const seen = await collect(client.streamTask(createTask('go', { id: 't-stream' })));
      expect(seen.map((event) => event.sequence)).toEqual([1, 2, 3]);
      expect(server.attempts('POST /tasks/stream')).toBe(2);
    });

    it('streamTask resumes a broken stream after the last sequence, each event once', async () => {
      server
        .on('POST /tasks/stream', events([first, second]))
        // The resumed stream repeats event 2: the client delivers it once.
        .on('GET /tasks/t-stream/events', events([second, last]));
      const client = clientWith();
      const seen = await collect(client.streamTask(createTask('go', { id: 't-stream' })));
      expect(seen.map((event) => event.sequence)).toEqual([1, 2, 3]);
      expect(server.attempts('POST /tasks/stream')).toBe(1);
      expect(server.seen.find((request) => request.route === 'GET /tasks/t-stream/events')?.lastEventId).toBe(
        '2',
      );
    });

    it('subscribeTask re-opens from the last sequence received, before and between events', async () => {
      server.on(
        'GET /tasks/t-stream/events',
        unavailable,
        events([first]),
        rateLimited,
        events([second]),
        events([last]),
      );
      const client = clientWith();
      const seen = await collect(client.subscribeTask('t-stream'));
      expect(seen.map((event) => event.sequence)).toEqual([1, 2, 3]);
      const opened = server.seen.filter((request) => request.route === 'GET /tasks/t-stream/events');
      expect(opened.map((request) => request.lastEventId)).toEqual([undefined, undefined, '1', '1', '2']);
      // Each delivered event starts the count of failed attempts again.
      expect(delays).toEqual([50, 50, 100, 50]);
    });

    it('subscribeTask from `after` re-opens from it when nothing arrived', async () => {
      server.on('GET /tasks/t-stream/events', drop, events([last]));
      const client = clientWith();
      const seen = await collect(client.subscribeTask('t-stream', { after: 2 }));
      expect(seen.map((event) => event.sequence)).toEqual([3]);
      const opened = server.seen.filter((request) => request.route === 'GET /tasks/t-stream/events');
      expect(opened.map((request) => request.lastEventId)).toEqual(['2', '2']);
    });

    it('without retries a broken stream rejects after the events it delivered', async () => {
      server.on('POST /tasks/stream', events([first, second]));
      const client = clientWith({ retry: false });
      const seen: TaskEvent[] = [];
      const reading = (async () => {
        for await (const event of client.streamTask(createTask('go', { id: 't-stream' }))) seen.push(event);
      })();
      await expect(reading).rejects.toBeInstanceOf(UnavailableError);
      expect(seen.map((event) => event.sequence)).toEqual([1, 2]);
      expect(server.attempts('GET /tasks/t-stream/events')).toBe(0);
    });
  });

  it('runs the README’s Retries example, as written there', async () => {
    const taskId = 't-readme';
    const running = taskNamed(taskId, 'working');
    server
      .on('GET /.well-known/agent.json', unavailable, rateLimited, json(200, CARD))
      .on(`GET /tasks/${taskId}`, json(200, running))
      .on(
        `GET /tasks/${taskId}/events`,
        events([statusEvent(running, 1)]),
        events([statusEvent(running, 2), statusEvent(running, 3, true)]),
      );
    const lines: string[] = [];
    const log = (...values: unknown[]): void => {
      lines.push(values.join(' '));
    };

    // --- as in the README (baseUrl: this test's server; console.log: log) ---
    const client = new AgentClient({
      transport,
      baseUrl: server.url,
      retry: { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 2000 }, // every call of this client
    });

    // Up to 5 attempts, all of them and the waits between them within 10 s.
    const card = await client.getAgentCard({ timeoutMs: 10_000 });
    log(card.name);

    // One attempt only: an UnavailableError is this caller's to handle.
    const task = await client.getTask(taskId, { retry: false });
    log(task.state);

    // A subscription that breaks is reopened after the last event it delivered: each event once.
    for await (const event of client.subscribeTask(taskId)) log(event.sequence, event.type);
    // --- end of the README block ---

    expect(lines).toEqual(['scripted', 'working', '1 task.status', '2 task.status', '3 task.status']);
    expect(server.attempts('GET /.well-known/agent.json')).toBe(3);
  });

  it('refuses unknown and bad retry options with ValueError before sending', () => {
    expect(() => clientWith({ retry: { maxAttempt: 2 } as never })).toThrow(
      'AgentClient retry does not accept the option "maxAttempt"; accepted: baseDelayMs, maxAttempts, maxDelayMs, retryOn',
    );
    expect(() => clientWith({ retry: { maxAttempts: 0 } })).toThrow(ValueError);
    expect(() => clientWith({ retry: { baseDelayMs: -1 } })).toThrow(ValueError);
    expect(() => clientWith({ retry: { retryOn: ['NOPE' as never] } })).toThrow(ValueError);
    expect(() => clientWith({ retry: { retryOn: ['BUDGET_EXCEEDED'] } })).toThrow(/not transient/);
    expect(() => clientWith({ retry: true as never })).toThrow(ValueError);
    const client = clientWith();
    expect(() => client.subscribeTask('t1', { retry: { jitter: 1 } as never })).toThrow(
      'subscribeTask retry does not accept the option "jitter"',
    );
    return expect(client.getTask('t1', { retry: { maxDelayMs: Number.NaN } })).rejects.toBeInstanceOf(
      ValueError,
    );
  });
});

/** A port nothing listens on: one the system just handed out and that was closed again. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}
