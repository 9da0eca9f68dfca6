import {
  CLIENT_OPERATIONS,
  createTask,
  isFinalEvent,
  ValidationError,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { request } from 'node:http';
import { RecordingLogger } from '@agent/server/testing';
import { createSseTestAgent, startHarness, type Harness } from './test-support/harness.js';
import { rawRequest, rpcBody, splitStream } from './test-support/raw-http.js';

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

function finals(events: TaskEvent[]): TaskEvent[] {
  return events.filter((event) => event.type === 'task.status' && event.final);
}

describe('streaming on POST /tasks/stream', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.stop());

  it('writes id:, event: and a JSON-RPC result on every frame, then closes after the final status', async () => {
    const task = createTask('stream 3');
    const res = await rawRequest(`${h.url}/tasks/stream`, {
      body: rpcBody('tasks/stream', { task }, 'req-1'),
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['cache-control']).toContain('no-cache');
    const { frames } = splitStream(res.text);
    expect(frames.map((frame) => frame.id)).toEqual(['1', '2', '3', '4']);
    expect(frames.map((frame) => frame.event)).toEqual([
      'task.artifact',
      'task.artifact',
      'task.artifact',
      'task.status',
    ]);
    const payloads = frames.map(
      (frame) => JSON.parse(frame.data ?? 'null') as { jsonrpc: string; id: string; result: TaskEvent },
    );
    for (const payload of payloads)
      expect(payload).toMatchObject({ jsonrpc: '2.0', id: 'req-1', result: { task_id: task.id } });
    expect(payloads[3]!.result).toMatchObject({
      type: 'task.status',
      state: 'completed',
      final: true,
      task: { id: task.id },
    });
  });

  it('yields the events in order through subscribe() and ends on the final status', async () => {
    const task = createTask('stream 5');
    const events = await collect(h.client.subscribe(h.url, task));
    expect(events.map((event) => event.type)).toEqual([...Array(5).fill('task.artifact'), 'task.status']);
    const indexes = events
      .slice(0, 5)
      .map((event) => (event.type === 'task.artifact' ? event.artifact.metadata.index : -1));
    expect(indexes).toEqual([0, 1, 2, 3, 4]);
    expect(finals(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ state: 'completed', task: { artifacts: expect.any(Array) } });
  });

  it('writes heartbeat comments on an idle stream', async () => {
    const idle = await startHarness({ server: { heartbeatMs: 10 } });
    try {
      const res = await rawRequest(`${idle.url}/tasks/stream`, {
        body: rpcBody('tasks/stream', { task: createTask('idle 150') }),
      });
      const { frames, comments } = splitStream(res.text);
      expect(comments.length).toBeGreaterThan(0);
      expect(comments.every((line) => line === ': ping')).toBe(true);
      expect(frames).toHaveLength(1);
      expect(frames[0]).toMatchObject({ id: '1', event: 'task.status' });
    } finally {
      await idle.stop();
    }
  });

  it('writes no comment when heartbeatMs is 0', async () => {
    const quiet = await startHarness({ server: { heartbeatMs: 0 } });
    try {
      const res = await rawRequest(`${quiet.url}/tasks/stream`, {
        body: rpcBody('tasks/stream', { task: createTask('idle 50') }),
      });
      expect(splitStream(res.text)).toMatchObject({
        comments: [],
        frames: [{ id: '1', event: 'task.status' }],
      });
    } finally {
      await quiet.stop();
    }
  });

  it('ends a running stream with exactly one canceled status when another request cancels it', async () => {
    const task = createTask('sleep 60000');
    const seen: TaskEvent[] = [];
    let canceled: Task | undefined;
    for await (const event of h.client.subscribe(h.url, task)) {
      seen.push(event);
      if (seen.length === 1) {
        canceled = await h.client.send<Task>(CLIENT_OPERATIONS.cancel_task, h.url, {
          task_id: task.id,
          reason: 'user asked',
        });
      }
    }
    expect(canceled).toMatchObject({
      id: task.id,
      state: 'canceled',
      metadata: { cancel_reason: 'user asked' },
    });
    const statuses = seen.filter((event) => event.type === 'task.status');
    expect(statuses).toHaveLength(1);
    expect(seen.at(-1)).toMatchObject({
      type: 'task.status',
      state: 'canceled',
      final: true,
      task: { metadata: { cancel_reason: 'user asked' } },
    });
    expect(seen.some((event) => event.type === 'task.error')).toBe(false);
  });

  it('serves 100 concurrent streams, each ending with exactly one final status', async () => {
    const tasks = Array.from({ length: 100 }, () => createTask('stream 3'));
    const results = await Promise.all(tasks.map((task) => collect(h.client.subscribe(h.url, task))));
    results.forEach((events, index) => {
      expect(events.every((event) => event.task_id === tasks[index]!.id)).toBe(true);
      expect(events.map((event) => event.type)).toEqual([
        'task.artifact',
        'task.artifact',
        'task.artifact',
        'task.status',
      ]);
      expect(finals(events)).toHaveLength(1);
    });
  });

  it('finishes a stream whose handler throws after its first event with one task.error and a final failed', async () => {
    const events = await collect(h.client.subscribe(h.url, createTask('explode')));
    expect(events.map((event) => event.type)).toEqual(['task.progress', 'task.error', 'task.status']);
    expect(events[1]).toMatchObject({
      error: { code: 'PERMISSION_DENIED', message: 'The handler refused to go on', data: { rule: 'test' } },
    });
    expect(events.at(-1)).toMatchObject({
      state: 'failed',
      final: true,
      task: { metadata: { error: { code: 'PERMISSION_DENIED' } } },
    });

    const res = await rawRequest(`${h.url}/tasks/stream`, {
      body: rpcBody('tasks/stream', { task: createTask('explode') }, 9),
    });
    const { frames } = splitStream(res.text);
    expect(frames.map((frame) => [frame.id, frame.event])).toEqual([
      ['1', 'task.progress'],
      ['2', 'task.error'],
      ['3', 'task.status'],
    ]);
    expect(JSON.parse(frames[2]!.data!)).toMatchObject({
      jsonrpc: '2.0',
      id: 9,
      result: { state: 'failed' },
    });
  });

  it('finishes a handler stream that ends without a final status as failed INTERNAL', async () => {
    const events = await collect(h.client.subscribe(h.url, createTask('truncate')));
    expect(events.map((event) => event.type)).toEqual(['task.progress', 'task.error', 'task.status']);
    expect(events[1]).toMatchObject({ error: { code: 'INTERNAL' } });
    expect(finals(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({
      state: 'failed',
      task: { metadata: { error: { code: 'INTERNAL' } } },
    });
  });

  it('answers a handler that throws before its first event with a plain HTTP error', async () => {
    const res = await rawRequest(`${h.url}/tasks/stream`, {
      body: rpcBody('tasks/stream', { task: createTask('throw no luck') }),
    });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.json).toEqual({ error: { code: 'VALUE_ERROR', message: 'no luck' } });
    await expect(collect(h.client.subscribe(h.url, createTask('throw no luck')))).rejects.toMatchObject({
      code: 'VALUE_ERROR',
      message: 'no luck',
    });
  });

  it('answers a failure after a heartbeat opened the stream with one error frame carrying its data', async () => {
    let fail!: () => void;
    const gate = new Promise<void>((resolve) => (fail = resolve));
    const logger = new RecordingLogger();
    const handler = {
      ...createSseTestAgent(),
      // eslint-disable-next-line require-yield
      async *handleTaskStreaming(): AsyncGenerator<TaskEvent> {
        await gate;
        throw new Error('disk full on /var/lib/agent');
      },
    };
    const quiet = await startHarness({ handler, server: { heartbeatMs: 10, logger } });
    try {
      const body = rpcBody('tasks/stream', { task: createTask('x') }, 3);
      const text = await new Promise<string>((resolve, reject) => {
        const req = request(`${quiet.url}/tasks/stream`, { method: 'POST' }, (res) => {
          // The headers arrive with the first heartbeat, before any event: only now may the handler fail.
          expect(res.statusCode).toBe(200);
          fail();
          let all = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (all += chunk));
          res.on('end', () => resolve(all));
        });
        req.on('error', reject);
        req.end(body);
      });
      const { frames, comments } = splitStream(text);
      expect(comments[0]).toBe(': ping');
      expect(frames).toHaveLength(1);
      // No event came before it: the error frame repeats sequence 0.
      expect(frames[0]).toMatchObject({ id: '0', event: 'error' });
      const payload = JSON.parse(frames[0]!.data!) as { error: { data: { data: { error_id: string } } } };
      expect(payload).toMatchObject({
        jsonrpc: '2.0',
        id: 3,
        error: {
          code: -32603,
          message: 'Internal error',
          data: { code: 'INTERNAL', data: { error_id: expect.any(String) } },
        },
      });
      expect(text).not.toContain('disk full');
      expect(logger.withErrorId(payload.error.data.data.error_id)).toBeDefined();
    } finally {
      await quiet.stop();
    }
  });

  it('checks the request before the stream opens: an invalid task is a 422 JSON error, not a stream', async () => {
    const res = await rawRequest(`${h.url}/tasks/stream`, {
      body: rpcBody('tasks/stream', { task: { id: 1 } }),
    });
    expect(res.status).toBe(422);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.json).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    const bad = { ...createTask('x'), state: 'dreaming' } as unknown as Task;
    await expect(collect(h.client.subscribe(h.url, bad))).rejects.toBeInstanceOf(ValidationError);
  });

  it('refuses other methods, malformed JSON and oversized bodies on the stream route', async () => {
    const wrong = await rawRequest(`${h.url}/tasks/stream`, {
      body: rpcBody('tasks/send', { task: createTask('x') }),
    });
    expect([wrong.status, wrong.json]).toMatchObject([404, { error: { code: 'METHOD_NOT_FOUND' } }]);
    const malformed = await rawRequest(`${h.url}/tasks/stream`, { body: '{' });
    expect([malformed.status, malformed.json]).toMatchObject([400, { error: { code: 'INVALID_REQUEST' } }]);
    const small = await startHarness({ server: { maxBodyBytes: 1024 } });
    try {
      const huge = await rawRequest(`${small.url}/tasks/stream`, {
        body: rpcBody('tasks/stream', { task: createTask('y'.repeat(4096)) }),
      });
      expect([huge.status, huge.json]).toMatchObject([413, { error: { code: 'PAYLOAD_TOO_LARGE' } }]);
    } finally {
      await small.stop();
    }
  });
});

