/**
 * Replicas on one PostgreSQL (AGENT_STORE=postgres://…): three real server processes share their
 * tasks, event logs, cancels and approvals; a replica killed with SIGKILL has its running tasks
 * finished `failed` (REPLICA_LOST) by the others, once each.
 */
import { createTask, isTerminalState, type Task, type TaskEvent, type TaskList } from '@agent/core';
import { APIKeyAuth } from '@agent/auth';
import type { ApprovalRecord } from '@agent/events';
import { startTestPostgres, type TestPostgres } from '@agent/store-postgres/testing';
import { HTTPTransport } from '@agent/transport-http';
import { Client } from 'pg';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

jest.setTimeout(120_000);

const ALICE_KEY = 'sk-alice-0123456789';
const BOB_KEY = 'sk-bobby-0123456789';
/** Bound of every wait for a condition; far above what each takes on a busy machine. */
const WAIT_BOUND_MS = 30_000;

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
}, 60_000);
afterAll(() => postgres?.stop());

async function replicas(count: number, extra: Record<string, string> = {}): Promise<ServerProcess[]> {
  return replicasOn(await postgres.createDatabase(), count, extra);
}

async function replicasOn(
  database: string,
  count: number,
  extra: Record<string, string> = {},
): Promise<ServerProcess[]> {
  const env = {
    AGENT_STORE: database,
    AGENT_AUTH: 'apikey',
    AGENT_API_KEYS: `${ALICE_KEY},${BOB_KEY}`,
    AGENT_APPROVALS: 'store',
    // The load case sends its 150 tasks at once (50 a replica): above the default task limit, which
    // this file is not about.
    AGENT_MAX_CONCURRENT_TASKS: '1000',
    ...extra,
  };
  // The first start applies the schema; the others find it current (they may also race it).
  return Promise.all(Array.from({ length: count }, () => startServerProcess(env)));
}

interface Answer<T> {
  status: number;
  json: T;
}

