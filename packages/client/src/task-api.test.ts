import {
  CLIENT_OPERATIONS,
  TaskCanceledError,
  TaskNotFoundError,
  UnsupportedOperationError,
  ValidationError,
  ValueError,
  createTask,
  messageText,
  type TaskEvent,
  type Transport,
} from '@agent/core';
import { APIKeyAuth } from '@agent/auth';
import type { TestAgent } from '@agent/test-support';
import { RuntimeTransport } from '@agent/transport-memory';
import { AgentClient } from './agent-client.js';
import { createEchoAgent } from './test-support/echo-agent.js';

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

function sequences(events: TaskEvent[]): (number | undefined)[] {
  return events.map((event) => event.sequence);
}

describe('AgentClient task API over RuntimeTransport', () => {
  const KEY = 'task-api-key-0001';
  const OTHER_KEY = 'other-caller-key-0002'; // a principal is named by the key's first 8 characters
  let transport: RuntimeTransport;
  let agent: TestAgent;
  let client: AgentClient;

  beforeEach(() => {
    const authenticator = new APIKeyAuth({ validKeys: { [KEY]: [], [OTHER_KEY]: [] } });
    transport = new RuntimeTransport({ authenticator, credentials: KEY });
    agent = createEchoAgent();
    transport.registerAgent(agent);
    client = new AgentClient({ transport, baseUrl: 'runtime://echo' });
  });

  afterEach(async () => {
    agent.cancelAll();
    await client.close();
    await transport.stop();
  });

  it('getTask reads a finished task back, keeping at most historyLength messages', async () => {
    const task = createTask('hello');
    await client.sendTask(task);
    const whole = await client.getTask(task.id);
    expect(whole).toMatchObject({ id: task.id, state: 'completed' });
    expect(whole.messages.map(messageText)).toEqual(['hello', 'echo: hello']);
    expect((await client.getTask(task.id, { historyLength: 1 })).messages.map(messageText)).toEqual([
      'echo: hello',
    ]);
    expect((await client.getTask(task.id, { historyLength: 0 })).messages).toEqual([]);
  });

  it('getTask reads a running task; an unknown id is TaskNotFoundError', async () => {
    const task = createTask('wait');
    const running = client.sendTask(task);
    await agent.whenRunning(task.id);
    expect((await client.getTask(task.id)).state).toBe('working');
    agent.release(task.id);
    expect((await running).state).toBe('completed');
    expect((await client.getTask(task.id)).state).toBe('completed');
    await expect(client.getTask('no-such-task')).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('listTasks pages through every task once, and filters by state and session', async () => {
    const ids: string[] = [];
    for (const text of ['a', 'b', 'c']) {
      const task = createTask(text, { metadata: { session_id: 'chat-1' } });
      ids.push(task.id);
      await client.sendTask(task);
    }
    await client.sendTask(createTask('fail no'));

    const first = await client.listTasks({ state: 'completed', pageSize: 2 });
    expect(first.tasks).toHaveLength(2);
    expect(first.next_page_token).not.toBe('');
    const second = await client.listTasks({
      state: 'completed',
      pageSize: 2,
      pageToken: first.next_page_token,
    });
    expect(second.next_page_token).toBe('');
    expect([...first.tasks, ...second.tasks].map((task) => task.id).sort()).toEqual([...ids].sort());

    expect((await client.listTasks({ state: 'failed' })).tasks).toEqual([
      expect.objectContaining({ state: 'failed' }),
    ]);
    expect((await client.listTasks({ sessionId: 'chat-1' })).tasks).toHaveLength(3);
    expect(await client.listTasks({ sessionId: 'chat-2' })).toEqual({ tasks: [], next_page_token: '' });
    expect((await client.listTasks()).tasks).toHaveLength(4);
  });

  it('subscribeTask replays a finished task from any sequence, the final status last', async () => {
    const task = createTask('a b');
    const streamed = await collect(client.streamTask(task));
    expect(sequences(streamed)).toEqual([1, 2, 3, 4]);
    const replayed = await collect(client.subscribeTask(task.id));
    expect(replayed.map((e) => [e.sequence, e.type])).toEqual(streamed.map((e) => [e.sequence, e.type]));
    const tail = await collect(client.subscribeTask(task.id, { after: 2 }));
    expect(sequences(tail)).toEqual([3, 4]);
    expect(tail.at(-1)).toMatchObject({ type: 'task.status', final: true, state: 'completed' });
    expect(await collect(client.subscribeTask(task.id, { after: 4 }))).toEqual([]);
    expect(agent.calls).toHaveLength(1);
  });

  it('resumes a dropped stream from the last sequence seen: each later event once', async () => {
    const task = createTask('one two three four five');
    const seen: TaskEvent[] = [];
    for await (const event of client.streamTask(task)) {
      seen.push(event);
      if (seen.length === 3) break;
    }
    const after = seen.at(-1)?.sequence ?? 0;
    expect(after).toBe(3);
    const rest = await collect(client.subscribeTask(task.id, { after }));
    expect(sequences(rest)).toEqual([4, 5, 6, 7]);
    expect(rest.filter((e) => e.type === 'task.status' && e.final)).toEqual([
      expect.objectContaining({ state: 'completed', final: true }),
    ]);
    expect(agent.calls).toHaveLength(1);
  });

  it('subscribeTask follows a running task live, without running it again', async () => {
    const task = createTask('wait');
    const running = client.sendTask(task);
    await agent.whenRunning(task.id);
    const iterator = client.subscribeTask(task.id)[Symbol.asyncIterator]();
    // send_task records `working` before the handler starts: it is the first event of the run.
    expect((await iterator.next()).value).toMatchObject({ sequence: 1, state: 'working' });
    agent.release(task.id);
    const last = await iterator.next();
    expect(last.value).toMatchObject({ type: 'task.status', final: true, state: 'completed' });
    expect((await iterator.next()).done).toBe(true);
    expect((await running).state).toBe('completed');
    expect(agent.calls).toHaveLength(1);
  });

  it("answers another caller's task exactly like an unknown id", async () => {
    const task = createTask('mine');
    await client.sendTask(task);
    const other = new AgentClient({
      transport: transport.client({ credentials: OTHER_KEY }),
      baseUrl: 'echo',
    });
    await expect(other.getTask(task.id)).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(collect(other.subscribeTask(task.id))).rejects.toBeInstanceOf(TaskNotFoundError);
    expect(await other.listTasks()).toEqual({ tasks: [], next_page_token: '' });
    expect((await client.getTask(task.id)).state).toBe('completed');
  });

  it('an unknown id fails the first read of subscribeTask with TaskNotFoundError', async () => {
    const events = client.subscribeTask('no-such-task')[Symbol.asyncIterator]();
    await expect(events.next()).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('refuses bad arguments with ValueError before anything is sent', async () => {
    const bad: [() => unknown, string][] = [
      [() => client.getTask(''), 'getTask needs a task id'],
      [
        () => client.getTask('t', { historyLength: -1 }),
        'historyLength must be a non-negative integer, got -1',
      ],
      [() => client.getTask('t', { historyLength: 1.5 }), 'historyLength must be a non-negative integer'],
      [
        () => client.getTask('t', { history_length: 1 } as never),
        'getTask does not accept the option "history_length"',
      ],
      [() => client.listTasks({ pageSize: 0 }), 'pageSize must be an integer from 1 to 100, got 0'],
      [() => client.listTasks({ pageSize: 101 }), 'pageSize must be an integer from 1 to 100, got 101'],
      [() => client.listTasks({ pageSize: 2.5 }), 'pageSize must be an integer from 1 to 100, got 2.5'],
      [() => client.listTasks({ state: 'sleeping' as never }), 'state must be one of submitted, working'],
      [() => client.listTasks({ sessionId: '' }), 'sessionId must be a non-empty string'],
      [() => client.listTasks({ page_size: 5 } as never), 'listTasks does not accept the option "page_size"'],
      [() => client.listTasks(null as never), 'listTasks options must be an object'],
      [() => client.getTask('t', { timeoutMs: -1 }), 'timeoutMs must be a non-negative finite number'],
    ];
    for (const [call, message] of bad) {
      const error = await Promise.resolve()
        .then(call)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect({ message, error }).toEqual({ message, error: expect.any(ValueError) });
      expect((error as Error).message).toContain(message);
    }
    expect(() => client.subscribeTask('')).toThrow('subscribeTask needs a task id');
    expect(() => client.subscribeTask('t', { after: -1 })).toThrow(
      'after must be a non-negative integer, got -1',
    );
    expect(() => client.subscribeTask('t', { from: 2 } as never)).toThrow(ValueError);
  });

  it('the server stays the authority: a page token it did not issue is its ValidationError', async () => {
    const error = await client.listTasks({ pageToken: 'not-a-token' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(JSON.stringify((error as ValidationError).data)).toContain('/page_token');
  });

  it('every task call honours an AbortSignal', async () => {
    const signal = AbortSignal.abort();
    await expect(client.getTask('t', { signal })).rejects.toBeInstanceOf(TaskCanceledError);
    await expect(client.listTasks({ signal })).rejects.toBeInstanceOf(TaskCanceledError);
    const events = client.subscribeTask('t', { signal })[Symbol.asyncIterator]();
    await expect(events.next()).rejects.toBeInstanceOf(TaskCanceledError);
  });

  it('client.sync has getTask and listTasks, and refuses RuntimeTransport as for every call', () => {
    expect(() => client.sync.getTask('t')).toThrow(UnsupportedOperationError);
    expect(() => client.sync.listTasks()).toThrow(/deadlock/);
  });
});

describe('AgentClient task API requests', () => {
  /** A transport that records what the client hands it and answers `answer`. */
  function recording(answer: unknown): { transport: Transport; sent: unknown[][] } {
    const sent: unknown[][] = [];
    const transport = {
      send: async (...args: unknown[]) => {
        sent.push(args);
        return answer;
      },
      subscribe: () => {
        throw new Error('not used');
      },
    } as unknown as Transport;
    return { transport, sent };
  }

  it('sends wire names, leaves absent options out and passes signal and timeoutMs on', async () => {
    const task = createTask('x');
    const { transport, sent } = recording(task);
    const client = new AgentClient({ transport, baseUrl: 'http://agent' });
    const controller = new AbortController();
    await client.getTask(task.id, { historyLength: 2, timeoutMs: 500, signal: controller.signal });
    await client.getTask(task.id);
    expect(sent).toEqual([
      [
        CLIENT_OPERATIONS.get_task,
        'http://agent',
        { task_id: task.id, history_length: 2 },
        undefined,
        { signal: controller.signal, timeoutMs: 500 },
      ],
      [CLIENT_OPERATIONS.get_task, 'http://agent', { task_id: task.id }, undefined, {}],
    ]);
  });

  it('listTasks sends its filters by their wire names', async () => {
    const { transport, sent } = recording({ tasks: [], next_page_token: '' });
    const client = new AgentClient({ transport, baseUrl: 'http://agent' });
    await client.listTasks({ sessionId: 's', state: 'working', pageSize: 100, pageToken: 'p' });
    await client.listTasks();
    expect(sent.map((args) => args[2])).toEqual([
      { session_id: 's', state: 'working', page_size: 100, page_token: 'p' },
      {},
    ]);
  });

  it('an answer that is not a task list is a ValidationError, and each task in it is checked', async () => {
    for (const answer of [{ tasks: [] }, [], { tasks: [{ id: 7 }], next_page_token: '' }]) {
      const client = new AgentClient({ transport: recording(answer).transport, baseUrl: 'x' });
      await expect(client.listTasks()).rejects.toBeInstanceOf(ValidationError);
    }
  });

  it('subscribeTask over a transport without it is UnsupportedOperationError naming it', () => {
    class OldTransport {
      send(): Promise<unknown> {
        return Promise.resolve(undefined);
      }
    }
    const client = new AgentClient({ transport: new OldTransport() as unknown as Transport, baseUrl: 'x' });
    expect(() => client.subscribeTask('t')).toThrow(UnsupportedOperationError);
    expect(() => client.subscribeTask('t')).toThrow(
      'subscribeTask needs a transport with subscribeTask(); OldTransport has none',
    );
  });

  it('subscribeTask hands the transport the task id, after, signal and timeoutMs once read', async () => {
    const calls: unknown[][] = [];
    const transport = {
      send: () => Promise.resolve(undefined),
      subscribeTask: (...args: unknown[]) => {
        calls.push(args);
        return [];
      },
    } as unknown as Transport;
    const client = new AgentClient({ transport, baseUrl: 'grpc://agent' });
    const first = client.subscribeTask('t', { after: 3, timeoutMs: 0 });
    const second = client.subscribeTask('t');
    expect(calls).toEqual([]); // opened on the first read, where its retries run
    await collect(first);
    await collect(second);
    expect(calls).toEqual([
      ['grpc://agent', 't', { after: 3, timeoutMs: 0 }],
      ['grpc://agent', 't', {}],
    ]);
  });
});
