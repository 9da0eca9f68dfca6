/**
 * `outboundLimit`: delegated calls have a limit of their own, refused at once past it, so an agent
 * whose tasks wait on slow peers still runs the tasks that come in. Over real HTTP: the peer counts
 * the calls it holds.
 */
import {
  AgentError,
  ConcurrencyLimit,
  createMessage,
  createTask,
  handlerFromFunction,
  type Task,
} from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';
import { Agent, DEFAULT_OUTBOUND_LIMIT, OUTBOUND_LIMIT_NAME } from './index.js';
import { deferred, errorOf } from './test-support/helpers.js';

/** A peer that holds every task until `release()`, counting how many it holds at once. */
class SlowPeer {
  readonly server = new HTTPTransport({ url: 'http://127.0.0.1:0' });
  inFlight = 0;
  maxInFlight = 0;
  received = 0;
  private gate = deferred();
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  constructor() {
    this.server.bind(
      handlerFromFunction(
        async (task) => {
          this.received++;
          this.inFlight++;
          this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
          for (const waiter of this.waiters.filter((w) => this.inFlight >= w.count)) waiter.resolve();
          await this.gate.promise;
          this.inFlight--;
          return { ...task, state: 'completed' as const };
        },
        { card: { name: 'slow-peer', description: 'holds tasks', url: '' } },
      ),
    );
  }

  get url(): string {
    return this.server.url;
  }

  /** Resolves once `count` calls are held at the same time. */
  holding(count: number): Promise<void> {
    if (this.inFlight >= count) return Promise.resolve();
    const waiter = deferred();
    this.waiters.push({ count, resolve: waiter.resolve });
    return waiter.promise;
  }

  release(): void {
    this.gate.resolve();
    this.gate = deferred();
  }
}

const agents: Agent[] = [];

const caller = (options: { outboundLimit?: number | ConcurrencyLimit; name?: string } = {}): Agent => {
  const agent = new Agent({
    card: { name: options.name ?? 'caller' },
    outbound: new HTTPTransport({ url: 'http://127.0.0.1:0' }),
    ...(options.outboundLimit === undefined ? {} : { outboundLimit: options.outboundLimit }),
    execute: async (task, run) => {
      const child = await run.sendTaskTo(String(task.metadata.peer), createTask('work'));
      await run.addMessage(createMessage(`child ${child.state}`, { role: 'agent' }));
    },
  });
  agents.push(agent);
  return agent;
};

const taskFor = (peer: string): Task => {
  const task = createTask('delegate');
  task.metadata.peer = peer;
  return task;
};

describe('Agent outboundLimit', () => {
  let peer: SlowPeer;

  beforeEach(async () => {
    peer = new SlowPeer();
    await peer.server.start();
  });

  afterEach(async () => {
    peer.release();
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
    await peer.server.stop();
  });

  it('N + 5 delegated calls: N reach the peer, 5 are refused at once with UNAVAILABLE; freed slots serve again', async () => {
    const N = 3;
    const agent = caller({ outboundLimit: N });
    const calls = Array.from({ length: N + 5 }, () =>
      agent.sendTaskTo(peer.url, createTask('work')).then(
        (task) => ({ ok: true as const, task }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
    );
    await peer.holding(N);
    expect(agent.outboundLimit.active).toBe(N);
    peer.release();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(N);
    const refused = outcomes.flatMap((o) => (o.ok ? [] : [o.error]));
    expect(refused).toHaveLength(5);
    for (const error of refused) {
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe('UNAVAILABLE');
      expect((error as AgentError).data).toEqual({ retry_after_ms: 1000, limit: OUTBOUND_LIMIT_NAME });
    }
    expect(peer.received).toBe(N);
    expect(peer.maxInFlight).toBe(N);
    expect(agent.outboundLimit.active).toBe(0);

    // Every slot came back: the next N + 5 go through in rounds of N.
    for (let i = 0; i < N + 5; i++) {
      const done = agent.sendTaskTo(peer.url, createTask('again'));
      await peer.holding(1);
      peer.release();
      expect((await done).state).toBe('completed');
    }
    expect(peer.maxInFlight).toBe(N);
  });

  it('inside a run: the refused delegation fails its task (UNAVAILABLE), while inbound tasks still run', async () => {
    const agent = caller({ outboundLimit: 1 });
    const first = agent.handleTask(taskFor(peer.url));
    await peer.holding(1);
    const second = await agent.handleTask(taskFor(peer.url));
    expect(second.state).toBe('failed');
    expect(errorOf(second)).toMatchObject({
      code: 'UNAVAILABLE',
      data: { retry_after_ms: 1000, limit: OUTBOUND_LIMIT_NAME },
    });
    // A task that delegates nothing is not held up by the full outbound limit.
    const local = new Agent({
      card: { name: 'local' },
      outbound: agent.outbound as HTTPTransport,
      outboundLimit: agent.outboundLimit,
      execute: async () => undefined,
    });
    expect((await local.handleTask(createTask('inbound'))).state).toBe('completed');
    peer.release();
    expect((await first).state).toBe('completed');
    expect(peer.received).toBe(1);
  });

  it('one ConcurrencyLimit shared by two agents bounds them together', async () => {
    const shared = new ConcurrencyLimit(2, { name: 'peers', retryAfterMs: 250 });
    const a = caller({ outboundLimit: shared, name: 'a' });
    const b = caller({ outboundLimit: shared, name: 'b' });
    const held = [a.sendTaskTo(peer.url, createTask('1')), b.sendTaskTo(peer.url, createTask('2'))];
    await peer.holding(2);
    await expect(b.sendTaskTo(peer.url, createTask('3'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      data: { retry_after_ms: 250, limit: 'peers' },
    });
    peer.release();
    await Promise.all(held);
    expect(peer.maxInFlight).toBe(2);
  });

  it(`defaults to ${DEFAULT_OUTBOUND_LIMIT} and refuses a bad value`, () => {
    expect(new Agent({ card: { name: 'd' } }).outboundLimit.max).toBe(DEFAULT_OUTBOUND_LIMIT);
    expect(DEFAULT_OUTBOUND_LIMIT).toBe(64);
    for (const bad of [0, 1.5, -1, '3', Number.NaN]) {
      expect(() => new Agent({ card: { name: 'd' }, outboundLimit: bad as never })).toThrow(
        /outboundLimit must be a whole number from 1 or a ConcurrencyLimit/,
      );
    }
  });
});
