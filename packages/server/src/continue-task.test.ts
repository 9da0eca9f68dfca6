import {
  AgentError,
  TaskNotFoundError,
  createMessage,
  createTask,
  type Task,
  type TaskEvent,
  type TaskHandler,
  silentLogger,
} from '@agent/core';
import { finalStatusEvent } from '@agent/core/internal';
import { APIKeyAuth } from '@agent/auth';
import { ServerPipeline } from './pipeline.js';
import type { RequestInfo } from './request.js';

function request(headers: Record<string, string> = {}): RequestInfo {
  return { headers, signal: new AbortController().signal };
}

/** Asks for input on the first turn, completes on the second: an agent that talks back. */
function askingHandler(): TaskHandler & { runs: number } {
  const reply = (t: Task): Task => {
    const turns = t.messages.filter((m) => m.role === 'user').length;
    const text = turns === 1 ? 'what is your name?' : `hello ${String(t.messages.at(-1)?.parts[0]?.content)}`;
    return {
      ...t,
      state: turns === 1 ? 'input-required' : 'completed',
      messages: [...t.messages, createMessage(text, { role: 'agent' })],
    };
  };
  const h = {
    runs: 0,
    handleTask: async (t: Task) => {
      h.runs++;
      return reply(t);
    },
    async *handleTaskStreaming(t: Task): AsyncIterable<TaskEvent> {
      h.runs++;
      yield {
        type: 'task.status',
        task_id: t.id,
        state: 'working',
        final: false,
        timestamp: new Date().toISOString(),
      };
      yield finalStatusEvent(reply(t));
    },
    cancelTask: async (id: string): Promise<Task> => {
      throw new TaskNotFoundError(`Task ${id} is not active`);
    },
    getAgentCard: () => ({ name: 'a', description: '', url: '' }),
  };
  return h;
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

async function failure(promise: Promise<unknown>): Promise<AgentError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgentError);
  return error as AgentError;
}

