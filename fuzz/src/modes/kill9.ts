/**
 * kill -9 under load with the SQLite store: tasks are sent while the server runs on a store file,
 * every terminal answer is recorded, the process is SIGKILLed mid-load and restarted on the same
 * file. Every acknowledged task must read back intact; tasks left non-terminal are reported (a
 * restarted server should finish them `failed`, code PROCESS_RESTARTED).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { echoTask } from '../arbitraries/json-bodies.js';
import { sleep } from '../healthy-caller.js';
import type { FindingLog } from '../oracle.js';
import type { FuzzOptions } from '../options.js';
import { ServerUnderTest } from '../server.js';
import { caseSeed } from './malformed.js';

export interface Kill9Summary {
  round: number;
  sent: number;
  acknowledged: number;
  killAfterMs: number;
  /** Acknowledged tasks (this round and earlier ones) read back after the restart. */
  checked: number;
  intact: number;
  missing: number;
  changed: number;
  /** What the unacknowledged tasks of this round were after the restart: state (and error code). */
  unacknowledgedStates: Record<string, number>;
  /** Tasks listed `submitted` or `working` after the restart. */
  nonTerminal: number;
  /** Seconds the restart took until listening. */
  restartSeconds: number;
}

const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);

interface HttpJson {
  status: number;
  json: unknown;
}

function httpJson(url: string, method: 'GET' | 'POST', body: unknown, timeoutMs: number): Promise<HttpJson> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent: false,
        timeout: timeoutMs,
        headers:
          payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = text;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(payload);
  });
}

/** A small seeded PRNG (mulberry32) for the task mix and the kill time. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function command(random: () => number, n: number): string {
  const r = random();
  if (r < 0.45) return `echo kill9 ${n}`;
  if (r < 0.65) return `count kill9-${n % 7} ${Math.floor(random() * 50)}`;
  if (r < 0.8) return `stream ${1 + Math.floor(random() * 40)}`;
  if (r < 0.85) return `fail kill9 ${n}`;
  return `sleep ${200 + Math.floor(random() * 3000)}`;
}

/** Key-order-independent JSON, for comparing a stored task with the answer that acknowledged it. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function differingKeys(a: unknown, b: unknown): string[] {
  const ra = (a ?? {}) as Record<string, unknown>;
  const rb = (b ?? {}) as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  return [...keys].filter((k) => canonical(ra[k]) !== canonical(rb[k]));
}

export async function runKill9(options: FuzzOptions, findings: FindingLog): Promise<Kill9Summary[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-fuzz-kill9-'));
  const env = { AGENT_RUN_STORE: `sqlite:${path.join(dir, 'tasks.db')}`, AGENT_STOP_GRACE_MS: '1000' };
  const acked = new Map<string, unknown>();
  const summaries: Summary[] = [];
  type Summary = Kill9Summary;
  const add = (
    oracle: 'lost-task' | 'non-terminal-after-restart' | 'crash',
    kind: string,
    detail: string,
    extra: Record<string, unknown> = {},
  ): void => findings.add({ oracle, kind, target: 'kill9', seed: options.seed, detail, ...extra });
  try {
    let server = await ServerUnderTest.start(env);
    for (let round = 1; round <= options.killRounds; round++) {
      const random = prng(caseSeed(options.seed, 'http-node', 1_000_000 + round));
      const killAfterMs = options.smoke ? 1500 : 1000 + Math.floor(random() * 2000);
      const sent = new Map<string, string>();
      let stopping = false;
      let n = 0;
      const url = server.urls.http;
      const worker = async (): Promise<void> => {
        while (!stopping) {
          const id = `kill9-${options.seed}-r${round}-${n}`;
          const text = command(random, n++);
          sent.set(id, text);
          try {
            const answer = await httpJson(`${url}/tasks/`, 'POST', echoTask(id, text), 15_000);
            const state = (answer.json as { state?: string } | undefined)?.state;
            if (!stopping && answer.status === 200 && state !== undefined && TERMINAL.has(state))
              acked.set(id, answer.json);
          } catch {
            // the kill cut it: an unacknowledged task
          }
        }
      };
      const workers = Array.from({ length: 16 }, () => worker());
      await sleep(killAfterMs);
      // Anything acknowledged from here on raced the kill: only answers fully read before it count.
      const ackedBefore = new Map(acked);
      server.child.kill('SIGKILL');
      stopping = true;
      await server.stop('SIGKILL');
      await Promise.all(workers);
      for (const id of acked.keys()) if (!ackedBefore.has(id)) acked.delete(id);
      const restartStarted = Date.now();
      try {
        server = await ServerUnderTest.start(env);
      } catch (error) {
        add('crash', 'restart on the same SQLite file failed', (error as Error).message);
        break;
      }
      const restartSeconds = (Date.now() - restartStarted) / 1000;
      await sleep(500);
      let intact = 0;
      let missing = 0;
      let changed = 0;
      for (const [id, answer] of acked) {
        const stored = await httpJson(
          `${server.urls.http}/tasks/${encodeURIComponent(id)}`,
          'GET',
          undefined,
          10_000,
        );
        if (stored.status !== 200) {
          missing++;
          add(
            'lost-task',
            'acknowledged task missing after kill -9',
            `${id}: GET answered ${stored.status}`,
            { answer: stored.json },
          );
        } else if (canonical(stored.json) !== canonical(answer)) {
          changed++;
          add(
            'lost-task',
            'acknowledged task changed after kill -9',
            `${id}: fields ${differingKeys(answer, stored.json).join(', ')}`,
            {
              answer: { acknowledged: answer, stored: stored.json },
            },
          );
        } else intact++;
      }
      const unacknowledgedStates: Record<string, number> = {};
      for (const [id, text] of sent) {
        if (acked.has(id)) continue;
        const stored = await httpJson(
          `${server.urls.http}/tasks/${encodeURIComponent(id)}`,
          'GET',
          undefined,
          10_000,
        );
        const task = stored.json as { state?: string; metadata?: { error?: { code?: string } } };
        const key =
          stored.status === 404
            ? 'not recorded (404)'
            : stored.status !== 200
              ? `HTTP ${stored.status}`
              : `${task.state}${task.metadata?.error?.code ? ` ${task.metadata.error.code}` : ''}`;
        unacknowledgedStates[key] = (unacknowledgedStates[key] ?? 0) + 1;
        if (stored.status === 200 && task.state !== undefined && !TERMINAL.has(task.state)) {
          add(
            'non-terminal-after-restart',
            `task left ${task.state} after kill -9 + restart`,
            `${id} (${text.split(' ')[0]})`,
            { answer: task },
          );
        }
      }
      let nonTerminal = 0;
      for (const state of ['submitted', 'working']) {
        const list = await httpJson(
          `${server.urls.http}/tasks?state=${state}&page_size=100`,
          'GET',
          undefined,
          10_000,
        );
        nonTerminal += ((list.json as { tasks?: unknown[] }).tasks ?? []).length;
      }
      summaries.push({
        round,
        sent: sent.size,
        acknowledged: [...sent.keys()].filter((id) => acked.has(id)).length,
        killAfterMs,
        checked: acked.size,
        intact,
        missing,
        changed,
        unacknowledgedStates,
        nonTerminal,
        restartSeconds,
      });
    }
    await server.stop();
    return summaries;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
