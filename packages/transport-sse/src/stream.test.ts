import {
  CLIENT_OPERATIONS,
  createTask,
  InternalError,
  isFinalEvent,
  PermissionDeniedError,
  UnavailableError,
  ValidationError,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { startHarness, type Harness } from './test-support/harness.js';
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

  it('turns a handler error into an error frame the client raises as the typed error', async () => {
    const seen: TaskEvent[] = [];
    const run = async () => {
      for await (const event of h.client.subscribe(h.url, createTask('explode'))) seen.push(event);
    };
    await expect(run()).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(run()).rejects.toMatchObject({ data: { rule: 'test' } });
    expect(seen[0]?.type).toBe('task.progress');

    const res = await rawRequest(`${h.url}/tasks/stream`, {
      body: rpcBody('tasks/stream', { task: createTask('explode') }, 9),
    });
    const { frames } = splitStream(res.text);
    expect(frames.at(-1)).toMatchObject({ id: '2', event: 'error' });
    expect(JSON.parse(frames.at(-1)!.data!)).toMatchObject({
      jsonrpc: '2.0',
      id: 9,
      error: { code: -32011, data: { code: 'PERMISSION_DENIED' } },
    });
  });

  it('reports a handler stream that ends without a final status as INTERNAL', async () => {
    await expect(collect(h.client.subscribe(h.url, createTask('truncate')))).rejects.toBeInstanceOf(
      InternalError,
    );
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
    expect([malformed.status, malformed.json]).toMatchObject([400, { error: { code: 'PARSE_ERROR' } }]);
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
  it('ends every open stream with an UNAVAILABLE error frame and releases the port', async () => {
    const h = await startHarness();
    const tasks = [createTask('sleep 60000'), createTask('sleep 60000'), createTask('idle 60000')];
    const firstEvent = tasks.map(() => {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      return { promise, resolve };
    });
    const streams = tasks.map(async (task, index) => {
      const seen: TaskEvent[] = [];
      try {
        for await (const event of h.client.subscribe(h.url, task)) {
          seen.push(event);
          firstEvent[index]!.resolve();
        }
        return { seen, error: undefined };
      } catch (error) {
        return { seen, error };
      }
    });
    await Promise.all(firstEvent.slice(0, 2).map((entry) => entry.promise));
    // The idle stream has no event yet: wait until the handler has it.
    while (h.agent.counts.handleTaskStreaming < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await h.server.stop();
    await h.server.stop();
    const outcomes = await Promise.all(streams);
    for (const outcome of outcomes) {
      expect(outcome.error).toBeInstanceOf(UnavailableError);
      expect(finals(outcome.seen)).toHaveLength(0);
    }
    await expect(rawRequest(`${h.url}/healthz`, { method: 'GET' })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    // The tasks themselves are the handler's business; end them so nothing outlives the test.
    for (const task of tasks) await h.agent.cancelTask(task.id, 'test over', h.agent.contexts[0]!);
    await h.client.stop();
  });
});
