/**
 * The task callers of the cancel benchmark, in a process of their own: `n` tasks running
 * `sleep 60000`, each followed over `POST /tasks/stream` until its final status.
 *
 * A thousand followers read ten thousand progress events a second. In the process that times the
 * cancels, that reading (and its garbage collection) delayed the moment an answer was read by up to
 * ten milliseconds: the figure was partly the load generator's own. Here they run beside it, and
 * each final status is reported with the wall-clock time it was read.
 *
 *   fork(cancel-followers.js, [baseUrl, runId, n]) → { type: 'started' }, then one
 *   { type: 'final', index, state, at } per task, `at` in ms since the epoch (timeOrigin + now()).
 */
import http from 'node:http';
import { createParser } from 'eventsource-parser';
import { taskBody } from './tasks.js';

/** What the follower process sends its parent. */
export type FollowerMessage =
  | { type: 'started' }
  | { type: 'final'; index: number; state: string; at: number }
  /** `index` names the task whose stream failed; without it, the followers could not start. */
  | { type: 'error'; index?: number; message: string };

/** Tasks started at once, so the server's listen backlog never overflows. */
export const FOLLOW_BATCH = 100;

/** The id of the `index`th task of a run: the parent names the task to cancel the same way. */
export function followedTaskId(run: string, index: number): string {
  return `cancel-${run}-${index}`;
}

/** Milliseconds since the epoch with the monotonic clock's resolution, comparable across processes. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

interface FollowReport {
  final(state: string, at: number): void;
  /** The stream failed after its first event. */
  error(message: string): void;
}

/** Starts one task over `POST /tasks/stream`; resolves at its first event, then reports its final status. */
function follow(base: URL, agent: http.Agent, id: string, report: FollowReport): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let running = false;
    const started = () => {
      running = true;
      resolve();
    };
    const fail = (error: Error) => (running ? report.error(error.message) : reject(error));
    const body = taskBody(id, 'sleep 60000');
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
            started();
            if (message.event !== 'task.status') return;
            const event = JSON.parse(message.data) as { final?: boolean; state?: string };
            if (!event.final) return;
            done = true;
            report.final(event.state ?? '', wallNow());
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
}

async function main(): Promise<void> {
  const [url, run, count] = process.argv.slice(2);
  const send = (message: FollowerMessage) => process.send?.(message);
  const base = new URL(url!);
  const n = Number(count);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  // The parent going away (done, or failed) ends the followers: their streams close with the process.
  process.on('disconnect', () => process.exit(0));
  try {
    for (let i = 0; i < n; i += FOLLOW_BATCH) {
      const batch = Array.from({ length: Math.min(FOLLOW_BATCH, n - i) }, (_, j) =>
        follow(base, agent, followedTaskId(run!, i + j), {
          final: (state, at) => send({ type: 'final', index: i + j, state, at }),
          error: (message) => send({ type: 'error', index: i + j, message }),
        }),
      );
      await Promise.all(batch);
    }
    send({ type: 'started' });
  } catch (error) {
    send({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  }
}

if (require.main === module) void main();