describe('client disconnects and aborts', () => {
  it('does not cancel the task when the client leaves the stream', async () => {
    const h = await startHarness();
    try {
      const task = createTask('sleep 200');
      for await (const event of h.client.subscribe(h.url, task)) {
        expect(event.type).toBe('task.progress');
        break;
      }
      const final = await h.agent.whenDone(task.id);
      expect(final.state).toBe('completed');
      expect(h.agent.cancels).toEqual([]);
    } finally {
      await h.stop();
    }
  });

  it('cancels the task on disconnect when cancelOnDisconnect is set', async () => {
    const h = await startHarness({ server: { cancelOnDisconnect: true } });
    try {
      const task = createTask('sleep 60000');
      for await (const event of h.client.subscribe(h.url, task)) {
        expect(isFinalEvent(event)).toBe(false);
        break;
      }
      const final = await h.agent.whenDone(task.id);
      expect(final).toMatchObject({ state: 'canceled', metadata: { cancel_reason: 'client disconnected' } });
      expect(h.agent.cancels).toEqual([{ taskId: task.id, reason: 'client disconnected' }]);
    } finally {
      await h.stop();
    }
  });

  it('ends the iteration with TASK_CANCELED when the caller aborts its signal mid-stream', async () => {
    const h = await startHarness();
    try {
      const controller = new AbortController();
      const task = createTask('sleep 60000');
      const seen: TaskEvent[] = [];
      const run = async () => {
        for await (const event of h.client.subscribe(h.url, task, { signal: controller.signal })) {
          seen.push(event);
          if (seen.length === 2) controller.abort();
        }
      };
      await expect(run()).rejects.toMatchObject({ code: 'TASK_CANCELED' });
      expect(seen).toHaveLength(2);
      await h.client.send(CLIENT_OPERATIONS.cancel_task, h.url, { task_id: task.id });
    } finally {
      await h.stop();
    }
  });
});

