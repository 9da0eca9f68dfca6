/**
 * Interop C7/C10/C13/C18: streams between the official SDK client and our server on both bindings,
 * with authentication off, by API key and by bearer token: the frame order of SendStreamingMessage,
 * cancel of a streaming task (exactly one CANCELED, at the end), SubscribeToTask (the Task first),
 * and a client that aborts mid-stream (the task runs on).
 */
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { TaskNotCancelableError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  AUTH_MODES,
  BINDINGS,
  TERMINAL_STATES,
  asTask,
  collect,
  failureOf,
  kinds,
  rawRest,
  rawRpc,
  sdkClient,
  sdkCodeOf,
  sseData,
  startInterop,
  states,
  texts,
  userMessage,
  type InteropServer,
} from './test-support/harness.js';

const MATRIX = AUTH_MODES.flatMap((auth) => BINDINGS.map((binding) => [auth, binding] as const));

/** Every key anywhere in a JSON value. */
function keysDeep(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const entry of value) keysDeep(entry, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, entry] of Object.entries(value)) {
      out.add(key);
      keysDeep(entry, out);
    }
  }
  return out;
}

const STREAM_KEYS = ['task', 'message', 'statusUpdate', 'artifactUpdate'];

/** Checks one StreamResponse JSON: exactly one oneof member, no 0.3 `kind`/`final`. */
function expectStreamResponse(result: unknown): string {
  const keys = Object.keys(result as Record<string, unknown>);
  expect(keys).toHaveLength(1);
  expect(STREAM_KEYS).toContain(keys[0]);
  const all = keysDeep(result);
  expect(all.has('kind')).toBe(false);
  expect(all.has('final')).toBe(false);
  return keys[0]!;
}

function taskIdOf(event: StreamResponse): string {
  const payload = event.payload;
  if (payload?.$case === 'task') return payload.value.id;
  if (payload?.$case === 'statusUpdate' || payload?.$case === 'artifactUpdate') return payload.value.taskId;
  throw new Error(`no task id in ${JSON.stringify(event)}`);
}

const FIRST_FRAME_MS = 2000;

/**
 * The first event of a stream, with the iterator to read the rest. The first frame must come without
 * waiting for the task to do anything (a subscription's Task snapshot is due at once).
 */