describe('ServerPipeline.continueTask', () => {
  it('runs a waiting task again with the new message, numbering its events after the first run', async () => {
    const handler = askingHandler();
    const pipeline = new ServerPipeline({ transport: 'http', handler, logger: silentLogger });
    const call = await pipeline.open(request());
    const first = await pipeline.send(call, createTask(createMessage('hi')));
    expect(first.state).toBe('input-required');

    const second = await pipeline.continueTask(
      await pipeline.open(request()),
      first.id,
      createMessage('Ada'),
    );
    expect(second.state).toBe('completed');
    expect(second.id).toBe(first.id);
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
    expect(second.messages.at(-1)?.parts[0]?.content).toBe('hello Ada');

    const events = await collect(pipeline.subscribe(await pipeline.open(request()), { task_id: first.id }));
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect(events.filter((e) => e.type === 'task.status' && e.final)).toHaveLength(2);
    const stored = await pipeline.get(await pipeline.open(request()), { task_id: first.id });
    expect(stored.state).toBe('completed');
  });

  it('streams a continuation, and a subscriber from 0 sees the earlier run first', async () => {
    const handler = askingHandler();
    const pipeline = new ServerPipeline({ transport: 'http', handler, logger: silentLogger });
    const first = await collect(
      pipeline.stream(await pipeline.open(request()), createTask(createMessage('hi'))),
    );
    const taskId = first[0]!.task_id;
    expect(first.map((e) => e.sequence)).toEqual([1, 2]);

    const feed = pipeline.continueStream(await pipeline.open(request()), taskId, createMessage('Bo'));
    const continued = await collect(feed);
    expect(continued.map((e) => e.sequence)).toEqual([3, 4]);
    const last = continued.at(-1);
    expect(last?.type === 'task.status' && last.state).toBe('completed');

    const all = await collect(
      pipeline.subscribe(await pipeline.open(request()), { task_id: taskId, after: 1 }),
    );
    expect(all.map((e) => e.sequence)).toEqual([2, 3, 4]);
  });

  it('refuses an unknown id, a finished task and a stranger exactly as the rules say', async () => {
    const handler = askingHandler();
    const auth = new APIKeyAuth({ validKeys: { 'alice-key-1': [], 'bobby-key-2': [] } });
    const pipeline = new ServerPipeline({
      transport: 'http',
      handler,
      logger: silentLogger,
      authenticator: auth,
    });
    const alice = (): Promise<ReturnType<typeof pipeline.open> extends Promise<infer C> ? C : never> =>
      pipeline.open(request({ 'x-api-key': 'alice-key-1' }));
    const bob = pipeline.open(request({ 'x-api-key': 'bobby-key-2' }));
    const waiting = await pipeline.send(await alice(), createTask(createMessage('hi')));

    const unknown = await failure(pipeline.continueTask(await alice(), 'no-such-task', createMessage('x')));
    const stranger = await failure(pipeline.continueTask(await bob, waiting.id, createMessage('x')));
    expect(unknown.code).toBe('TASK_NOT_FOUND');
    expect(stranger.code).toBe('TASK_NOT_FOUND');
    expect(stranger.message).toBe(`Task ${waiting.id} not found`);

    const done = await pipeline.continueTask(await alice(), waiting.id, createMessage('Cy'));
    expect(done.state).toBe('completed');
    const finished = await failure(pipeline.continueTask(await alice(), waiting.id, createMessage('again')));
    expect(finished.code).toBe('UNSUPPORTED_OPERATION');
    expect(handler.runs).toBe(2);

    const invalid = await failure(pipeline.continueTask(await alice(), waiting.id, { id: '' } as never));
    expect(invalid.code).toBe('VALIDATION_FAILED');
  });

  it('lets one of two racing continuations run; the other is told the task is running', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handler = askingHandler();
    const slow: TaskHandler = {
      ...handler,
      handleTask: async (t) => {
        if (t.messages.length > 1) await gate;
        return handler.handleTask(t, {} as never);
      },
    };
    const pipeline = new ServerPipeline({ transport: 'http', handler: slow, logger: silentLogger });
    const waiting = await pipeline.send(await pipeline.open(request()), createTask(createMessage('hi')));
    const a = pipeline.continueTask(await pipeline.open(request()), waiting.id, createMessage('A'));
    const b = pipeline.continueTask(await pipeline.open(request()), waiting.id, createMessage('B'));
    // One is refused while the other still waits at the gate.
    const first = await Promise.race(
      [a, b].map((p) =>
        p.then(
          () => 'ran',
          (e: AgentError) => e.code,
        ),
      ),
    );
    expect(first).toBe('TASK_ALREADY_RUNNING');
    release();
    const results = await Promise.allSettled([a, b]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});

describe('ServerPipeline.open with deferTenant, and scope()', () => {
  it('authenticates first and checks the tenant named later', async () => {
    const auth = new APIKeyAuth({ validKeys: { 'alice-key-1': [] }, tenants: { 'alice-key-1': ['t1'] } });
    const pipeline = new ServerPipeline({
      transport: 'http',
      handler: askingHandler(),
      logger: silentLogger,
      authenticator: auth,
    });
    const refused = await failure(pipeline.open(request({ 'x-api-key': 'nope' }), { deferTenant: true }));
    expect(refused.code).toBe('UNAUTHENTICATED');
    // Without deferring, no tenant named means "" which this principal may not use.
    expect((await failure(pipeline.open(request({ 'x-api-key': 'alice-key-1' })))).code).toBe(
      'PERMISSION_DENIED',
    );

    const call = await pipeline.open(request({ 'x-api-key': 'alice-key-1' }), { deferTenant: true });
    const scoped = pipeline.scope(call, 't1');
    expect(scoped.owner).toEqual({ tenant: 't1', principal_id: call.owner.principal_id });
    expect(() => pipeline.scope(call, 't2')).toThrow(expect.objectContaining({ code: 'PERMISSION_DENIED' }));
    expect(() => pipeline.scope(call, 'bad tenant/')).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
    expect(() => pipeline.scope(call, undefined)).toThrow(
      expect.objectContaining({ code: 'PERMISSION_DENIED' }),
    );
  });
});
