import {
  AgentError,
  TaskNotFoundError,
  createMessage,
  createTask,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
  createJsonLogger,
  type Logger,
} from '@agent/core';
import { finalStatusEvent, handOverEvents } from '@agent/core/internal';
import { APIKeyAuth, SecurityContext } from '@agent/auth';
import { ANONYMOUS_PRINCIPAL } from '@agent/core';
import { ServerPipeline, SHUTDOWN_REASON } from './pipeline.js';
import type { RequestInfo } from './request.js';

function capture(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { logger: createJsonLogger({ write: (line) => lines.push(JSON.parse(line)) }), lines };
}

const OWNER = { tenant: '', principal_id: ANONYMOUS_PRINCIPAL };

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

function request(headers: Record<string, string> = {}): RequestInfo {
  return { headers, signal: new AbortController().signal };
}

function task(text = 'hi'): Task {
  return createTask(createMessage(text, { role: 'user' }));
}

function handler(overrides: Partial<TaskHandler>): TaskHandler {
  return {
    handleTask: async (t) => ({ ...t, state: 'completed' }),
    async *handleTaskStreaming(t) {
      yield finalStatusEvent({ ...t, state: 'completed' });
    },
    cancelTask: async (id) => {
      throw new TaskNotFoundError(`Task ${id} is not active`);
    },
    getAgentCard: () => ({ name: 'a', description: '', url: '' }),
    ...overrides,
  };
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

describe('ServerPipeline', () => {
  it('masks an unexpected error and logs it under the same id', async () => {
    const { logger, lines } = capture();
    const pipeline = new ServerPipeline({
      transport: 'http',
      logger,
      handler: handler({
        handleTask: async () => {
          throw new Error('db password rejected by 10.0.0.5:5432');
        },
      }),
    });
    const call = await pipeline.open(request());
    const error = (await pipeline.send(call, task()).catch((e: unknown) => e)) as AgentError;
    expect(error).toBeInstanceOf(AgentError);
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toBe('Internal error');
    expect(JSON.stringify(error.toJSON())).not.toContain('10.0.0.5');
    const id = (error.data as { error_id: string }).error_id;
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ error_id: id, operation: 'send_task', transport: 'http' });
    expect(JSON.stringify(lines[0])).toContain('10.0.0.5');
  });

  it('keeps an AgentError as it is and logs nothing', async () => {
    const { logger, lines } = capture();
    const pipeline = new ServerPipeline({ transport: 'ws', logger, handler: handler({}) });
    const call = await pipeline.open(request());
    const error = (await pipeline.cancel(call, { task_id: 'nope' }).catch((e: unknown) => e)) as AgentError;
    expect(error.code).toBe('TASK_NOT_FOUND');
    expect(error.message).toBe('Task nope not found');
    expect(lines).toHaveLength(0);
  });

  it('authenticates before anything else and refuses once stopping', async () => {
    const calls: string[] = [];
    const pipeline = new ServerPipeline({
      transport: 'sse',
      logger: capture().logger,
      authenticator: new APIKeyAuth({ validKeys: { k1: [] } }),
      handler: handler({
        handleTask: async (t) => {
          calls.push(t.id);
          return t;
        },
      }),
    });
    await expect(pipeline.open(request())).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(pipeline.open(request({ 'x-api-key': 'wrong' }))).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
    const call = await pipeline.open(request({ 'x-api-key': 'k1' }));
    expect(call.security?.principalId).toBeDefined();
    pipeline.beginStop();
    await expect(pipeline.open(request({ 'x-api-key': 'k1' }))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    expect(calls).toEqual([]);
  });

  it('calls runTask instead of handleTask when the handler has one', async () => {
    const seen: string[] = [];
    const pipeline = new ServerPipeline({
      transport: 'memory',
      handler: handler({
        handleTask: async (t) => {
          seen.push('handleTask');
          return t;
        },
        runTask: async (t: Task, _ctx: CallContext) => {
          seen.push('runTask');
          return t;
        },
      }),
    });
    await pipeline.send(await pipeline.open(request()), task());
    expect(seen).toEqual(['runTask']);
  });

  it('finishes a stream the handler left without a final status as failed INTERNAL', async () => {
    const t = task();
    const pipeline = new ServerPipeline({
      transport: 'grpc',
      handler: handler({
        async *handleTaskStreaming(x) {
          yield {
            type: 'task.status',
            task_id: x.id,
            state: 'working',
            final: false,
            timestamp: x.created_at,
          };
        },
      }),
    });
    const events = await collect(pipeline.stream(await pipeline.open(request()), t));
    expect(events.map((e) => e.type)).toEqual(['task.status', 'task.error', 'task.status']);
    const last = events[2] as Extract<TaskEvent, { type: 'task.status' }>;
    expect(last).toMatchObject({ final: true, state: 'failed' });
    expect(last.task?.metadata.error).toMatchObject({ code: 'INTERNAL' });
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    // The run is an in-flight call until its last store write is done, a moment after the caller's end.
    await until(() => pipeline.activeCalls === 0);
    await expect(pipeline.tasks.lookup(OWNER, t.id)).resolves.toHaveProperty('record');
  });

  it("copies what a handler's stream yields, unless the stream hands its events over", async () => {
    const yielded: TaskEvent[] = [];
    const progress = (t: Task): TaskEvent => {
      const event = {
        type: 'task.progress',
        task_id: t.id,
        timestamp: t.created_at,
        message: 'half',
      } as unknown as TaskEvent;
      yielded.push(event);
      return event;
    };
    const stream = (handsOver: boolean) =>
      handler({
        handleTaskStreaming(t) {
          const events = (async function* () {
            const event = progress(t);
            yield event;
            // A handler that reuses its object after yielding it must not rewrite what was recorded.
            (event as unknown as { message: string }).message = 'rewritten';
            yield finalStatusEvent({ ...t, state: 'completed' });
          })();
          return handsOver ? handOverEvents(events) : events;
        },
      });
    for (const handsOver of [false, true]) {
      yielded.length = 0;
      const pipeline = new ServerPipeline({ transport: 'http', handler: stream(handsOver) });
      const t = task();
      const events = await collect(pipeline.stream(await pipeline.open(request()), t));
      expect(events.map((e) => e.sequence)).toEqual([1, 2]);
      await until(() => pipeline.activeCalls === 0);
      const stored = await pipeline.tasks.store.listTaskEvents(OWNER, t.id);
      if (handsOver) {
        // Numbered in place: the reader got the handler's own object, which a handing-over
        // handler promises never to touch again (this one breaks that promise, to show it).
        expect(events[0]).toBe(yielded[0]);
        expect(yielded[0]).toMatchObject({ sequence: 1, message: 'rewritten' });
      } else {
        expect(events[0]).not.toBe(yielded[0]);
        expect(yielded[0]).not.toHaveProperty('sequence');
        expect(events[0]).toMatchObject({ sequence: 1, message: 'half' });
        expect(stored[0]!.event).toMatchObject({ sequence: 1, message: 'half' });
      }
    }
  });

  it('wakes every waiting follower at each event, also a caller that asks again before an answer', async () => {
    let release!: () => void;
    let waits = 0;
    const pipeline = new ServerPipeline({
      transport: 'http',
      handler: handler({
        async *handleTaskStreaming(t) {
          for (const message of ['one', 'two', 'three']) {
            await new Promise<void>((resolve) => {
              release = resolve;
              waits++;
            });
            yield {
              type: 'task.progress',
              task_id: t.id,
              timestamp: t.created_at,
              message,
            } as unknown as TaskEvent;
          }
          yield finalStatusEvent({ ...t, state: 'completed' });
        },
      }),
    });
    const t = task();
    const starter = pipeline.stream(await pipeline.open(request()), t);
    const first = starter.next();
    await until(() => waits === 1);
    const follower = pipeline.subscribe(await pipeline.open(request()), { task_id: t.id });
    const order: string[] = [];
    const message = (step: IteratorResult<TaskEvent>) => (step.value as { message?: string }).message;
    // Two asks of the starter before either is answered, and one of the follower, all waiting.
    const asks = [
      first.then((step) => order.push(`starter ${message(step)}`)),
      starter.next().then((step) => order.push(`starter ${message(step)}`)),
      follower.next().then((step) => order.push(`follower ${message(step)}`)),
    ];
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toEqual([]);
    release();
    await until(() => order.length === 2);
    expect([...order].sort()).toEqual(['follower one', 'starter one']);
    await until(() => waits === 2);
    release();
    await Promise.all(asks);
    expect(order.at(-1)).toBe('starter two');
    expect(message(await follower.next())).toBe('two');
    // Asked twice again while it waits for the next event: the first ask gets it, the second the one after.
    const third = starter.next();
    const fourth = starter.next();
    await until(() => waits === 3);
    release();
    expect(message(await third)).toBe('three');
    expect((await fourth).value).toMatchObject({ sequence: 4, final: true });
    expect((await starter.next()).done).toBe(true);
    expect((await collect(follower)).map((e) => e.sequence)).toEqual([3, 4]);
  });

  it('rejects the first next() of a stream that fails before its first event', async () => {
    const { logger } = capture();
    const pipeline = new ServerPipeline({
      transport: 'sse',
      logger,
      handler: handler({
        // eslint-disable-next-line require-yield
        async *handleTaskStreaming() {
          throw new Error('secret path /etc/x');
        },
      }),
    });
    const stream = pipeline.stream(await pipeline.open(request()), task());
    await expect(stream.next()).rejects.toMatchObject({ code: 'INTERNAL', message: 'Internal error' });
    const invalid = pipeline.stream(await pipeline.open(request()), { id: 1 });
    await expect(invalid.next()).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    // The failed run is an in-flight call until its ending is stored, a moment after its caller's answer.
    await until(() => pipeline.activeCalls === 0);
  });

  it('drain lets calls finish within the grace, then cancels the rest with the shutdown reason', async () => {
    const reasons: string[] = [];
    let release: ((t: Task) => void) | undefined;
    const pipeline = new ServerPipeline({
      transport: 'http',
      handler: handler({
        handleTask: (t) =>
          new Promise<Task>((resolve) => {
            release = resolve;
            void t;
          }),
        cancelTask: async (id, reason) => {
          reasons.push(reason ?? '');
          const canceled = { ...task(), id, state: 'canceled' as const };
          release?.(canceled);
          return canceled;
        },
      }),
    });
    pipeline.markReady();
    const answer = pipeline.send(await pipeline.open(request()), task());
    await pipeline.drain(50);
    await expect(answer).resolves.toMatchObject({ state: 'canceled' });
    expect(reasons).toEqual([SHUTDOWN_REASON]);
    expect(pipeline.state).toBe('stopping');
  });

  it('refuses new tasks on a call opened before the stop, but still lets it cancel', async () => {
    const canceled: string[] = [];
    let finish: ((t: Task) => void) | undefined;
    const pipeline = new ServerPipeline({
      transport: 'ws',
      handler: handler({
        handleTask: (t) => new Promise<Task>((resolve) => (finish = () => resolve(t))),
        cancelTask: async (id) => {
          canceled.push(id);
          const done: Task = { ...task(), id, state: 'canceled' };
          finish?.(done);
          return done;
        },
      }),
    });
    pipeline.markReady();
    const call = await pipeline.open(request());
    const running = task();
    const answer = pipeline.send(call, running);
    await until(() => finish !== undefined);
    pipeline.beginStop();
    await expect(pipeline.send(call, task())).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(pipeline.stream(call, task()).next()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(pipeline.cancel(call, { task_id: running.id })).resolves.toMatchObject({
      state: 'canceled',
    });
    expect(canceled).toEqual([running.id]);
    await expect(answer).resolves.toMatchObject({ id: running.id });
  });
});

/** Accepts the key `k` and hands the pipeline whatever `metadata.tenants` the case asks for. */
class TenantListAuth extends APIKeyAuth {
  constructor(private readonly restriction: unknown) {
    super({ validKeys: { k: [] } });
  }
  override async authenticate(credentials: string): Promise<SecurityContext> {
    const context = await super.authenticate(credentials);
    const metadata = this.restriction === undefined ? {} : { tenants: this.restriction as string[] };
    return new SecurityContext({ principalId: 'p-1', token: context.token, expiresAt: null, metadata });
  }
}

describe('ServerPipeline tenants', () => {
  function recording(): { pipeline: (auth?: APIKeyAuth) => ServerPipeline; seen: CallContext[] } {
    const seen: CallContext[] = [];
    const recorder = handler({
      handleTask: async (t, ctx) => {
        seen.push(ctx);
        return { ...t, state: 'completed' };
      },
      async *handleTaskStreaming(t, ctx) {
        seen.push(ctx);
        yield finalStatusEvent({ ...t, state: 'completed' });
      },
    });
    return {
      seen,
      pipeline: (authenticator) =>
        new ServerPipeline({ transport: 'http', handler: recorder, authenticator }),
    };
  }

  async function refusal(promise: Promise<unknown>): Promise<AgentError> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentError);
    return error as AgentError;
  }

  it('defaults to the tenant "" and the anonymous owner without an authenticator', async () => {
    const { pipeline, seen } = recording();
    const call = await pipeline().open(request());
    expect(call.tenant).toBe('');
    expect(call.owner).toEqual({ tenant: '', principal_id: ANONYMOUS_PRINCIPAL });
    await pipeline().send(call, task());
    expect(seen[0]!.tenant).toBe('');
  });

  it('reads the x-tenant header and hands it to the handler on send and stream', async () => {
    const { pipeline, seen } = recording();
    const p = pipeline();
    const call = await p.open(request({ 'x-tenant': 'acme.eu:prod-1_a' }));
    expect(call.tenant).toBe('acme.eu:prod-1_a');
    await p.send(call, task());
    await collect(p.stream(await p.open(request({ 'x-tenant': 'acme' })), task()));
    expect(seen.map((ctx) => ctx.tenant)).toEqual(['acme.eu:prod-1_a', 'acme']);
  });

  it("prefers the wire's own carrier over the header", async () => {
    const { pipeline } = recording();
    const call = await pipeline().open({ ...request({ 'x-tenant': 'from-header' }), tenant: 'from-query' });
    expect(call.tenant).toBe('from-query');
  });

  it.each([
    ['a space', 'acme corp'],
    ['a slash', 'acme/eu'],
    ['129 characters', 'a'.repeat(129)],
    ['a non-ASCII letter', 'acmé'],
  ])('refuses a tenant with %s as INVALID_REQUEST, never echoing it', async (_, tenant) => {
    const { pipeline } = recording();
    const error = await refusal(pipeline().open(request({ 'x-tenant': tenant })));
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.message).not.toContain(tenant);
  });

  it('refuses an x-tenant header sent twice', async () => {
    const { pipeline } = recording();
    const twice: RequestInfo = { headers: { 'x-tenant': ['a', 'b'] }, signal: new AbortController().signal };
    expect((await refusal(pipeline().open(twice))).code).toBe('INVALID_REQUEST');
  });

  it('accepts 128 characters', async () => {
    const { pipeline } = recording();
    const tenant = 'a'.repeat(128);
    expect((await pipeline().open(request({ 'x-tenant': tenant }))).tenant).toBe(tenant);
  });

  it('lets a restricted principal act for a tenant of its list, owned by tenant and principal', async () => {
    const { pipeline } = recording();
    const call = await pipeline(new TenantListAuth(['acme', 'globex'])).open(
      request({ 'x-api-key': 'k', 'x-tenant': 'globex' }),
    );
    expect(call.owner).toEqual({ tenant: 'globex', principal_id: 'p-1' });
  });

  it('refuses a tenant outside the list, and naming none, with PERMISSION_DENIED that names no tenant', async () => {
    const { pipeline, seen } = recording();
    const p = pipeline(new TenantListAuth(['acme-secret-tenant']));
    const attempts: Record<string, string>[] = [
      { 'x-api-key': 'k', 'x-tenant': 'globex' },
      { 'x-api-key': 'k' },
    ];
    for (const headers of attempts) {
      const error = await refusal(p.open(request(headers)));
      expect(error.code).toBe('PERMISSION_DENIED');
      expect(JSON.stringify(error.toJSON())).not.toContain('acme');
      expect(JSON.stringify(error.toJSON())).not.toContain('globex');
    }
    expect(seen).toEqual([]);
  });

  it('allows naming none when the list holds ""', async () => {
    const { pipeline } = recording();
    expect(
      (await pipeline(new TenantListAuth(['', 'acme'])).open(request({ 'x-api-key': 'k' }))).tenant,
    ).toBe('');
  });

  it('fails closed on a restriction that is not a list', async () => {
    const { pipeline } = recording();
    const error = await refusal(
      pipeline(new TenantListAuth('acme')).open(request({ 'x-api-key': 'k', 'x-tenant': 'acme' })),
    );
    expect(error.code).toBe('PERMISSION_DENIED');
  });

  it('authenticates before it looks at the tenant', async () => {
    const { pipeline } = recording();
    const error = await refusal(
      pipeline(new TenantListAuth(['acme'])).open(request({ 'x-tenant': 'bad tenant' })),
    );
    expect(error.code).toBe('UNAUTHENTICATED');
  });

  it("runs a further call on a connection under the connection's tenant", async () => {
    const { pipeline } = recording();
    const p = pipeline();
    const connection = await p.open(request({ 'x-tenant': 'acme' }));
    const frame = p.openOn(connection, request({ 'x-tenant': 'other' }));
    expect(frame.tenant).toBe('acme');
    expect(frame.owner).toEqual({ tenant: 'acme', principal_id: ANONYMOUS_PRINCIPAL });
  });
});
