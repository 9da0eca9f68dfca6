/**
 * `--instructions`: instructions per request, the figure to compare two builds by on a shared or
 * throttled machine, where the requests per second of one build can swing by half from run to run.
 *
 * Each server runs under valgrind's cachegrind without its cache simulation: it counts the
 * instructions the process executes, JIT-compiled code and the garbage collector included, and the
 * count of the same work repeats within a few per cent. The server is `node --single-threaded`, so
 * the work V8 would give its helper threads (concurrent marking, compilation) is done, and counted,
 * the same way every run. Two children per subject answer `warm` and `warm + measured` requests of
 * the same closed-loop load from this process; the difference over `measured` leaves out start-up,
 * the first requests' compilation and the shutdown. What the kernel does for the process (system
 * calls, loopback TCP) is not counted: the figure is the user-space work the code decides.
 */
import http from 'node:http';
import type { Task } from '@agent/core';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { A2A_HEADERS, A2A_JSON_RPC_PATH, a2aRequestTemplate, checkA2ASend } from './a2a.js';
import { a2aSdkSpec, bareSpec, referenceSpec, ServerChild, transportSpec, type ServerSpec } from './child.js';
import { request } from './http-request.js';
import { checkEcho, ECHO_TEXT, taskBodyTemplate } from './tasks.js';

const VALGRIND = ['valgrind', '--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null'];
/** Under valgrind a server starts in tens of seconds and runs some fifty times slower. */
const READY_TIMEOUT_MS = 300_000;
const STOP_TIMEOUT_MS = 120_000;

export interface InstructionSettings {
  /** Requests both children answer before the measured ones. */
  warm: number;
  /** Requests the second child answers past `warm`. */
  measured: number;
  connections: number;
}

/** What one request is on the wire: where it goes, its body, and the check of its answer. */
interface RequestKind {
  path: string;
  headers: Record<string, string>;
  body(index: number): string;
  check(answer: unknown): void;
}

/** The bench's own request body with each `[<id>]` placeholder (autocannon's) made `count-<index>`. */
function numbered(template: string): (index: number) => string {
  return (index) => template.replaceAll('[<id>]', `count-${index}`);
}

const NATIVE_ECHO: RequestKind = {
  path: '/tasks/',
  headers: {},
  body: numbered(taskBodyTemplate(`echo ${ECHO_TEXT}`)),
  check: (answer) => checkEcho(answer as Task, ECHO_TEXT),
};

const A2A_SEND: RequestKind = {
  path: A2A_JSON_RPC_PATH,
  headers: A2A_HEADERS,
  body: numbered(a2aRequestTemplate('SendMessage', `echo ${ECHO_TEXT}`)),
  check: (answer) => checkA2ASend(answer, ECHO_TEXT),
};

export interface InstructionSubject {
  name: string;
  /** The subject the ratio column divides by (its count over this one's): `bare` or `sdk`. */
  baseline?: 'bare' | 'sdk';
  /** Set on the baselines themselves. */
  role?: 'bare' | 'sdk';
  /** A fresh spec per child: two children of one subject must not share a SQLite file. */
  server: (child: number) => ServerSpec;
  kind: RequestKind;
}

export function instructionSubjects(tmpDir: string): InstructionSubject[] {
  return [
    {
      name: 'bare node:http JSON echo',
      role: 'bare',
      server: bareSpec,
      kind: NATIVE_ECHO,
    },
    {
      name: 'HTTPTransport + function handler',
      baseline: 'bare',
      server: transportSpec,
      kind: NATIVE_ECHO,
    },
    {
      name: 'reference server echo, HTTP, memory store',
      baseline: 'bare',
      server: () => referenceSpec('memory store'),
      kind: NATIVE_ECHO,
    },
    {
      name: 'reference server echo, HTTP, SQLite store',
      baseline: 'bare',
      server: (child) =>
        referenceSpec('SQLite store', {
          AGENT_RUN_STORE: `sqlite:${path.join(tmpDir, `count-${child}.db`)}`,
        }),
      kind: NATIVE_ECHO,
    },
    {
      name: 'reference server, A2A mode: A2A SendMessage (blocking)',
      baseline: 'sdk',
      server: () => referenceSpec('A2A mode', { AGENT_A2A: '1' }),
      kind: A2A_SEND,
    },
    {
      name: '@a2a-js/sdk 1.3 + express: A2A SendMessage (blocking)',
      role: 'sdk',
      server: a2aSdkSpec,
      kind: A2A_SEND,
    },
  ];
}

