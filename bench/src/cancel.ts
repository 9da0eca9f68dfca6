/**
 * Cancel latency: `n` tasks running `sleep 60000` on the reference server, each followed by its
 * caller over `POST /tasks/stream`, then canceled with `POST /tasks/cancel`, all at once or one at a
 * time. Measured per task from the moment its cancel is written: until the cancel call's own 200
 * (the canceled Task), and until the task's caller gets its final `canceled` status.
 *
 * Raw node:http here rather than a transport's client: the figure is the server's, and axios would
 * add its own milliseconds to a 5 ms target.
 */
import http from 'node:http';
import net from 'node:net';
import { createParser } from 'eventsource-parser';
import type { ServerChild } from './child.js';
import { percentile } from './stats.js';

export interface CancelResult {
  tasks: number;
  callerP50Ms: number;
  callerP99Ms: number;
  cancelP50Ms: number;
  cancelP99Ms: number;
  /** The server's CPU time while the tasks only sleep, as a share of one core. */
  sleepingCpuShare: number;
}

interface Followed {
  id: string;
  /** The first event: the task runs. */
  started: Promise<void>;
  /** The final status and when it arrived (performance.now()). */
  final: Promise<{ state: string; at: number }>;
}

const BATCH = 100;
const TIMESTAMP = '2026-01-01T00:00:00.000Z';

function sleepTask(id: string): string {
  return JSON.stringify({
    id,
    state: 'submitted',
    messages: [
      {
        id: `m-${id}`,
        role: 'user',
        parts: [{ type: 'text', content: 'sleep 60000' }],
        timestamp: TIMESTAMP,
      },
    ],
    artifacts: [],
    metadata: {},
    created_at: TIMESTAMP,
  });
}

function follow(base: URL, agent: http.Agent, id: string): Followed {
  let markStarted!: () => void;
  let failStarted!: (error: Error) => void;
  const started = new Promise<void>((resolve, reject) => {
    markStarted = resolve;
    failStarted = reject;
  });
  const final = new Promise<{ state: string; at: number }>((resolve, reject) => {
    const fail = (error: Error) => {
      failStarted(error);
      reject(error);
    };
    const body = sleepTask(id);
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: 'POST',
        path: '/tasks/stream',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          fail(new Error(`stream of ${id}: HTTP ${res.statusCode}`));
          return;
        }
        let done = false;
        const parser = createParser({
          onEvent: (message) => {
            markStarted();
            if (message.event !== 'task.status') return;
            const event = JSON.parse(message.data) as { final?: boolean; state?: string };
            if (!event.final) return;
            done = true;
            resolve({ state: event.state ?? '', at: performance.now() });
          },
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('end', () => {
          if (!done) fail(new Error(`stream of ${id} ended without a final status`));
        });
        res.on('error', (error) => fail(new Error(`stream of ${id}: ${error.message}`)));
      },
    );
    req.on('error', (error) => fail(new Error(`stream of ${id}: ${error.message}`)));
    req.end(body);
  });
  // Awaited later; until then a failure must not count as unhandled.
  final.catch(() => undefined);
  started.catch(() => undefined);
  return { id, started, final };
}

function connect(base: URL): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(base.port), base.hostname);
    socket.once('connect', () => resolve(socket));
    socket.once('error', (error) => reject(new Error(`connecting for a cancel: ${error.message}`)));
  });
}

/**
 * `n` connections, opened `BATCH` at a time while the server is idle. The kernel completes a
 * handshake before the server accepts it; a server kept busy (by a thousand tasks' events) can let
 * more than its listen backlog wait unaccepted, and those are later reset. Opened before the tasks
 * start, every one is accepted at once; with no request on them yet, Node's 60 s headers timeout is
 * the only limit on how long they may wait.
 */
async function connectMany(base: URL, n: number): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  for (let i = 0; i < n; i += BATCH)
    sockets.push(...(await Promise.all(Array.from({ length: Math.min(BATCH, n - i) }, () => connect(base)))));
  return sockets;
}