describe('stop() with open streams', () => {
  it('lets them run for stopGraceMs, then ends each with one final canceled status and releases the port', async () => {
    const h = await startHarness({ server: { stopGraceMs: 50 } });
    const tasks = [createTask('sleep 60000'), createTask('sleep 60000'), createTask('idle 60000')];
    const streams = tasks.map((task) => collect(h.client.subscribe(h.url, task)));
    // Every handler has its stream before the stop begins.
    while (h.agent.activeTaskIds.length < tasks.length)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const stopped = h.server.stop();
    const ready = await rawRequest(`${h.url}/readyz`, { method: 'GET' });
    expect([ready.status, ready.json]).toEqual([503, { status: 'stopping' }]);
    const refused = await rawRequest(`${h.url}/rpc`, { body: rpcBody('agent/card', {}) });
    expect([refused.status, refused.json]).toMatchObject([503, { error: { code: 'UNAVAILABLE' } }]);
    await stopped;
    await h.server.stop();
    for (const events of await Promise.all(streams)) {
      expect(finals(events)).toHaveLength(1);
      expect(events.at(-1)).toMatchObject({
        state: 'canceled',
        task: { metadata: { cancel_reason: 'server shutting down' } },
      });
    }
    await expect(rawRequest(`${h.url}/healthz`, { method: 'GET' })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    await h.client.stop();
  });

  it('ends a stream whose handler ignores the cancel with one UNAVAILABLE error frame', async () => {
    const agent = createSseTestAgent();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const stubborn = {
      ...agent,
      async *handleTaskStreaming(task: Task): AsyncGenerator<TaskEvent> {
        yield { type: 'task.progress', task_id: task.id, timestamp: new Date().toISOString() };
        started();
        await new Promise<never>(() => undefined);
      },
      cancelTask: () => Promise.reject(new ValidationError('not this one')),
    };
    const h = await startHarness({ handler: stubborn, server: { stopGraceMs: 10 } });
    const seen: TaskEvent[] = [];
    const run = (async () => {
      for await (const event of h.client.subscribe(h.url, createTask('stubborn'))) seen.push(event);
    })();
    // The stream is given up before stop() returns (the run that ignores its cancel holds stop() longer).
    const outcome = expect(run).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await running;
    await h.server.stop();
    await outcome;
    expect(seen.map((event) => event.type)).toEqual(['task.progress']);
    await h.client.stop();
  });
});