/** Throws unless valgrind runs here: the mode has nothing to count with. */
export function assertValgrind(): void {
  const probe = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0)
    throw new Error('--instructions needs valgrind on the PATH (Debian: apt-get install valgrind)');
}

/** The `I refs` total of a cachegrind run's summary. */
export function instructionsOf(stderr: string): number {
  const match = /I\s+refs:\s+([\d,]+)/.exec(stderr);
  if (!match) throw new Error(`no instruction count in the server's output:\n${stderr.slice(-2000)}`);
  return Number(match[1]!.replaceAll(',', ''));
}

/** `count` requests of `kind`, `connections` at a time over keep-alive connections, each answer checked. */
async function drive(url: URL, kind: RequestKind, count: number, connections: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < count) {
          const answer = await request(agent, url, 'POST', kind.path, kind.body(next++), kind.headers);
          if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
          kind.check(JSON.parse(answer.body));
        }
      }),
    );
  } finally {
    agent.destroy();
  }
}

/** One child under cachegrind answering `requests`; its instruction count from start to exit. */
async function countRun(
  subject: InstructionSubject,
  child: number,
  requests: number,
  connections: number,
): Promise<number> {
  const server = await ServerChild.start(subject.server(child), {
    wrapper: VALGRIND,
    extraNodeArgs: ['--single-threaded'],
    readyTimeoutMs: READY_TIMEOUT_MS,
    stopTimeoutMs: STOP_TIMEOUT_MS,
  });
  try {
    await drive(new URL(server.urls.http), subject.kind, requests, connections);
    await server.stop();
  } catch (error) {
    server.kill();
    throw error;
  }
  return instructionsOf(await server.stderrAtClose());
}

/** Instructions per request of one subject: its two children run side by side. */
export async function instructionsPerRequest(
  subject: InstructionSubject,
  settings: InstructionSettings,
): Promise<number> {
  // Both settled before anything is thrown: a failed child must not leave the other running when
  // the bench exits.
  const [short, long] = await Promise.allSettled([
    countRun(subject, 1, settings.warm, settings.connections),
    countRun(subject, 2, settings.warm + settings.measured, settings.connections),
  ]);
  if (short.status === 'rejected') throw short.reason;
  if (long.status === 'rejected') throw long.reason;
  return (long.value - short.value) / settings.measured;
}

/** The table: instructions per request, and each subject's baseline's count over its own. */
export function instructionTable(
  subjects: InstructionSubject[],
  counts: Map<InstructionSubject, number>,
): string {
  const baseline = (role: 'bare' | 'sdk') => {
    const subject = subjects.find((s) => s.role === role);
    return subject ? counts.get(subject) : undefined;
  };
  const rows = subjects.map((subject) => {
    const count = counts.get(subject);
    const base = subject.baseline ? baseline(subject.baseline) : count;
    const ratio = count === undefined || base === undefined ? '–' : (base / count).toFixed(3);
    const perRequest = count === undefined ? 'not run' : Math.round(count).toLocaleString('en-US');
    return `| ${subject.name} | ${perRequest} | ${ratio} |`;
  });
  return [
    '| subject | instructions per request | baseline ÷ this (bare node:http, or @a2a-js/sdk for A2A) |',
    '|---|---:|---:|',
    ...rows,
  ].join('\n');
}
