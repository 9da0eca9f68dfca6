import {
  ActionDeniedError,
  NotFoundError,
  TaskCanceledError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnsupportedOperationError,
  ValidationError,
  ValueError,
  createMessage,
  createTask,
  messageText,
  type TaskEvent,
  type Transport,
} from '@agent/core';
import { APIKeyAuth } from '@agent/auth';
import { RuntimeTransport } from '@agent/transport-memory';
import { AgentClient } from './agent-client.js';
import { SyncAgentClient } from './sync-client.js';
import type { TestAgent } from '@agent/test-support';
import { createEchoAgent } from './test-support/echo-agent.js';

describe('AgentClient over RuntimeTransport', () => {
  let transport: RuntimeTransport;
  let agent: TestAgent;
  let client: AgentClient;

  beforeEach(() => {
    transport = new RuntimeTransport();
    agent = createEchoAgent();
    transport.registerAgent(agent);
    client = new AgentClient({ transport, baseUrl: 'runtime://echo' });
  });

  afterEach(async () => {
    await client.close();
    await transport.stop();
  });

  it('sendTask resolves with the finished task', async () => {
    const task = createTask('hello');
    const result = await client.sendTask(task);
    expect(result.id).toBe(task.id);
    expect(result.state).toBe('completed');
    expect(messageText(result.messages.at(-1))).toBe('echo: hello');
  });

  it('sendTask resolves with a failed task as it is (the call itself succeeded)', async () => {
    const result = await client.sendTask(createTask('fail nope'));
    expect(result.state).toBe('failed');
    expect(result.metadata.error).toEqual({ code: 'ACTION_DENIED', message: 'nope' });
  });

  it('sendMessage wraps a string in a new task and resolves with the agent reply', async () => {
    const reply = await client.sendMessage('hi there');
    expect(reply.role).toBe('agent');
    expect(messageText(reply)).toBe('echo: hi there');
    expect(agent.calls[0]!.task.messages[0]).toMatchObject({
      role: 'user',
      parts: [{ type: 'text', content: 'hi there' }],
    });
  });

  it('sendMessage continues an existing task id with a message object', async () => {
    const message = createMessage('again');
    const reply = await client.sendMessage(message, { taskId: 'task-42' });
    expect(messageText(reply)).toBe('echo: again');
    expect(agent.calls[0]!.task.id).toBe('task-42');
    expect(agent.calls[0]!.task.messages).toEqual([message]);
  });

  it('sendMessage rethrows a failed task as its typed error, and a silent or canceled task clearly', async () => {
    const failed = await client.sendMessage('fail not allowed').catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ActionDeniedError);
    expect((failed as Error).message).toBe('not allowed');
    await expect(client.sendMessage('silent')).rejects.toBeInstanceOf(NotFoundError);

    const pending = client.sendMessage('wait', { taskId: 'held' });
    await agent.whenRunning('held');
    await client.cancelTask('held', 'enough');
    await expect(pending).rejects.toThrow(/canceled: enough/);
    await expect(client.sendMessage(42 as never)).rejects.toBeInstanceOf(ValueError);
    await expect(client.sendMessage('x', { taskId: '' })).rejects.toBeInstanceOf(ValueError);
  });

  it('cancelTask cancels a running task with its reason; unknown ids are TaskNotFoundError', async () => {
    const task = createTask('wait');
    const running = client.sendTask(task);
    await agent.whenRunning(task.id);
    const canceled = await client.cancelTask(task.id, 'user request');
    expect(canceled.state).toBe('canceled');
    expect(canceled.metadata.cancel_reason).toBe('user request');
    expect((await running).state).toBe('canceled');
    await expect(client.cancelTask('missing')).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(client.cancelTask('')).rejects.toBeInstanceOf(ValueError);
  });

  it('streamTask yields the agent events, the final status last', async () => {
    const events: TaskEvent[] = [];
    for await (const event of client.streamTask(createTask('a b c'))) events.push(event);
    expect(events.map((event) => event.type)).toEqual([
      'task.status',
      'task.artifact',
      'task.artifact',
      'task.artifact',
      'task.status',
    ]);
    expect(events.at(-1)).toMatchObject({ final: true, state: 'completed' });
  });

  it('getAgentCard returns the card', async () => {
    expect(await client.getAgentCard()).toEqual(agent.card);
  });

  it('every call honours an AbortSignal', async () => {
    const aborted = AbortSignal.abort();
    await expect(client.sendTask(createTask('x'), { signal: aborted })).rejects.toBeInstanceOf(
      TaskCanceledError,
    );
    await expect(client.getAgentCard({ signal: aborted })).rejects.toBeInstanceOf(TaskCanceledError);
    await expect(client.cancelTask('t', undefined, { signal: aborted })).rejects.toBeInstanceOf(
      TaskCanceledError,
    );
    await expect(client.sendMessage('x', { signal: aborted })).rejects.toBeInstanceOf(TaskCanceledError);
    const stream = client.streamTask(createTask('x'), { signal: aborted })[Symbol.asyncIterator]();
    await expect(stream.next()).rejects.toBeInstanceOf(TaskCanceledError);

    const controller = new AbortController();
    const task = createTask('wait');
    const call = client.sendTask(task, { signal: controller.signal });
    await agent.whenRunning(task.id);
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(TaskCanceledError);
    await client.cancelTask(task.id);
  });

  it('an unknown agent address is NotFoundError', async () => {
    const lost = new AgentClient({ transport, baseUrl: 'runtime://nobody' });
    await expect(lost.sendTask(createTask('x'))).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a malformed answer from the transport is a ValidationError, not a crash', async () => {
    const liar = { ...transport, send: async () => ({ id: 7 }) } as unknown as Transport;
    const confused = new AgentClient({ transport: liar, baseUrl: 'x' });
    await expect(confused.sendTask(createTask('x'))).rejects.toBeInstanceOf(ValidationError);
    await expect(confused.getAgentCard()).rejects.toBeInstanceOf(ValidationError);
  });

  it('rejects bad construction and bad arguments with ValueError', () => {
    expect(() => new AgentClient({ transport: undefined as never, baseUrl: 'x' })).toThrow(ValueError);
    expect(() => new AgentClient({ transport, baseUrl: 3 as never })).toThrow(ValueError);
    expect(() => new AgentClient({ transport, baseUrl: 'x', url: 'y' } as never)).toThrow(
      'AgentClient does not accept the option "url"; accepted: baseUrl, retry, syncTimeoutMs, transport',
    );
    expect(() => new SyncAgentClient(transport, 'x', { timeout: 5 } as never)).toThrow(
      'SyncAgentClient does not accept the option "timeout"; accepted: retry, timeoutMs',
    );
    expect(() => new AgentClient({ transport, baseUrl: 'x', syncTimeoutMs: 0 })).toThrow(ValueError);
    expect(() => client.streamTask(null as never)).toThrow(ValueError);
  });

  it('client.sync refuses RuntimeTransport with UnsupportedOperationError instead of deadlocking', () => {
    expect(() => client.sync.sendTask(createTask('x'))).toThrow(UnsupportedOperationError);
    expect(() => client.sync.getAgentCard()).toThrow(/deadlock/);
  });
});

describe('AgentClient over an authenticated RuntimeTransport', () => {
  it('authenticates lazily with the transport credentials; wrong ones are UnauthenticatedError', async () => {
    const validKeys = { 'client-key-0001': [] };
    const good = new RuntimeTransport({
      authenticator: new APIKeyAuth({ validKeys }),
      credentials: 'client-key-0001',
    });
    good.registerAgent(createEchoAgent());
    expect(messageText(await new AgentClient({ transport: good, baseUrl: 'echo' }).sendMessage('hi'))).toBe(
      'echo: hi',
    );

    const bad = new RuntimeTransport({
      authenticator: new APIKeyAuth({ validKeys }),
      credentials: 'other-key',
    });
    bad.registerAgent(createEchoAgent());
    await expect(
      new AgentClient({ transport: bad, baseUrl: 'echo' }).sendMessage('hi'),
    ).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});
