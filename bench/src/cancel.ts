/**
 * Cancel latency: `n` tasks running `sleep 60000` on the reference server, each followed by its
 * caller over `POST /tasks/stream`, then canceled with `POST /tasks/cancel`, all at once or one at a
 * time. Measured per task from the moment its cancel is written: until the cancel call's own 200
 * (the canceled Task), and until the task's caller gets its final `canceled` status. The callers
 * run in a process of their own (cancel-followers.ts): this one only sends cancels and reads their
 * answers, so what it times is the server's, not its own reading of ten thousand events a second.
 * A warm-up of more tasks, canceled one at a time first, is timed apart (see cancelLatency).
 *
 * Raw node:http here rather than a transport's client: the figure is the server's, and axios would
 * add its own milliseconds to a 5 ms target.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { FOLLOW_BATCH, followedTaskId, wallNow, type FollowerMessage } from './cancel-followers.js';
import type { ServerChild } from './child.js';
import { percentile } from './stats.js';

export interface CancelResult {
  tasks: number;
  /** Tasks canceled one at a time before the measured ones, to warm the server's cancel path. */
  warmupCancels: number;
  /** The warm-up cancels, to the caller's final status: a fresh server's first cancels. */
  coldCallerP50Ms: number;
  coldCallerP99Ms: number;
  callerP50Ms: number;
  callerP99Ms: number;
  cancelP50Ms: number;
  cancelP99Ms: number;
  /** The server's CPU time while the tasks only sleep, as a share of one core. */
  sleepingCpuShare: number;
}

interface Final {
  state: string;
  /** Wall-clock ms (wallNow) when the caller read it. */
  at: number;
}

/** The followers' process: resolves once every task runs; `final(i)` is the ith task's ending. */
interface Followers {
  final(index: number): Promise<Final>;
  stop(): void;
}

function startFollowers(base: URL, run: string, n: number): Promise<Followers> {
  const child: ChildProcess = fork(path.join(__dirname, 'cancel-followers.js'), [base.href, run, String(n)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const finals = Array.from({ length: n }, () => {
    let settle!: { resolve: (final: Final) => void; reject: (error: Error) => void };
    const promise = new Promise<Final>((resolve, reject) => (settle = { resolve, reject }));
    promise.catch(() => undefined);
    return { promise, ...settle };
  });
  const failAll = (error: Error) => finals.forEach((final) => final.reject(error));
  return new Promise((resolve, reject) => {
    child.on('message', (message: FollowerMessage) => {
      if (message.type === 'final') finals[message.index]?.resolve({ state: message.state, at: message.at });
      else if (message.type === 'error' && message.index !== undefined)
        finals[message.index]?.reject(new Error(message.message));
      else if (message.type === 'error') reject(new Error(`followers: ${message.message}`));
      else
        resolve({
          final: (index) => finals[index]!.promise,
          stop: () => child.kill(),
        });
    });
    child.once('exit', (code) => {
      const error = new Error(`the followers' process exited (code ${code})`);
      reject(error);
      failAll(error);
    });
  });
}

function connect(base: URL): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(base.port), base.hostname);
    socket.once('connect', () => resolve(socket));
    socket.once('error', (error) => reject(new Error(`connecting for a cancel: ${error.message}`)));
  });
}

/**
 * `n` connections, opened `FOLLOW_BATCH` at a time while the server is idle. The kernel completes a
 * handshake before the server accepts it; a server kept busy (by a thousand tasks' events) can let
 * more than its listen backlog wait unaccepted, and those are later reset. Opened before the tasks
 * start, every one is accepted at once; with no request on them yet, Node's 60 s headers timeout is
 * the only limit on how long they may wait.
 */
async function connectMany(base: URL, n: number): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  for (let i = 0; i < n; i += FOLLOW_BATCH)
    sockets.push(
      ...(await Promise.all(Array.from({ length: Math.min(FOLLOW_BATCH, n - i) }, () => connect(base)))),
    );
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
          const at = wallNow();
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

/**
 * One cancel per open socket, all written in one loop: requests get their sockets on the next turn;
 * after it, end() writes at once, so every cancel leaves within the loop and its clock starts when
 * it does. `sent(i, pending, sentAt)` is called as each leaves; its results are returned.
 */
async function sendAtOnce<T>(
  base: URL,
  sockets: net.Socket[],
  taskId: (index: number) => string,
  sent: (index: number, pending: PendingCancel, sentAt: number) => T,
): Promise<T[]> {
  const pending = sockets.map((socket, i) => prepareCancel(base, socket, taskId(i)));
  await nextTurn();
  const results: T[] = [];
  for (let i = 0; i < pending.length; i++) {
    const sentAt = wallNow();
    pending[i]!.req.end(pending[i]!.body);
    results.push(sent(i, pending[i]!, sentAt));
  }
  return results;
}