async function call<T>(base: string, route: string, key = ALICE_KEY, body?: unknown): Promise<Answer<T>> {
  const response = await fetch(`${base}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as T };
}

/** Polls `check` until it returns a value, at most WAIT_BOUND_MS. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_BOUND_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function client(): HTTPTransport {
  return new HTTPTransport({
    url: 'http://127.0.0.1:0',
    authenticator: new APIKeyAuth({ validKeys: { [ALICE_KEY]: [] } }),
    credentials: ALICE_KEY,
  });
}

/** The task's events from `after` on, over the native SSE route of one replica. */
function subscribe(base: string, taskId: string, after = 0): AsyncIterable<TaskEvent> {
  return client().subscribeTask!(base, taskId, { after });
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

const finals = (events: TaskEvent[]) => events.filter((e) => e.type === 'task.status' && e.final);

async function stopAll(servers: ServerProcess[]): Promise<void> {
  await Promise.all(servers.map((server) => server.stop()));
}

describe('replicas on one PostgreSQL', () => {
  it('a task started on A is read from B, listed from C, followed on A and B, and canceled from C', async () => {
    const servers = await replicas(3);
    const [a, b, c] = servers.map((s) => s.urls.http) as [string, string, string];
    try {
      const task = createTask('sleep 600000');
      const callerOnA = call<Task>(a, '/tasks/', ALICE_KEY, task);
      await eventually('the task runs on A', async () => {
        const { status, json } = await call<Task>(a, `/tasks/${task.id}`);
        return status === 200 && json.state === 'working' ? json : undefined;
      });
      // A answers from memory; the others read what A has stored, a few milliseconds behind.
      const onB = await eventually('B reads it working', async () => {
        const answer = await call<Task>(b, `/tasks/${task.id}`);
        return answer.json.state === 'working' ? answer : undefined;
      });
      expect(onB).toMatchObject({ status: 200, json: { id: task.id, state: 'working' } });
      const listedOnC = await call<TaskList>(c, '/tasks');
      expect(listedOnC.json.tasks.map((t) => t.id)).toContain(task.id);
      // Another principal reaches none of it, on any replica.
      expect((await call(b, `/tasks/${task.id}`, BOB_KEY)).status).toBe(404);

      const followOnA = collect(subscribe(a, task.id));
      // B's first connection drops after one event; it resubscribes after the sequence it saw.
      const firstOnB: TaskEvent[] = [];
      for await (const event of subscribe(b, task.id)) {
        firstOnB.push(event);
        break;
      }
      // Progress events keep arriving (every 100 ms) while B is away.
      await new Promise((resolve) => setTimeout(resolve, 400));
      const restOnB = collect(subscribe(b, task.id, firstOnB[0]!.sequence));

      const canceled = await call<Task>(c, '/tasks/cancel', ALICE_KEY, {
        task_id: task.id,
        reason: 'from C',
      });
      expect(canceled).toMatchObject({ status: 200, json: { id: task.id, state: 'canceled' } });
      expect((await callerOnA).json).toMatchObject({ id: task.id, state: 'canceled' });

      const [eventsOnA, laterOnB] = await Promise.all([followOnA, restOnB]);
      const eventsOnB = [...firstOnB, ...laterOnB];
      for (const events of [eventsOnA, eventsOnB]) {
        expect(finals(events)).toHaveLength(1);
        expect(finals(events)[0]).toMatchObject({ state: 'canceled' });
      }
      // Nothing lost or repeated across B's reconnection: the same numbered log A's follower saw.
      expect(eventsOnB.map((e) => e.sequence)).toEqual(eventsOnA.map((e) => e.sequence));
      expect(eventsOnA.map((e) => e.sequence)).toEqual(eventsOnA.map((_, i) => i + 1));
    } finally {
      await stopAll(servers);
    }
  });

  it('SIGKILL of A: B and C finish its running tasks failed REPLICA_LOST once each; its finished task is intact', async () => {
    // Long enough that a busy machine never costs a live replica its lease; short enough to wait for.
    const servers = await replicas(3, { AGENT_REPLICA_LEASE_MS: '5000' });
    const [a, b, c] = servers as [ServerProcess, ServerProcess, ServerProcess];
    try {
      const done = await call<Task>(a.urls.http, '/tasks/', ALICE_KEY, createTask('echo before the kill'));
      expect(done.json.state).toBe('completed');
      const running = Array.from({ length: 4 }, (_, i) => createTask(`sleep 600000`, { id: `lost-${i}` }));
      for (const task of running) void call(a.urls.http, '/tasks/', ALICE_KEY, task).catch(() => undefined);
      for (const task of running) {
        await eventually(`${task.id} runs on A`, async () => {
          const { json } = await call<Task>(b.urls.http, `/tasks/${task.id}`);
          return json.state === 'working' ? json : undefined;
        });
      }
      await a.stop('SIGKILL');

      for (const task of running) {
        const ended = await eventually(`${task.id} is finished by another replica`, async () => {
          const { json } = await call<Task>(c.urls.http, `/tasks/${task.id}`);
          return isTerminalState(json.state) ? json : undefined;
        });
        expect(ended.state).toBe('failed');
        expect(ended.metadata?.error).toMatchObject({ code: 'REPLICA_LOST' });
        const log = await collect(subscribe(b.urls.http, task.id));
        expect(log.filter((e) => e.type === 'task.error')).toHaveLength(1);
        expect(finals(log)).toHaveLength(1);
        expect(finals(log)[0]).toMatchObject({ state: 'failed' });
      }
      const intact = await call<Task>(b.urls.http, `/tasks/${done.json.id}`);
      expect(intact.json).toEqual(done.json);
    } finally {
      await stopAll(servers);
    }
  });

  it('an approval filed on A is decided on B once, for its own action and owner; the action runs on A once', async () => {
    const servers = await replicas(2);
    const [a, b] = servers.map((s) => s.urls.http) as [string, string];
    try {
      const task = createTask('tool delete_record {"id":"r7"}');
      // Streamed, so the run's action events are in the task's log.
      const onA = collect(client().subscribe(a, task));
      const pending = await eventually('the request is filed', async () => {
        const { json } = await call<{ approvals: ApprovalRecord[] }>(b, '/approvals?state=pending');
        return json.approvals[0];
      });
      expect(pending).toMatchObject({ task_id: task.id, state: 'pending' });
      // Another owner: not found, on either replica, listing or deciding.
      expect((await call<{ approvals: unknown[] }>(b, '/approvals', BOB_KEY)).json.approvals).toEqual([]);
      const foreign = await call<{ error: { code: string } }>(
        b,
        `/approvals/${pending.request_id}`,
        BOB_KEY,
        {
          approved: true,
          action_hash: pending.action_hash,
        },
      );
      expect(foreign).toMatchObject({ status: 404, json: { error: { code: 'APPROVAL_NOT_FOUND' } } });
      const mismatch = await call<{ error: { code: string } }>(
        b,
        `/approvals/${pending.request_id}`,
        ALICE_KEY,
        {
          approved: true,
          action_hash: '0'.repeat(64),
        },
      );
      expect(mismatch).toMatchObject({ status: 409, json: { error: { code: 'APPROVAL_ACTION_MISMATCH' } } });

      const decided = await call<ApprovalRecord>(b, `/approvals/${pending.request_id}`, ALICE_KEY, {
        approved: true,
        action_hash: pending.action_hash,
      });
      expect(decided).toMatchObject({ status: 200, json: { state: 'approved' } });
      const again = await call<{ error: { code: string } }>(
        a,
        `/approvals/${pending.request_id}`,
        ALICE_KEY,
        {
          approved: false,
          action_hash: pending.action_hash,
        },
      );
      expect(again).toMatchObject({ status: 409, json: { error: { code: 'APPROVAL_ALREADY_DECIDED' } } });

      const streamed = await onA;
      expect(finals(streamed)[0]).toMatchObject({ state: 'completed' });
      const log = await collect(subscribe(b, task.id));
      expect(log.filter((e) => e.type === 'action.started')).toHaveLength(1);
      expect(log.filter((e) => e.type === 'action.completed')).toHaveLength(1);
      expect(log.map((e) => e.sequence)).toEqual(streamed.map((e) => e.sequence));
    } finally {
      await stopAll(servers);
    }
  });

  it('a replica that finds its own lease gone stops and exits 1', async () => {
    const database = await postgres.createDatabase();
    const [server] = await replicasOn(database, 1, { AGENT_REPLICA_LEASE_MS: '1500' });
    // What a long pause or a partition looks like from the outside: the lease row is gone.
    const admin = new Client({ connectionString: database });
    await admin.connect();
    try {
      await admin.query('DELETE FROM agent_replicas');
    } finally {
      await admin.end();
    }
    expect(await server!.exited).toBe(1);
  });

  it(`load: tasks round-robin over 3 replicas, a fifth canceled from another: each ends once, none lost`, async () => {
    const total = Number(process.env.REPLICA_LOAD_TASKS ?? 150);
    const servers = await replicas(3);
    const bases = servers.map((s) => s.urls.http);
    try {
      const tasks = Array.from({ length: total }, (_, i) =>
        createTask(i % 5 === 0 ? 'sleep 600000' : `echo load ${i}`, { id: `load-${i}` }),
      );
      const answers = tasks.map((task, i) => call<Task>(bases[i % 3]!, '/tasks/', ALICE_KEY, task));
      const cancels = tasks.map(async (task, i) => {
        if (i % 5 !== 0) return undefined;
        const other = bases[(i + 1) % 3]!;
        await eventually(`${task.id} runs`, async () => {
          const { status, json } = await call<Task>(other, `/tasks/${task.id}`);
          return status === 200 && json.state === 'working' ? json : undefined;
        });
        return call<Task>(other, '/tasks/cancel', ALICE_KEY, { task_id: task.id });
      });
      const [results, canceled] = await Promise.all([Promise.all(answers), Promise.all(cancels)]);
      results.forEach(({ status, json }, i) => {
        expect(status).toBe(200);
        expect(json.state).toBe(i % 5 === 0 ? 'canceled' : 'completed');
      });
      for (const answer of canceled) if (answer) expect(answer.json.state).toBe('canceled');
      // Every task is stored once with its one final status, whichever replica is asked.
      for (const [i, task] of tasks.entries()) {
        const log = await collect(subscribe(bases[(i + 2) % 3]!, task.id));
        expect(finals(log)).toHaveLength(1);
      }
      const listed = new Set<string>();
      let token = '';
      do {
        const page = await call<TaskList>(bases[0]!, `/tasks?page_size=100&page_token=${token}`);
        for (const t of page.json.tasks) listed.add(t.id);
        token = page.json.next_page_token;
      } while (token);
      for (const task of tasks) expect(listed.has(task.id)).toBe(true);
    } finally {
      await stopAll(servers);
    }
  });
});
