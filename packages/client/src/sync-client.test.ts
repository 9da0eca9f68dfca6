import {
  ActionDeniedError,
  DeadlineExceededError,
  TaskNotFoundError,
  UnauthenticatedError,
  ValueError,
  createTask,
  messageText,
  type AgentCard,
  type Task,
  type TaskList,
  type Transport,
} from '@agent/core';
import { describeComponent } from '@agent/core/internal';
import { APIKeyAuth } from '@agent/auth';
import { HTTPTransport } from '@agent/transport-http';
import { AgentClient } from './agent-client.js';
import { startEchoServer, type ServerProcess } from './test-support/server-process.js';

/** The point of client.sync: a plain function, no async anywhere, gets a Task back. */
function sendTaskSynchronously(client: AgentClient, text: string): Task {
  return client.sync.sendTask(createTask(text));
}

describe('client.sync against a real HTTP server in another process', () => {
  let server: ServerProcess;
  let client: AgentClient;

  beforeAll(async () => {
    server = await startEchoServer();
    client = new AgentClient({ transport: new HTTPTransport({ url: server.url }), baseUrl: server.url });
  });

  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('sendTask returns a Task from a plain synchronous function', () => {
    const task = sendTaskSynchronously(client, 'hello');
    expect(task.state).toBe('completed');
    expect(messageText(task.messages.at(-1))).toBe('echo: hello');
  });

  it('sendMessage, getAgentCard and streamTask block and return plain values', () => {
    const reply = client.sync.sendMessage('hi', { taskId: 'sync-1' });
    expect(reply.role).toBe('agent');
    expect(messageText(reply)).toBe('echo: hi');
    const card: AgentCard = client.sync.getAgentCard();
    expect(card.name).toBe('echo-server');
    const events = client.sync.streamTask(createTask('streamed'));
    expect(events.at(-1)).toMatchObject({ type: 'task.status', final: true, state: 'completed' });
  });

  it('getTask and listTasks block and return plain values', () => {
    const done = client.sync.sendTask(createTask('kept', { metadata: { session_id: 'sync-tasks' } }));
    const read: Task = client.sync.getTask(done.id);
    expect(read).toEqual(done);
    expect(client.sync.getTask(done.id, { historyLength: 1 }).messages.map(messageText)).toEqual([
      'echo: kept',
    ]);
    const page: TaskList = client.sync.listTasks({
      sessionId: 'sync-tasks',
      state: 'completed',
      pageSize: 10,
    });
    expect(page).toEqual({ tasks: [done], next_page_token: '' });
  });

  it('getTask and listTasks rethrow typed errors; their option names are checked on this thread', () => {
    expect(() => client.sync.getTask('never-seen')).toThrow(TaskNotFoundError);
    expect(() => client.sync.getTask('')).toThrow(ValueError);
    expect(() => client.sync.listTasks({ pageSize: 0 })).toThrow(ValueError);
    expect(() => client.sync.getTask('t', { signal: AbortSignal.abort() } as never)).toThrow(
      'client.sync.getTask does not accept the option "signal"; accepted: historyLength, retry, timeoutMs',
    );
  });

  it('rethrows the same typed errors', () => {
    expect(() => client.sync.cancelTask('never-seen', 'why')).toThrow(TaskNotFoundError);
    let failure: unknown;
    try {
      client.sync.sendMessage('fail denied by policy');
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ActionDeniedError);
    expect((failure as ActionDeniedError).message).toBe('denied by policy');
    expect(() => client.sync.sendMessage('x', { taskId: '' })).toThrow(ValueError);
  });

  it('a call that outlives its timeout throws DeadlineExceededError, and the next call still works', () => {
    expect(() => client.sync.sendTask(createTask('hold'), { timeoutMs: 200 })).toThrow(DeadlineExceededError);
    expect(sendTaskSynchronously(client, 'after').state).toBe('completed');
  });

  it('rejects a bad per-call timeout', () => {
    expect(() => client.sync.getAgentCard({ timeoutMs: -5 })).toThrow(ValueError);
  });
});

describe('client.sync with an authenticator revived in the worker', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startEchoServer({ AUTH_KEYS: 'sync-key-123456' });
  });

  afterAll(() => server.stop());

  function clientWith(credentials: string): AgentClient {
    // The client side's authenticator only turns the credential into headers; the server decides.
    const authenticator = new APIKeyAuth({ validKeys: { [credentials]: [] } });
    return new AgentClient({
      transport: new HTTPTransport({ url: server.url, authenticator, credentials }),
      baseUrl: server.url,
    });
  }

  it('sends lazily built credentials from the rebuilt transport', async () => {
    const client = clientWith('sync-key-123456');
    try {
      expect(messageText(client.sync.sendMessage('who'))).toBe('echo: who (api-key-sync-key)');
    } finally {
      await client.close();
    }
  });

  it('a 401 from the server is UnauthenticatedError on the calling thread', async () => {
    const client = clientWith('not-a-key');
    try {
      expect(() => client.sync.sendTask(createTask('x'))).toThrow(UnauthenticatedError);
    } finally {
      await client.close();
    }
  });
});

describe('client.sync descriptor problems', () => {
  it('a descriptor naming a module that cannot be resolved is a ValueError before any worker starts', () => {
    const transport = {
      describe: () => describeComponent('@agent/no-such-transport', 'Nope', {}),
    } as unknown as Transport;
    const client = new AgentClient({
      transport: { ...transport, send: async () => undefined } as unknown as Transport,
      baseUrl: 'x',
    });
    expect(() => client.sync.getAgentCard()).toThrow(/Cannot resolve module "@agent\/no-such-transport"/);
  });

  it('a descriptor whose export is not a constructor reports the setup error from the worker', async () => {
    const transport = {
      send: async () => undefined,
      describe: () => describeComponent('@agent/core', 'NoSuchExport', {}),
    } as unknown as Transport;
    const client = new AgentClient({ transport, baseUrl: 'x' });
    try {
      expect(() => client.sync.getAgentCard()).toThrow(/no constructor export "NoSuchExport"/);
    } finally {
      await client.close();
    }
  });
});
