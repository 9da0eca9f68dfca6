import {
  CLIENT_OPERATIONS,
  DeadlineExceededError,
  InternalError,
  MethodNotFoundError,
  NotFoundError,
  TaskCanceledError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnavailableError,
  UnsupportedOperationError,
  ValidationError,
  ValueError,
  createJsonLogger,
  createTask,
  handlerFromFunction,
  messageText,
  type AgentCard,
  type Task,
  type TaskEvent,
} from '@agent/core';
import { APIKeyAuth } from '@agent/auth';
import { RuntimeTransport } from './runtime-transport.js';
import type { TestAgent } from '@agent/test-support';
import { createEchoAgent } from './test-support/handlers.js';

const { send_task, cancel_task, get_card, stream_task } = CLIENT_OPERATIONS;

async function collect(stream: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('RuntimeTransport registry', () => {
  it('registers an agent by name and by runtime:// URL', () => {
    const transport = new RuntimeTransport();
    const alpha = createEchoAgent('alpha');
    expect(transport.registerAgent(alpha)).toBe('runtime://alpha');
    expect(transport.getAgent('alpha')).toBe(alpha);
    expect(transport.getAgent('runtime://alpha')).toBe(alpha);
    expect(transport.getAgent('runtime://alpha/')).toBe(alpha);
    expect(transport.listAgents()).toEqual(['alpha', 'runtime://alpha']);
  });

  it('registers under an explicit name and a custom URL as well as runtime://<name>', () => {
    const transport = new RuntimeTransport();
    const agent = createEchoAgent('ignored');
    transport.registerAgent(agent, { name: 'beta', url: 'http://127.0.0.1:9999' });
    expect(transport.getAgent('beta')).toBe(agent);
    expect(transport.getAgent('http://127.0.0.1:9999/')).toBe(agent);
    expect(transport.getAgent('runtime://beta')).toBe(agent);
    expect(transport.getAgent('ignored')).toBeUndefined();
    expect(transport.listAgents()).toEqual(['beta', 'http://127.0.0.1:9999']);
  });

  it('takes the name from agent.name when there is no card', () => {
    const transport = new RuntimeTransport();
    const handler = Object.assign(
      handlerFromFunction(async (task) => task),
      { name: 'plain' },
    );
    transport.registerAgent(handler);
    expect(transport.getAgent('runtime://plain')).toBe(handler);
  });

  it('unregisters by name or URL and reports whether anything was removed', () => {
    const transport = new RuntimeTransport();
    transport.registerAgent(createEchoAgent('a'));
    transport.registerAgent(createEchoAgent('b'));
    expect(transport.unregisterAgent('runtime://a')).toBe(true);
    expect(transport.getAgent('a')).toBeUndefined();
    expect(transport.unregisterAgent('b')).toBe(true);
    expect(transport.unregisterAgent('b')).toBe(false);
    expect(transport.listAgents()).toEqual([]);
  });

  it('re-registering the same agent is a no-op; another agent under a taken name is a ValueError', () => {
    const transport = new RuntimeTransport();
    const first = createEchoAgent('same');
    transport.registerAgent(first);
    transport.registerAgent(first);
    expect(transport.listAgents()).toEqual(['same', 'runtime://same']);
    expect(() => transport.registerAgent(createEchoAgent('same'))).toThrow(ValueError);
    expect(() => transport.registerAgent(createEchoAgent('other'), { url: 'runtime://same' })).toThrow(
      /already registered/,
    );
  });

  it('rejects agents without a usable name and objects that are not TaskHandlers', () => {
    const transport = new RuntimeTransport();
    expect(() => transport.registerAgent(handlerFromFunction(async (task) => task))).toThrow(ValueError);
    expect(() => transport.registerAgent(createEchoAgent('x'), { name: 'a/b' })).toThrow(/must not contain/);
    expect(() => transport.registerAgent({ name: 'nope' } as never)).toThrow(/TaskHandler/);
  });

  it('stop() keeps the agents registered but answers UNAVAILABLE until start(); validateUrl() is always true', async () => {
    const transport = new RuntimeTransport();
    transport.registerAgent(createEchoAgent('a'));
    transport.bind(createEchoAgent('b'));
    await transport.start();
    expect(transport.validateUrl()).toBe(true);
    await transport.stop();
    await transport.stop();
    expect(transport.listAgents()).toEqual(['a', 'runtime://a', 'b', 'runtime://b']);
    await expect(transport.send(send_task, '', createTask('hi'))).rejects.toBeInstanceOf(UnavailableError);
    await transport.start();
    await expect(transport.send<Task>(send_task, 'a', createTask('hi'))).resolves.toMatchObject({
      state: 'completed',
    });
    await transport.stop();
  });

  it('start() needs an agent of its own; bind() after start() is a ValueError, registerAgent() is not', async () => {
    const transport = new RuntimeTransport();
    await expect(transport.start()).rejects.toBeInstanceOf(ValueError);
    transport.bind(createEchoAgent('first'));
    await transport.start();
    expect(() => transport.bind(createEchoAgent('second'))).toThrow(ValueError);
    transport.registerAgent(createEchoAgent('late'));
    await expect(transport.send<Task>(send_task, 'late', createTask('hi'))).resolves.toMatchObject({
      state: 'completed',
    });
    await transport.stop();
  });

  it('bind() before start() replaces the earlier default agent', async () => {
    const transport = new RuntimeTransport();
    transport.bind(createEchoAgent('one'));
    transport.bind(createEchoAgent('two'));
    expect(transport.listAgents()).toEqual(['two', 'runtime://two']);
    expect(transport.url).toBe('runtime://two');
  });

  it('rejects bad options at construction', () => {
    expect(() => new RuntimeTransport({ credentials: 'k' })).toThrow(ValueError);
    expect(() => new RuntimeTransport({ timeoutMs: -1 })).toThrow(ValueError);
    expect(() => new RuntimeTransport({ url: 'runtime://x' } as never)).toThrow(/"url"/);
    expect(new RuntimeTransport({ timeoutMs: 0 }).timeoutMs).toBe(0);
  });
});

describe('RuntimeTransport calls', () => {
  let transport: RuntimeTransport;
  let alpha: TestAgent;
  let beta: TestAgent;

  let logged: Record<string, unknown>[];

  beforeEach(() => {
    logged = [];
    transport = new RuntimeTransport({
      logger: createJsonLogger({ write: (line) => logged.push(JSON.parse(line) as Record<string, unknown>) }),
    });
    alpha = createEchoAgent('alpha');
    beta = createEchoAgent('beta');
    transport.registerAgent(alpha);
    transport.registerAgent(beta);
  });

  afterEach(() => transport.stop());

  it('routes send_task to the addressed agent, passing the very object', async () => {
    const task = createTask('hello');
    const result = await transport.send<Task>(send_task, 'runtime://beta', task);
    expect(result.state).toBe('completed');
    expect(messageText(result.messages.at(-1))).toBe('beta: hello');
    expect(beta.calls[0]!.task).toBe(task);
    expect(alpha.calls).toHaveLength(0);
    expect(beta.contexts[0]!.transport).toBe('memory');
    expect(beta.contexts[0]!.security).toBeUndefined();
  });

  it('accepts the {task} envelope as the JSON-RPC transports do', async () => {
    const result = await transport.send<Task>(send_task, 'alpha', { task: createTask('wrapped') });
    expect(messageText(result.messages.at(-1))).toBe('alpha: wrapped');
  });

  it('cancels a running task with its reason, then reports 409/404 errors', async () => {
    const task = createTask('wait');
    const running = transport.send<Task>(send_task, 'alpha', task);
    await alpha.whenRunning(task.id);
    const canceled = await transport.send<Task>(cancel_task, 'alpha', { task_id: task.id, reason: 'user' });
    expect(canceled.state).toBe('canceled');
    expect(canceled.metadata.cancel_reason).toBe('user');
    expect((await running).state).toBe('canceled');
    const done = await transport.send<Task>(send_task, 'alpha', createTask('x'));
    await expect(transport.send(cancel_task, 'alpha', { task_id: done.id })).rejects.toBeInstanceOf(
      TaskNotCancelableError,
    );
    await expect(transport.send(cancel_task, 'alpha', { task_id: 'nope' })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
  });

  it('returns the agent card', async () => {
    const card = await transport.send<AgentCard>(get_card, 'runtime://alpha');
    expect(card).toEqual(alpha.card);
    expect(card.securitySchemes).toBeUndefined();
  });

  it('answers an unknown agent with NotFoundError naming the known addresses', async () => {
    const error = await transport
      .send(send_task, 'runtime://gamma', createTask('x'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).data).toEqual({
      address: 'runtime://gamma',
      known: ['alpha', 'runtime://alpha', 'beta', 'runtime://beta'],
    });
    await expect(collect(transport.subscribe('gamma', createTask('x')))).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('gives typed errors for bad payloads, unknown operations, streaming specs and handler crashes', async () => {
    await expect(transport.send(send_task, 'alpha', { id: 42 })).rejects.toBeInstanceOf(ValidationError);
    await expect(transport.send(cancel_task, 'alpha', { reason: 'no id' })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(
      transport.send({ name: 'list_everything', method: 'GET', path: '/x' }, 'alpha'),
    ).rejects.toBeInstanceOf(MethodNotFoundError);
    await expect(transport.send(stream_task, 'alpha', createTask('x'))).rejects.toBeInstanceOf(
      UnsupportedOperationError,
    );
    const crash = await transport.send(send_task, 'alpha', createTask('boom')).catch((e: unknown) => e);
    expect(crash).toBeInstanceOf(InternalError);
    expect((crash as InternalError).message).toBe('Internal error');
    const errorId = ((crash as InternalError).data as { error_id: string }).error_id;
    expect(logged).toEqual([expect.objectContaining({ error_id: errorId, transport: 'memory' })]);
    expect(JSON.stringify(logged[0])).toContain('handler exploded');
  });

  it('subscribe yields the handler events in order, ending with the one final status', async () => {
    const events = await collect(transport.subscribe('runtime://alpha', createTask('one two')));
    expect(events.map((event) => event.type)).toEqual([
      'task.status',
      'llm.stream',
      'llm.stream',
      'task.status',
    ]);
    expect(
      events
        .filter((event) => event.type === 'llm.stream')
        .map((event) => (event as { delta: string }).delta),
    ).toEqual(['one', 'two']);
    expect(events.at(-1)).toMatchObject({ type: 'task.status', final: true, state: 'completed' });
  });

  it('a caller abort rejects the call while the agent keeps the task (a disconnect is not a cancel)', async () => {
    const controller = new AbortController();
    const task = createTask('wait');
    const call = transport.send(send_task, 'alpha', task, undefined, { signal: controller.signal });
    await alpha.whenRunning(task.id);
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(TaskCanceledError);
    // The task is the server's: its caller leaving does not abort what the handler sees.
    expect(alpha.contexts[0]!.signal.aborted).toBe(false);
    const canceled = await transport.send<Task>(cancel_task, 'alpha', { task_id: task.id });
    expect(canceled.state).toBe('canceled');
  });

  it('a per-call timeout rejects with DeadlineExceededError', async () => {
    const task = createTask('wait');
    await expect(
      transport.send(send_task, 'alpha', task, undefined, { timeoutMs: 20 }),
    ).rejects.toBeInstanceOf(DeadlineExceededError);
    await transport.send(cancel_task, 'alpha', { task_id: task.id });
  });

  it('an aborted stream consumer gets a typed error', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      collect(transport.subscribe('alpha', createTask('x'), { signal: controller.signal })),
    ).rejects.toBeInstanceOf(TaskCanceledError);
  });

  it('stop() lets in-flight calls finish, then cancels what is left with reason "server shutting down"', async () => {
    const served = new RuntimeTransport({ stopGraceMs: 50 });
    const agent = createEchoAgent('alpha');
    served.bind(agent);
    await served.start();
    const task = createTask('wait');
    const call = served.send<Task>(send_task, 'alpha', task);
    await agent.whenRunning(task.id);
    await served.stop();
    await expect(call).resolves.toMatchObject({
      state: 'canceled',
      metadata: { cancel_reason: 'server shutting down' },
    });
    await expect(served.send(get_card, 'alpha')).rejects.toBeInstanceOf(UnavailableError);
  });

  it('a stream that ends without a final status ends failed INTERNAL, not normally', async () => {
    const agent = createEchoAgent('short');
    transport.registerAgent(agent);
    const events = await collect(transport.subscribe('short', createTask('truncate')));
    expect(events.map((event) => event.type)).toEqual([
      'task.status',
      'task.progress',
      'task.error',
      'task.status',
    ]);
    expect(events.at(-1)).toMatchObject({ state: 'failed', final: true });
  });

  it('leaving a stream early neither aborts the task signal nor cancels it', async () => {
    const task = createTask('wait');
    for await (const event of transport.subscribe('alpha', task)) {
      expect(event).toMatchObject({ state: 'working' });
      break;
    }
    expect(alpha.contexts[0]!.signal.aborted).toBe(false);
    expect(alpha.cancels).toEqual([]);
  });
});

describe('RuntimeTransport client views', () => {
  const validKeys = { 'key-alpha-123456': ['tasks'] };

  it('client() reaches the same agents with its own credentials, checked by the serving transport', async () => {
    const server = new RuntimeTransport({ authenticator: new APIKeyAuth({ validKeys }) });
    const agent = createEchoAgent('secure');
    server.bind(agent);
    await server.start();
    const client = server.client({ credentials: 'key-alpha-123456' });
    const result = await client.send<Task>(send_task, server.url, createTask('hi'));
    expect(messageText(result.messages.at(-1))).toBe('secure: hi');
    expect(agent.contexts[0]!.security?.principalId).toBe('api-key-key-alph');
    await expect(server.send(send_task, server.url, createTask('hi'))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
    expect(client.listAgents()).toEqual(['secure', 'runtime://secure']);
    // The view serves nothing of its own: its stop() leaves the agents alone, its start() has nothing to start.
    await client.stop();
    await expect(client.start()).rejects.toBeInstanceOf(ValueError);
    await expect(client.send(get_card, 'secure')).resolves.toMatchObject({ name: 'secure' });
    await server.stop();
    await expect(client.send(get_card, 'secure')).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe('RuntimeTransport default agent', () => {
  it('bind() makes the handler the default agent, also reachable by its card name', async () => {
    const transport = new RuntimeTransport();
    const agent = createEchoAgent('main');
    transport.bind(agent);
    for (const address of ['', 'runtime://', 'main', 'runtime://main']) {
      const result = await transport.send<Task>(send_task, address, createTask('hi'));
      expect(messageText(result.messages.at(-1))).toBe('main: hi');
    }
    expect(transport.unregisterAgent('main')).toBe(true);
    await expect(transport.send(send_task, '', createTask('hi'))).rejects.toBeInstanceOf(NotFoundError);
  });

  it('onTaskReceived() wraps a plain function as the default agent', async () => {
    const transport = new RuntimeTransport();
    transport.onTaskReceived(async (task) => ({ ...task, state: 'completed' }));
    expect(transport.listAgents()).toEqual(['default', 'runtime://default']);
    const result = await transport.send<Task>(send_task, 'runtime://default', createTask('x'));
    expect(result.state).toBe('completed');
    const events = await collect(transport.subscribe('', createTask('y')));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'task.status', final: true, state: 'completed' });
  });
});

describe('RuntimeTransport authentication', () => {
  const validKeys = { 'key-alpha-123456': ['tasks'] };

  it('sends lazily built headers through authenticateRequest, as on the wire', async () => {
    const transport = new RuntimeTransport({
      authenticator: new APIKeyAuth({ validKeys }),
      credentials: 'key-alpha-123456',
    });
    const agent = createEchoAgent('secure');
    transport.registerAgent(agent);
    const result = await transport.send<Task>(send_task, 'secure', createTask('hi'));
    expect(result.state).toBe('completed');
    const ctx = agent.contexts[0]!;
    expect(ctx.security?.principalId).toBe('api-key-key-alph');
    expect(ctx.headers['x-api-key']).toBe('key-alpha-123456');
    expect(ctx.headers.authorization).toBe('ApiKey key-alpha-123456');
    const events = await collect(transport.subscribe('secure', createTask('a b')));
    expect(events.at(-1)).toMatchObject({ final: true });
    expect(agent.contexts[1]!.security?.principalId).toBe('api-key-key-alph');
  });

  it('wrong credentials: UnauthenticatedError without echoing the credential, handler never invoked', async () => {
    const transport = new RuntimeTransport({
      authenticator: new APIKeyAuth({ validKeys }),
      credentials: 'wrong-key',
    });
    const agent = createEchoAgent('secure');
    transport.registerAgent(agent);
    const error = await transport.send(send_task, 'secure', createTask('hi')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect((error as Error).message).not.toContain('wrong-key');
    await expect(collect(transport.subscribe('secure', createTask('x')))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
    expect(agent.contexts).toHaveLength(0);
  });

  it('no credentials: Missing credentials, unless the call carries api_key in its params', async () => {
    const transport = new RuntimeTransport({ authenticator: new APIKeyAuth({ validKeys }) });
    const agent = createEchoAgent('secure');
    transport.registerAgent(agent);
    await expect(transport.send(send_task, 'secure', createTask('hi'))).rejects.toThrow(
      /Missing credentials/,
    );
    expect(agent.contexts).toHaveLength(0);
    const result = await transport.send<Task>(send_task, 'secure', createTask('hi'), {
      api_key: 'key-alpha-123456',
    });
    expect(result.state).toBe('completed');
  });

  it('authenticate() validates up front, then later calls carry the context', async () => {
    const transport = new RuntimeTransport({ authenticator: new APIKeyAuth({ validKeys }) });
    transport.registerAgent(createEchoAgent('secure'));
    await expect(transport.authenticate('bad')).rejects.toBeInstanceOf(UnauthenticatedError);
    const context = await transport.authenticate('key-alpha-123456');
    expect(context.token).toBe('key-alpha-123456');
    const card = await transport.send<AgentCard>(get_card, 'secure');
    expect(card.securitySchemes).toEqual({
      apiKey: { type: 'apiKey', scheme: null, description: 'API key authentication', metadata: {} },
    });
    await expect(new RuntimeTransport().authenticate('x')).rejects.toBeInstanceOf(ValueError);
  });
});
