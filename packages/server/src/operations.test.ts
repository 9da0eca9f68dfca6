/**
 * The pipeline's operational rules: one request log line per answered request, the metrics it
 * records, and the limits it refuses work with (at once, never queued).
 */
import { APIKeyAuth } from '@agent/auth';
import {
  ConcurrencyLimit,
  createJsonLogger,
  createMessage,
  createTask,
  type AgentError,
  type Logger,
  type Task,
  type TaskEvent,
  type TaskHandler,
} from '@agent/core';
import { finalStatusEvent } from '@agent/core/internal';
import { PipelineMetrics } from './metrics/pipeline-metrics.js';
import { ServerPipeline, type ServerPipelineOptions } from './pipeline.js';
import { RateLimiter } from './rate-limit.js';
import { CallerTaskLimit } from './caller-limit.js';
import type { RequestInfo } from './request.js';
import { parsePrometheusText, sampleValue } from './testing/prometheus-text.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

function capture(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { logger: createJsonLogger({ write: (line) => lines.push(JSON.parse(line)) }), lines };
}

function request(headers: Record<string, string> = {}, remoteAddress = '127.0.0.1'): RequestInfo {
  return { headers, remoteAddress, signal: new AbortController().signal };
}

function task(text = 'hi'): Task {
  return createTask(createMessage(text, { role: 'user' }));
}

/** A handler whose tasks run until the test lets them go (a stream gives one progress event first). */
function gatedHandler(): { handler: TaskHandler; release: () => void; started: () => number } {
  const waiting: (() => void)[] = [];
  let started = 0;
  const gate = (): Promise<void> => new Promise<void>((resolve) => waiting.push(resolve));
  const handler: TaskHandler = {
    handleTask: async (t) => {
      started++;
      await gate();
      return { ...t, state: 'completed' };
    },
    async *handleTaskStreaming(t) {
      started++;
      yield { type: 'task.progress', task_id: t.id, timestamp: new Date().toISOString() } as TaskEvent;
      await gate();
      yield finalStatusEvent({ ...t, state: 'completed' });
    },
    cancelTask: async (id) => ({ ...task(), id, state: 'canceled' }),
    getAgentCard: () => ({ name: 'a', description: '', url: '' }),
  };
  return {
    handler,
    release: () => waiting.splice(0).forEach((resolve) => resolve()),
    started: () => started,
  };
}

/** A handler that completes every task at once (a stream: one progress event, then the end). */
function plainHandler(): TaskHandler {
  return {
    handleTask: async (t) => ({ ...t, state: 'completed' }),
    async *handleTaskStreaming(t) {
      yield { type: 'task.progress', task_id: t.id, timestamp: new Date().toISOString() } as TaskEvent;
      yield finalStatusEvent({ ...t, state: 'completed' });
    },
    cancelTask: async (id) => ({ ...task(), id, state: 'canceled' }),
    getAgentCard: () => ({ name: 'a', description: '', url: '' }),
  };
}

function pipeline(options: Partial<ServerPipelineOptions> & { handler: TaskHandler }): ServerPipeline {
  const created = new ServerPipeline({ transport: 'http', ...options });
  created.markReady();
  return created;
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    return error as AgentError;
  }
  throw new Error('expected a rejection');
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

const requestLines = (lines: Record<string, unknown>[]) => lines.filter((line) => line.msg === 'request');