async function open(
  events: AsyncGenerator<StreamResponse>,
): Promise<{ first: StreamResponse; rest: AsyncGenerator<StreamResponse> }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no first frame within ${FIRST_FRAME_MS} ms`)), FIRST_FRAME_MS);
  });
  try {
    const step = await Promise.race([events.next(), late]);
    if (step.done) throw new Error('the stream ended before its first event');
    return { first: step.value, rest: events };
  } finally {
    clearTimeout(timer);
  }
}

async function drain(events: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for (;;) {
    const step = await events.next();
    if (step.done) return out;
    out.push(step.value);
  }
}

describe.each(MATRIX)('auth %s over %s', (auth, binding) => {
  let server: InteropServer;
  let alice: Client;

  beforeAll(async () => {
    server = await startInterop({ auth });
    alice = await sdkClient(server, 'alice', { binding });
  });
  afterAll(async () => {
    await server.close();
  });

  it('C7: SendStreamingMessage: the Task first, ordered updates, one terminal status, then the end', async () => {
    const events = await collect(alice.sendMessageStream(userMessage('echo alpha beta gamma')));
    const order = kinds(events);
    expect(order[0]).toBe('task');
    expect(order.at(-1)).toBe('statusUpdate');
    const id = taskIdOf(events[0]!);
    for (const event of events) expect(taskIdOf(event)).toBe(id);
    const contextId = events[0]!.payload?.$case === 'task' ? events[0]!.payload.value.contextId : '';
    for (const event of events.slice(1)) {
      const payload = event.payload;
      if (payload?.$case === 'statusUpdate' || payload?.$case === 'artifactUpdate') {
        expect(payload.value.contextId).toBe(contextId);
      }
    }
    const artifactTexts = events.flatMap((event) =>
      event.payload?.$case === 'artifactUpdate' ? texts(event.payload.value.artifact?.parts) : [],
    );
    expect(artifactTexts).toEqual(['alpha', 'beta', 'gamma']);
    const seen = states(events);
    expect(seen.filter((state) => TERMINAL_STATES.includes(state))).toEqual([TaskState.TASK_STATE_COMPLETED]);
    expect(seen.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    const last = events.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && texts(last.value.status?.message?.parts)).toEqual([
      'alpha beta gamma',
    ]);
  });

  it('C7: raw frames carry no 0.3 fields (JSON-RPC: envelopes echoing the request id)', async () => {
    if (binding === 'JSONRPC') {
      for (const id of [42, 'req-7']) {
        const response = await rawRpc(
          server,
          'SendStreamingMessage',
          { message: { messageId: `m-${String(id)}`, role: 'ROLE_USER', parts: [{ text: 'stream 2' }] } },
          { id, headers: server.headers('alice'), accept: 'text/event-stream' },
        );
        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
        const frames = sseData(response.text) as Array<{ jsonrpc: string; id: unknown; result: unknown }>;
        expect(frames.length).toBeGreaterThanOrEqual(3);
        const order = frames.map((frame) => {
          expect(frame.jsonrpc).toBe('2.0');
          expect(frame.id).toStrictEqual(id);
          return expectStreamResponse(frame.result);
        });
        expect(order[0]).toBe('task');
        expect(order.filter((kind) => kind === 'artifactUpdate')).toHaveLength(2);
      }
    } else {
      const response = await rawRest(server, 'POST', '/message:stream', {
        headers: server.headers('alice'),
        accept: 'text/event-stream',
        body: { message: { messageId: 'm-rest', role: 'ROLE_USER', parts: [{ text: 'stream 2' }] } },
      });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
      const order = sseData(response.text).map(expectStreamResponse);
      expect(order[0]).toBe('task');
      expect(order.filter((kind) => kind === 'artifactUpdate')).toHaveLength(2);
      expect(order.at(-1)).toBe('statusUpdate');
    }
  });

  it('C10: cancel of a running streaming task: CANCELED, and the open stream ends with exactly one CANCELED', async () => {
    const { first, rest } = await open(alice.sendMessageStream(userMessage('hold')));
    expect(first.payload?.$case).toBe('task');
    const id = taskIdOf(first);
    await server.agent.whenRunning(id);
    const canceled = await alice.cancelTask({ tenant: '', id, metadata: { reason: 'enough' } });
    expect(canceled.id).toBe(id);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const after = await drain(rest);
    const seen = states([first, ...after]);
    expect(seen.filter((state) => state === TaskState.TASK_STATE_CANCELED)).toHaveLength(1);
    expect(seen.filter((state) => TERMINAL_STATES.includes(state))).toEqual([TaskState.TASK_STATE_CANCELED]);
    expect(seen.at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
    expect(after.at(-1)?.payload?.$case).toBe('statusUpdate');
    // The cancel reason (CancelTaskRequest.metadata) reached the agent. The SDK's REST transport
    // sends `:cancel` without a body, so only JSON-RPC carries it from this client.
    expect(server.agent.cancels.at(-1)).toEqual({
      taskId: id,
      reason: binding === 'JSONRPC' ? 'enough' : undefined,
    });
    // Idempotent: a second cancel answers the canceled task.
    const again = await alice.cancelTask({ tenant: '', id, metadata: undefined });
    expect(again.id).toBe(id);
    expect(again.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await alice.getTask({ tenant: '', id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('C10: cancel of a completed task is TaskNotCancelable (-32002)', async () => {
    const task = asTask(await alice.sendMessage(userMessage('echo finished')));
    const error = await failureOf(() => alice.cancelTask({ tenant: '', id: task.id, metadata: undefined }));
    expect(error).toBeInstanceOf(TaskNotCancelableError);
    if (binding === 'JSONRPC') expect(sdkCodeOf(error)).toBe(-32002);
    expect((await alice.getTask({ tenant: '', id: task.id })).status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
  });

  it('C13: SubscribeToTask on a running task: the Task snapshot first, then its live events to the end', async () => {
    const task = asTask(await alice.sendMessage(userMessage('hold', { returnImmediately: true })));
    await server.agent.whenRunning(task.id);
    const { first, rest } = await open(alice.resubscribeTask({ tenant: '', id: task.id }));
    expect(first.payload?.$case).toBe('task');
    expect(first.payload?.$case === 'task' && first.payload.value.id).toBe(task.id);
    expect(first.payload?.$case === 'task' && first.payload.value.status?.state).toBe(
      TaskState.TASK_STATE_WORKING,
    );
    server.agent.release(task.id);
    const after = await drain(rest);
    const seen = states(after);
    expect(seen.filter((state) => TERMINAL_STATES.includes(state))).toEqual([TaskState.TASK_STATE_COMPLETED]);
    expect(seen.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    for (const event of after) expect(taskIdOf(event)).toBe(task.id);
  });

  it('C13: SubscribeToTask on a terminal task is UnsupportedOperation (-32004), before any SSE', async () => {
    const task = asTask(await alice.sendMessage(userMessage('echo over')));
    const error = await failureOf(() => collect(alice.resubscribeTask({ tenant: '', id: task.id })));
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    if (binding === 'JSONRPC') {
      expect(sdkCodeOf(error)).toBe(-32004);
      const raw = await rawRpc(
        server,
        'SubscribeToTask',
        { id: task.id },
        {
          id: 9,
          headers: server.headers('alice'),
          accept: 'text/event-stream',
        },
      );
      expect(raw.headers['content-type']).toMatch(/^application\/json/);
      expect(raw.json).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32004 } });
    } else {
      const raw = await rawRest(server, 'POST', `/tasks/${task.id}:subscribe`, {
        headers: server.headers('alice'),
        accept: 'text/event-stream',
      });
      expect(raw.status).toBe(400);
      expect(raw.headers['content-type']).toMatch(/^application\/json/);
      expect(raw.json).toMatchObject({ error: { status: 'FAILED_PRECONDITION' } });
    }
  });

  it('C18: a client that aborts mid-stream leaves the task running; a new subscription sees it', async () => {
    const controller = new AbortController();
    const events = alice.sendMessageStream(userMessage('hold'), { signal: controller.signal });
    const { first, rest } = await open(events);
    const id = taskIdOf(first);
    await server.agent.whenRunning(id);
    controller.abort();
    await expect(drain(rest)).rejects.toThrow();
    // The server let the stream go, not the task.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.agent.activeTaskIds).toContain(id);
    expect((await alice.getTask({ tenant: '', id })).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const again = await open(alice.resubscribeTask({ tenant: '', id }));
    expect(again.first.payload?.$case).toBe('task');
    expect(again.first.payload?.$case === 'task' && again.first.payload.value.status?.state).toBe(
      TaskState.TASK_STATE_WORKING,
    );
    server.agent.release(id);
    const tail = states(await drain(again.rest));
    expect(tail.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await alice.getTask({ tenant: '', id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});