/** What the HTTP floor of the cancel subjects measured. */
export interface CancelFloorResult {
  tasks: number;
  cancelP50Ms: number;
  cancelP99Ms: number;
}

/**
 * The floor under "all cancels at once": the same `n` requests, on `n` connections opened first and
 * written in the same loop, to a server that answers each at once (bare node:http, nothing behind
 * it). Whatever this takes, no server doing real work per cancel can beat.
 */
export async function cancelFloor(server: ServerChild, n: number): Promise<CancelFloorResult> {
  const base = new URL(server.urls.http);
  const sockets = await connectMany(base, n);
  try {
    const latencies = await Promise.all(
      await sendAtOnce(
        base,
        sockets,
        (i) => `floor-${i}`,
        async (_i, pending, sentAt) => (await pending.answered) - sentAt,
      ),
    );
    return { tasks: n, cancelP50Ms: percentile(latencies, 50), cancelP99Ms: percentile(latencies, 99) };
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}

/** Cancels one task on a connection of its own, once it is open; resolves when it has been written. */
async function sendOne(base: URL, taskId: string): Promise<{ pending: PendingCancel; sentAt: number }> {
  const pending = prepareCancel(base, await connect(base), taskId);
  await nextTurn();
  const sentAt = wallNow();
  pending.req.end(pending.body);
  return { pending, sentAt };
}

/**
 * `observeMs`: how long the server's CPU is read while every task sleeps, before any cancel.
 * `warmup`: tasks canceled one at a time first, and timed apart. A fresh process runs its first
 * cancels through code V8 has not optimized yet (the tasks' own path is warm by then): the first
 * fifty took 1-11 ms where the rest took under one. Every other subject is measured after a
 * warm-up; these first cancels are reported on their own (`cold…`), not mixed into the figure.
 */
export async function cancelLatency(
  server: ServerChild,
  n: number,
  mode: 'at-once' | 'one-at-a-time',
  observeMs: number,
  warmup = 0,
): Promise<CancelResult> {
  const base = new URL(server.urls.http);
  const run = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  // All at once: one connection per cancel, opened before any task runs (see connectMany).
  const sockets = mode === 'at-once' ? await connectMany(base, n) : [];
  let followers: Followers | undefined;
  try {
    followers = await startFollowers(base, run, warmup + n);
    const tasks = followers;
    /** When task `index`'s cancel was answered and when its caller got the canceled status. */
    const answered = async (index: number, pending: PendingCancel) => {
      const [answeredAt, final] = await Promise.all([pending.answered, tasks.final(index)]);
      if (final.state !== 'canceled')
        throw new Error(`task ${followedTaskId(run, index)} ended ${final.state}, not canceled`);
      return { answeredAt, finalAt: final.at };
    };
    const cold: number[] = [];
    for (let i = 0; i < warmup; i++) {
      const { pending, sentAt } = await sendOne(base, followedTaskId(run, i));
      cold.push((await answered(i, pending)).finalAt - sentAt);
    }
    // The measured tasks follow the warm-up's: the ith of them is task warmup + i.
    const taskIndex = (i: number) => warmup + i;
    // What the running tasks cost by themselves (their progress events), the load every cancel
    // below competes with.
    const before = await server.probe();
    const observedFrom = performance.now();
    await new Promise((resolve) => setTimeout(resolve, observeMs));
    const after = await server.probe();
    const sleepingCpuShare = (after.cpuMicros - before.cpuMicros) / 1000 / (performance.now() - observedFrom);
    const caller: number[] = [];
    const cancel: number[] = [];
    const record = async (i: number, pending: PendingCancel, sentAt: number) => {
      const { answeredAt, finalAt } = await answered(taskIndex(i), pending);
      cancel.push(answeredAt - sentAt);
      caller.push(finalAt - sentAt);
    };
    if (mode === 'at-once') {
      await Promise.all(
        await sendAtOnce(
          base,
          sockets,
          (i) => followedTaskId(run, taskIndex(i)),
          (i, pending, sentAt) => record(i, pending, sentAt),
        ),
      );
    } else {
      for (let i = 0; i < n; i++) {
        const { pending, sentAt } = await sendOne(base, followedTaskId(run, taskIndex(i)));
        await record(i, pending, sentAt);
      }
    }
    return {
      tasks: n,
      warmupCancels: warmup,
      coldCallerP50Ms: percentile(cold, 50),
      coldCallerP99Ms: percentile(cold, 99),
      callerP50Ms: percentile(caller, 50),
      callerP99Ms: percentile(caller, 99),
      cancelP50Ms: percentile(cancel, 50),
      cancelP99Ms: percentile(cancel, 99),
      sleepingCpuShare,
    };
  } finally {
    followers?.stop();
    for (const socket of sockets) socket.destroy();
  }
}