describe('request log', () => {
  it('writes one info line per answered request with who, what, how it ended and how long it took', async () => {
    const { logger, lines } = capture();
    const auth = new APIKeyAuth({ validKeys: { 'sk-operations-secret': [] } });
    const p = pipeline({ handler: plainHandler(), logger, logRequests: true, authenticator: auth });
    const headers = {
      'x-api-key': 'sk-operations-secret',
      'x-tenant': 'acme',
      traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01`,
    };
    const sent = await p.send(await p.open(request(headers)), task());
    const events = await collect(p.stream(await p.open(request(headers)), task()));
    await rejection(p.get(await p.open(request(headers)), { task_id: 'nope' }));
    await rejection(p.open(request({ 'x-api-key': 'sk-wrong-key-value' })));

    const [send, stream, get, refused] = requestLines(lines);
    expect(send).toMatchObject({
      level: 30,
      operation: 'send_task',
      transport: 'http',
      status: 'ok',
      principal_id: expect.any(String),
      tenant: 'acme',
      task_id: sent.id,
      trace_id: TRACE_ID,
    });
    expect(typeof send!.duration_ms).toBe('number');
    expect(stream).toMatchObject({ operation: 'stream_task', status: 'ok', events: events.length });
    expect(stream).not.toHaveProperty('detached');
    expect(get).toMatchObject({ operation: 'get_task', status: 'TASK_NOT_FOUND', task_id: 'nope' });
    expect(refused).toMatchObject({ operation: 'open', status: 'UNAUTHENTICATED', tenant: '' });
    expect(refused).not.toHaveProperty('principal_id');
    for (const line of lines) {
      expect(JSON.stringify(line)).not.toContain('sk-operations-secret');
      expect(JSON.stringify(line)).not.toContain('sk-wrong-key-value');
    }
  });

  it('marks a stream its caller left before the end as detached', async () => {
    const { logger, lines } = capture();
    const gated = gatedHandler();
    const p = pipeline({ handler: gated.handler, logger, logRequests: true });
    const feed = p.stream(await p.open(request()), task());
    const first = await feed.next();
    expect(first.done).toBe(false);
    await feed.return();
    expect(requestLines(lines)).toEqual([
      expect.objectContaining({ operation: 'stream_task', status: 'ok', events: 1, detached: true }),
    ]);
    gated.release();
  });

  it('writes nothing per request unless logRequests is on', async () => {
    const { logger, lines } = capture();
    const p = pipeline({ handler: plainHandler(), logger });
    await p.send(await p.open(request()), task());
    expect(lines).toEqual([]);
  });
});

describe('maxConcurrentTasks', () => {
  it('refuses send and stream at once with UNAVAILABLE and retry_after_ms while every slot is taken', async () => {
    const gated = gatedHandler();
    const p = pipeline({ handler: gated.handler, maxConcurrentTasks: 1 });
    const running = p.send(await p.open(request()), task());
    await until(() => gated.started() === 1);

    const refused = await rejection(p.send(await p.open(request()), task()));
    expect(refused.code).toBe('UNAVAILABLE');
    expect(refused.httpStatus).toBe(503);
    expect(refused.data).toEqual({ retry_after_ms: 1000, limit: 'tasks' });
    const streamed = await rejection(p.stream(await p.open(request()), task()).next());
    expect(streamed).toMatchObject({ code: 'UNAVAILABLE', data: { retry_after_ms: 1000 } });
    expect(gated.started()).toBe(1);

    // Reads are not task runs: they pass.
    await expect(p.list(await p.open(request()), {})).resolves.toBeDefined();

    gated.release();
    await running;
    // The slot came back with the end of the run.
    const next = p.send(await p.open(request()), task());
    await until(() => gated.started() === 2);
    gated.release();
    await expect(next).resolves.toMatchObject({ state: 'completed' });
  });

  it('bounds the transports given one ConcurrencyLimit together', async () => {
    const gated = gatedHandler();
    const limit = new ConcurrencyLimit(1, { name: 'tasks', retryAfterMs: 250 });
    const http = pipeline({ handler: gated.handler, maxConcurrentTasks: limit });
    const grpc = new ServerPipeline({ transport: 'grpc', handler: gated.handler, maxConcurrentTasks: limit });
    grpc.markReady();
    const running = http.send(await http.open(request()), task());
    await until(() => gated.started() === 1);
    const refused = await rejection(grpc.send(await grpc.open(request()), task()));
    expect(refused).toMatchObject({ code: 'UNAVAILABLE', data: { retry_after_ms: 250, limit: 'tasks' } });
    gated.release();
    await running;
    expect(limit.active).toBe(0);
  });

  it('refuses an invalid maxConcurrentTasks with a ValueError naming it', () => {
    for (const maxConcurrentTasks of [0, 1.5, '3']) {
      expect(() =>
        pipeline({ handler: plainHandler(), maxConcurrentTasks: maxConcurrentTasks as number }),
      ).toThrow(expect.objectContaining({ code: 'VALUE_ERROR', data: { option: 'maxConcurrentTasks' } }));
    }
  });
});

describe('maxConcurrentTasksPerCaller', () => {
  it('refuses a caller past its share with UNAVAILABLE while other callers still start tasks, and gives the share back as its runs end', async () => {
    const gated = gatedHandler();
    const auth = new APIKeyAuth({
      validKeys: { 'sk-alice-key-1': [], 'sk-bobby-key-2': [], 'sk-carol-key-3': [] },
    });
    const p = pipeline({
      handler: gated.handler,
      authenticator: auth,
      maxConcurrentTasks: 4,
      maxConcurrentTasksPerCaller: 2,
    });
    const alice = request({ 'x-api-key': 'sk-alice-key-1' });
    const bob = request({ 'x-api-key': 'sk-bobby-key-2' });
    const first = p.send(await p.open(alice), task());
    const second = collect(p.stream(await p.open(alice), task()));
    await until(() => gated.started() === 2);

    const refused = await rejection(p.send(await p.open(alice), task()));
    expect(refused).toMatchObject({
      code: 'UNAVAILABLE',
      httpStatus: 503,
      data: { retry_after_ms: 1000, limit: 'tasks_per_caller' },
    });
    expect(refused.message).toContain('at most 2');
    const streamRefused = await rejection(p.stream(await p.open(alice), task()).next());
    expect(streamRefused).toMatchObject({ code: 'UNAVAILABLE', data: { limit: 'tasks_per_caller' } });
    expect(gated.started()).toBe(2);

    // Another principal is not held back by alice's share.
    const bobs = [p.send(await p.open(bob), task()), p.send(await p.open(bob), task())];
    await until(() => gated.started() === 4);
    // …but the shared limit still bounds everyone.
    const carol = request({ 'x-api-key': 'sk-carol-key-3' });
    const full = await rejection(p.send(await p.open(carol), task()));
    expect(full).toMatchObject({ code: 'UNAVAILABLE', data: { limit: 'tasks' } });

    gated.release();
    await Promise.all([first, second, ...bobs]);
    const again = p.send(await p.open(alice), task());
    await until(() => gated.started() === 5);
    gated.release();
    await expect(again).resolves.toMatchObject({ state: 'completed' });
  });

  it('tells anonymous callers apart by their address', async () => {
    const gated = gatedHandler();
    const p = pipeline({ handler: gated.handler, maxConcurrentTasksPerCaller: 1 });
    const running = p.send(await p.open(request({}, '10.0.0.1')), task());
    await until(() => gated.started() === 1);
    const refused = await rejection(p.send(await p.open(request({}, '10.0.0.1')), task()));
    expect(refused).toMatchObject({ code: 'UNAVAILABLE', data: { limit: 'tasks_per_caller' } });
    const other = p.send(await p.open(request({}, '10.0.0.2')), task());
    await until(() => gated.started() === 2);
    gated.release();
    await Promise.all([running, other]);
  });

  it('keeps no slot of a caller whose task the shared limit refused, nor of a resubmitted running id', async () => {
    const gated = gatedHandler();
    const callers = new CallerTaskLimit(2);
    const shared = new ConcurrencyLimit(2, { name: 'tasks' });
    const p = pipeline({
      handler: gated.handler,
      maxConcurrentTasks: shared,
      maxConcurrentTasksPerCaller: callers,
    });
    const t = task();
    const running = p.send(await p.open(request()), t);
    await until(() => gated.started() === 1);
    // The same id again attaches to the run: it takes no slot of its own.
    const attached = p.send(await p.open(request()), t);
    const other = p.send(await p.open(request({}, '10.0.0.8')), task());
    await until(() => gated.started() === 2);
    expect(callers.active('anonymous@127.0.0.1')).toBe(1);
    const refused = await rejection(p.send(await p.open(request({}, '10.0.0.9')), task()));
    expect(refused).toMatchObject({ data: { limit: 'tasks' } });
    expect(callers.active('anonymous@10.0.0.9')).toBe(0);
    gated.release();
    await Promise.all([running, attached, other]);
    expect(callers.callers).toBe(0);
    expect(shared.active).toBe(0);
  });

  it('counts a caller across the pipelines given one CallerTaskLimit', async () => {
    const gated = gatedHandler();
    const callers = new CallerTaskLimit(1, { retryAfterMs: 250 });
    const http = pipeline({ handler: gated.handler, maxConcurrentTasksPerCaller: callers });
    const grpc = new ServerPipeline({
      transport: 'grpc',
      handler: gated.handler,
      maxConcurrentTasksPerCaller: callers,
    });
    grpc.markReady();
    const running = http.send(await http.open(request()), task());
    await until(() => gated.started() === 1);
    const refused = await rejection(grpc.send(await grpc.open(request()), task()));
    expect(refused).toMatchObject({
      code: 'UNAVAILABLE',
      data: { retry_after_ms: 250, limit: 'tasks_per_caller' },
    });
    gated.release();
    await running;
    expect(callers.callers).toBe(0);
  });

  it('refuses an invalid maxConcurrentTasksPerCaller with a ValueError naming it', () => {
    for (const value of [0, 1.5, '3', null]) {
      expect(() =>
        pipeline({ handler: plainHandler(), maxConcurrentTasksPerCaller: value as number }),
      ).toThrow(
        expect.objectContaining({ code: 'VALUE_ERROR', data: { option: 'maxConcurrentTasksPerCaller' } }),
      );
    }
    expect(() => new CallerTaskLimit(2, { retryAfterMs: -1 })).toThrow(/CallerTaskLimit retryAfterMs/);
  });
});

describe('rateLimit', () => {
  it("refuses a principal past its bucket with RESOURCE_EXHAUSTED and retry_after_ms, other principals' calls and cancels pass", async () => {
    const now = 0;
    const limiter = new RateLimiter({ perSecond: 1, burst: 2, now: () => now });
    const auth = new APIKeyAuth({ validKeys: { 'sk-alice-key-1': [], 'sk-bobby-key-2': [] } });
    const p = pipeline({ handler: plainHandler(), authenticator: auth, rateLimit: limiter });
    const alice = request({ 'x-api-key': 'sk-alice-key-1' });
    const sent = await p.send(await p.open(alice), task());
    await p.get(await p.open(alice), { task_id: sent.id });
    const refused = await rejection(p.list(await p.open(alice), {}));
    expect(refused).toMatchObject({
      code: 'RESOURCE_EXHAUSTED',
      data: { retry_after_ms: 1000, limit: 'rate' },
    });
    expect(refused.httpStatus).toBe(429);
    const streamRefused = await rejection(p.stream(await p.open(alice), task()).next());
    expect(streamRefused.code).toBe('RESOURCE_EXHAUSTED');
    // A cancel is how a caller stops its own work: never rate limited.
    await expect(p.cancel(await p.open(alice), { task_id: sent.id })).rejects.toMatchObject({
      code: 'TASK_NOT_CANCELABLE',
    });
    await expect(
      p.send(await p.open(request({ 'x-api-key': 'sk-bobby-key-2' })), task()),
    ).resolves.toBeDefined();
  });

  it('tells anonymous callers apart by their address', async () => {
    const limiter = new RateLimiter({ perSecond: 1, burst: 1, now: () => 0 });
    const p = pipeline({ handler: plainHandler(), rateLimit: limiter });
    await p.send(await p.open(request({}, '10.0.0.1')), task());
    await expect(p.send(await p.open(request({}, '10.0.0.1')), task())).rejects.toMatchObject({
      code: 'RESOURCE_EXHAUSTED',
    });
    await expect(p.send(await p.open(request({}, '10.0.0.2')), task())).resolves.toBeDefined();
  });
});

describe('metrics', () => {
  it('counts requests by operation, transport and outcome, runs by final state, and active tasks and streams', async () => {
    const metrics = new PipelineMetrics({ meter: false });
    const gated = gatedHandler();
    const p = pipeline({ handler: gated.handler, metrics, maxConcurrentTasks: 1 });
    const running = p.send(await p.open(request()), task());
    await until(() => gated.started() === 1);
    await rejection(p.send(await p.open(request()), task()));
    let families = parsePrometheusText(metrics.prometheus());
    expect(sampleValue(families, 'agent_server_active_tasks', { transport: 'http' })).toBe(1);
    expect(
      sampleValue(families, 'agent_server_requests_total', {
        operation: 'send_task',
        outcome: 'UNAVAILABLE',
      }),
    ).toBe(1);
    gated.release();
    await running;
    const feed = p.stream(await p.open(request()), task());
    await feed.next();
    families = parsePrometheusText(metrics.prometheus());
    expect(sampleValue(families, 'agent_server_active_streams', { transport: 'http' })).toBe(1);
    gated.release();
    await collect(feed);
    // The run is counted once its store writes are done, which may come just after the caller's last event.
    await until(
      () => sampleValue(parsePrometheusText(metrics.prometheus()), 'agent_server_tasks_finished_total') === 2,
    );

    families = parsePrometheusText(metrics.prometheus());
    expect(
      sampleValue(families, 'agent_server_requests_total', { operation: 'send_task', outcome: 'ok' }),
    ).toBe(1);
    expect(
      sampleValue(families, 'agent_server_requests_total', { operation: 'stream_task', outcome: 'ok' }),
    ).toBe(1);
    expect(
      sampleValue(families, 'agent_server_request_duration_seconds_count', {
        operation: 'send_task',
        transport: 'http',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(sampleValue(families, 'agent_server_tasks_finished_total', { state: 'completed' })).toBe(2);
    expect(sampleValue(families, 'agent_server_active_tasks')).toBe(0);
    expect(sampleValue(families, 'agent_server_active_streams')).toBe(0);
    expect(sampleValue(families, 'agent_server_task_store_pending_writes')).toBe(0);
  });

  it('counts an operation name the wire made up as unknown', async () => {
    const metrics = new PipelineMetrics({ meter: false });
    const p = pipeline({ handler: plainHandler(), metrics });
    await rejection(p.unary(await p.open(request()), 'drop_tables', {}));
    const families = parsePrometheusText(metrics.prometheus());
    expect(sampleValue(families, 'agent_server_requests_total', { operation: 'unknown' })).toBe(1);
    expect(metrics.prometheus()).not.toContain('drop_tables');
  });

  it('records the runtime GenAI metrics it is given as a sink', () => {
    const metrics = new PipelineMetrics({ meter: false });
    const call = { operation: 'chat', provider: 'openai', requestModel: 'gpt-x' };
    metrics.recordTokenUsage(120, 'input', call);
    metrics.recordTokenUsage(30, 'output', call);
    metrics.recordOperationDuration(0.5, { ...call, errorType: 'DEADLINE_EXCEEDED' });
    const families = parsePrometheusText(metrics.prometheus());
    expect(sampleValue(families, 'gen_ai_client_token_usage_sum', { gen_ai_token_type: 'input' })).toBe(120);
    expect(
      sampleValue(families, 'gen_ai_client_operation_duration_seconds_count', {
        gen_ai_operation_name: 'chat',
        gen_ai_provider_name: 'openai',
        error_type: 'DEADLINE_EXCEEDED',
      }),
    ).toBe(1);
  });
});