interface PendingCancel {
  req: http.ClientRequest;
  body: string;
  answered: Promise<number>;
}

/** A cancel request on an already connected socket, not yet sent (see cancelLatency). */
function prepareCancel(base: URL, socket: net.Socket, taskId: string): PendingCancel {
  const body = JSON.stringify({ task_id: taskId, reason: 'bench' });
  let req!: http.ClientRequest;
  const answered = new Promise<number>((resolve, reject) => {
    req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: 'POST',
        path: '/tasks/cancel',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        createConnection: () => socket,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const at = performance.now();
          socket.destroy();
          const task = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { state?: string };
          if (res.statusCode !== 200 || task.state !== 'canceled')
            reject(new Error(`cancel of ${taskId}: HTTP ${res.statusCode}, state ${task.state}`));
          else resolve(at);
        });
        res.on('error', (error) => reject(new Error(`cancel of ${taskId}: ${error.message}`)));
      },
    );
    req.on('error', (error) => reject(new Error(`cancel of ${taskId}: ${error.message}`)));
  });
  answered.catch(() => undefined);
  return { req, body, answered };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `observeMs`: how long the server's CPU is read while every task sleeps, before any cancel. */
export async function cancelLatency(
  server: ServerChild,
  n: number,
  mode: 'at-once' | 'one-at-a-time',
  observeMs: number,
): Promise<CancelResult> {
  const base = new URL(server.urls.http);
  const streams = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const followed: Followed[] = [];
  const run = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  // All at once: one connection per cancel, opened before any task runs (see connectMany).
  const sockets = mode === 'at-once' ? await connectMany(base, n) : [];
  try {
    for (let i = 0; i < n; i += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, n - i) }, (_, j) =>
        follow(base, streams, `cancel-${run}-${i + j}`),
      );
      await Promise.all(batch.map((task) => task.started));
      followed.push(...batch);
    }
    // What the running tasks cost by themselves (their progress events), the load every cancel
    // below competes with.
    const before = await server.probe();
    const observedFrom = performance.now();
    await new Promise((resolve) => setTimeout(resolve, observeMs));
    const after = await server.probe();
    const sleepingCpuShare = (after.cpuMicros - before.cpuMicros) / 1000 / (performance.now() - observedFrom);
    const caller: number[] = [];
    const cancel: number[] = [];
    const record = async (task: Followed, pending: PendingCancel, sentAt: number) => {
      const [answeredAt, final] = await Promise.all([pending.answered, task.final]);
      if (final.state !== 'canceled') throw new Error(`task ${task.id} ended ${final.state}, not canceled`);
      cancel.push(answeredAt - sentAt);
      caller.push(final.at - sentAt);
    };
    if (mode === 'at-once') {
      const pending = followed.map((task, i) => prepareCancel(base, sockets[i]!, task.id));
      // Requests get their sockets on the next turn; after it, end() writes at once, so every
      // cancel leaves within the loop below and its clock starts when it does.
      await nextTurn();
      const records: Promise<void>[] = [];
      for (let i = 0; i < n; i++) {
        const sentAt = performance.now();
        pending[i]!.req.end(pending[i]!.body);
        records.push(record(followed[i]!, pending[i]!, sentAt));
      }
      await Promise.all(records);
    } else {
      for (const task of followed) {
        const pending = prepareCancel(base, await connect(base), task.id);
        await nextTurn();
        const sentAt = performance.now();
        pending.req.end(pending.body);
        await record(task, pending, sentAt);
      }
    }
    return {
      tasks: n,
      callerP50Ms: percentile(caller, 50),
      callerP99Ms: percentile(caller, 99),
      cancelP50Ms: percentile(cancel, 50),
      cancelP99Ms: percentile(cancel, 99),
      sleepingCpuShare,
    };
  } finally {
    streams.destroy();
    for (const socket of sockets) socket.destroy();
  }
}
