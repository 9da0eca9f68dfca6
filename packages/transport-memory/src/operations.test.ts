/**
 * The pipeline's request log, metrics and limits in process, as on the network transports:
 * `logRequests`, `metrics`, `maxConcurrentTasks`, `rateLimit`.
 */
import {
  CLIENT_OPERATIONS,
  ConcurrencyLimit,
  ResourceExhaustedError,
  UnavailableError,
  ValueError,
  createJsonLogger,
  createTask,
  handlerFromFunction,
  type Task,
} from '@agent/core';
import { PipelineMetrics, RateLimiter, TASKS_LIMIT_NAME } from '@agent/server';
import { RuntimeTransport } from './runtime-transport.js';
import { createEchoAgent } from './test-support/handlers.js';

const { send_task } = CLIENT_OPERATIONS;

/** An agent whose tasks wait until `release()`; `started` counts the runs that began. */
function heldAgent(name: string) {
  let release!: () => void;
  let gate = new Promise<void>((resolve) => (release = resolve));
  const waiting: Array<() => void> = [];
  let started = 0;
  const agent = handlerFromFunction(
    async (task: Task) => {
      started++;
      for (const wake of waiting.splice(0)) wake();
      await gate;
      return { ...task, state: 'completed' as const };
    },
    { card: { name, description: '', url: `runtime://${name}` } },
  );
  return {
    agent,
    get started() {
      return started;
    },
    /** Resolves once `count` runs began. */
    async running(count: number): Promise<void> {
      while (started < count) await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release(): void {
      release();
      gate = new Promise<void>((resolve) => (release = resolve));
    },
  };
}

describe('RuntimeTransport operations options', () => {
  it('maxConcurrentTasks: one over the limit is refused at once with UNAVAILABLE and retry_after_ms', async () => {
    const held = heldAgent('slow');
    const transport = new RuntimeTransport({ maxConcurrentTasks: 2 });
    transport.registerAgent(held.agent, { name: 'slow' });
    await transport.start();
    try {
      const running = [1, 2].map(() => transport.send<Task>(send_task, 'slow', createTask('hold')));
      await held.running(2);
      const refused = await transport
        .send(send_task, 'slow', createTask('one too many'))
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(UnavailableError);
      expect((refused as UnavailableError).data).toMatchObject({ limit: TASKS_LIMIT_NAME });
      expect(typeof ((refused as UnavailableError).data as { retry_after_ms: unknown }).retry_after_ms).toBe(
        'number',
      );
      expect(held.started).toBe(2);
      held.release();
      expect((await Promise.all(running)).map((task) => task.state)).toEqual(['completed', 'completed']);
      // The slots came back.
      const again = transport.send<Task>(send_task, 'slow', createTask('again'));
      await held.running(3);
      held.release();
      expect((await again).state).toBe('completed');
    } finally {
      held.release();
      await transport.stop();
    }
  });

  it.each([
    ['a number', () => 1],
    ['a ConcurrencyLimit', () => new ConcurrencyLimit(1, { name: TASKS_LIMIT_NAME })],
  ])('maxConcurrentTasks as %s bounds every agent of the transport together', async (_kind, limit) => {
    const a = heldAgent('a');
    const b = heldAgent('b');
    const transport = new RuntimeTransport({ maxConcurrentTasks: limit() });
    transport.registerAgent(a.agent, { name: 'a' });
    transport.registerAgent(b.agent, { name: 'b' });
    await transport.start();
    try {
      const first = transport.send<Task>(send_task, 'a', createTask('hold'));
      await a.running(1);
      await expect(transport.send(send_task, 'b', createTask('b'))).rejects.toBeInstanceOf(UnavailableError);
      expect(b.started).toBe(0);
      a.release();
      await first;
    } finally {
      a.release();
      b.release();
      await transport.stop();
    }
  });

  it('rateLimit: a principal over its bucket gets RESOURCE_EXHAUSTED', async () => {
    const transport = new RuntimeTransport({ rateLimit: { perSecond: 0.001, burst: 2 } });
    transport.registerAgent(createEchoAgent('echo'));
    await transport.start();
    try {
      await transport.send(send_task, 'echo', createTask('1'));
      await transport.send(send_task, 'echo', createTask('2'));
      const refused = await transport.send(send_task, 'echo', createTask('3')).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ResourceExhaustedError);
      expect((refused as ResourceExhaustedError).data).toMatchObject({ limit: 'rate' });
    } finally {
      await transport.stop();
    }
  });

  it('logRequests and metrics: one request line and the counters, with transport "memory"', async () => {
    const lines: Record<string, unknown>[] = [];
    const metrics = new PipelineMetrics({ meter: false });
    const transport = new RuntimeTransport({
      logRequests: true,
      metrics,
      logger: createJsonLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
    });
    transport.registerAgent(createEchoAgent('echo'));
    await transport.start();
    try {
      await transport.send(send_task, 'echo', createTask('hello'));
    } finally {
      await transport.stop();
    }
    const request = lines.find((line) => line.msg === 'request');
    expect(request).toMatchObject({ operation: 'send_task', transport: 'memory', status: 'ok' });
    expect(metrics.prometheus()).toMatch(
      /agent_server_requests_total\{[^}]*operation="send_task"[^}]*transport="memory"[^}]*\} 1/,
    );
  });

  it('refuses bad values of the new options', () => {
    expect(() => new RuntimeTransport({ logRequests: 'yes' as never })).toThrow(ValueError);
    expect(() => new RuntimeTransport({ metrics: {} as never })).toThrow(/PipelineMetrics/);
    expect(() => new RuntimeTransport({ maxConcurrentTasks: 0 })).toThrow(/maxConcurrentTasks/);
    expect(() => new RuntimeTransport({ rateLimit: { perSecond: -1 } })).toThrow(ValueError);
    expect(new RuntimeTransport({ rateLimit: new RateLimiter({ perSecond: 1 }) })).toBeInstanceOf(
      RuntimeTransport,
    );
  });
});
