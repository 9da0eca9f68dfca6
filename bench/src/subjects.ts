/**
 * Every subject of a run. Each names the server child it needs (built per run, so a SQLite subject
 * gets a fresh file) and measures it from the bench process.
 */
import path from 'node:path';
import type { Task, Transport } from '@agent/core';
import { cancelLatency } from './cancel.js';
import { BENCH_SERVERS, referenceServerMain, type ServerChild, type ServerSpec } from './child.js';
import { clientFor, WIRE_NAMES, type Wire } from './clients.js';
import { idleWebSockets } from './idle-ws.js';
import { closedLoop, httpLoad, type LoadResult } from './load.js';
import type { Settings } from './settings.js';
import { checkEcho, ECHO_TEXT, echoOfSize, sendEcho, streamOnce, taskBodyTemplate } from './tasks.js';

export type GroupId = 'echo' | 'stream' | 'sweep' | 'payload' | 'cancel' | 'idle';

/** One subject's figures from one round. */
export interface Sample {
  /** Completed calls (or whole streams) per second. */
  perSecond?: number;
  latencyP50Ms?: number;
  latencyP99Ms?: number;
  /** Server child CPU time (user + system) over the measured window, per completed call. */
  cpuMicrosPerOp?: number;
  /** The server child's peak RSS over its life (one subject's, unless servers are reused). */
  peakRssBytes?: number;
  /** Subject-specific figures (cancel latencies, memory per connection). */
  values?: Record<string, number>;
}

export interface Subject {
  id: string;
  group: GroupId;
  name: string;
  server: () => ServerSpec;
  run(server: ServerChild): Promise<Sample>;
}

/** What a throughput subject drives its server with; `open` checks one answer before any load. */
interface Driver {
  load(seconds: number): Promise<LoadResult>;
  close(): Promise<void>;
}

export const API_KEY = 'bench-key-0001';
export const STREAM_LENGTHS = [3, 100];
export const STREAM_WIRES: Wire[] = ['http', 'sse', 'ws', 'grpc'];

/** Ids the report looks subjects up by. */
export const ids = {
  bare: 'echo:bare',
  transport: 'echo:transport-http',
  refHttp: 'echo:ref-http',
  refSqlite: 'echo:ref-sqlite',
  refApiKey: 'echo:ref-apikey',
  refExpress: 'echo:ref-express',
  refWire: (wire: Exclude<Wire, 'http'>) => `echo:ref-${wire}`,
  stream: (wire: Wire, n: number) => `stream:${wire}:${n}`,
  /** The main echo subjects already run at the main connection count: the sweep reuses them there. */
  sweep: (settings: Settings, server: 'bare' | 'ref', connections: number) =>
    connections === settings.connections
      ? server === 'bare'
        ? ids.bare
        : ids.refHttp
      : `sweep:${server}:${connections}`,
  payload: (server: 'bare' | 'ref', bytes: number) => `payload:${server}:${bytes}`,
  cancel: (mode: 'at-once' | 'one-at-a-time') => `cancel:${mode}`,
  idleWs: 'idle:ws',
};

export function buildSubjects(settings: Settings, tmpDir: string): Subject[] {
  let sqliteFiles = 0;
  const bare = (): ServerSpec => ({ label: 'bare node:http', script: BENCH_SERVERS.bareHttp });
  const transport = (): ServerSpec => ({ label: 'HTTPTransport', script: BENCH_SERVERS.transportHttp });
  const reference =
    (label: string, env: Record<string, string> = {}, nodeArgs: string[] = []) =>
    (): ServerSpec => ({ label: `reference server, ${label}`, script: referenceServerMain(), env, nodeArgs });
  const memory = reference('memory store');
  const sqlite = (): ServerSpec =>
    reference('SQLite store', {
      AGENT_RUN_STORE: `sqlite:${path.join(tmpDir, `run-${++sqliteFiles}.db`)}`,
    })();

  /** Warm-up, then the measured window between two probes of the child's CPU time. */
  const throughput =
    (open: (server: ServerChild) => Promise<Driver>) =>
    async (server: ServerChild): Promise<Sample> => {
      const driver = await open(server);
      try {
        if (settings.warmupSeconds > 0) await driver.load(settings.warmupSeconds);
        const before = await server.probe();
        const result = await driver.load(settings.seconds);
        const after = await server.probe();
        return {
          perSecond: result.operations / result.seconds,
          latencyP50Ms: result.latencyP50Ms,
          latencyP99Ms: result.latencyP99Ms,
          cpuMicrosPerOp: result.operations
            ? (after.cpuMicros - before.cpuMicros) / result.operations
            : Number.NaN,
        };
      } finally {
        await driver.close();
      }
    };

  /** autocannon on POST /tasks/ (or /tasks/stream), after one request whose answer is checked. */
  const http =
    (text: string, connections: number, headers: Record<string, string> = {}) =>
    async (server: ServerChild): Promise<Driver> => {
      const body = taskBodyTemplate(text);
      const probeId = `check-${Math.random().toString(36).slice(2)}`;
      const response = await fetch(`${server.urls.http.replace(/\/$/, '')}/tasks/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: body.replaceAll('[<id>]', probeId),
      });
      if (response.status !== 200)
        throw new Error(`${server.spec.label}: check request got HTTP ${response.status}`);
      checkEcho((await response.json()) as Task, text.replace(/^echo /, ''));
      return {
        load: (seconds) =>
          httpLoad({ url: server.urls.http, path: '/tasks/', body, headers, connections, seconds }),
        close: async () => undefined,
      };
    };

  /** `concurrency` loops of `once` over the wire's own client; every answer is checked. */
  const client =
    (wire: Wire, once: (transport: Transport, url: string) => Promise<void>, concurrency: number) =>
    async (server: ServerChild): Promise<Driver> => {
      const { transport, url } = clientFor(wire, server.urls);
      try {
        await once(transport, url);
      } catch (error) {
        await transport.stop();
        throw error;
      }
      return {
        load: (seconds) => closedLoop(() => once(transport, url), { concurrency, seconds }),
        close: () => transport.stop(),
      };
    };

  const echoText = `echo ${ECHO_TEXT}`;
  const c = settings.connections;
  const subjects: Subject[] = [
    {
      id: ids.bare,
      group: 'echo',
      name: 'bare node:http JSON echo',
      server: bare,
      run: throughput(http(echoText, c)),
    },
    {
      id: ids.transport,
      group: 'echo',
      name: 'HTTPTransport + function handler',
      server: transport,
      run: throughput(http(echoText, c)),
    },
    {
      id: ids.refHttp,
      group: 'echo',
      name: 'reference server echo, HTTP, memory store',
      server: memory,
      run: throughput(http(echoText, c)),
    },
    {
      id: ids.refSqlite,
      group: 'echo',
      name: 'reference server echo, HTTP, SQLite store',
      server: sqlite,
      run: throughput(http(echoText, c)),
    },
    {
      id: ids.refApiKey,
      group: 'echo',
      name: 'reference server echo, HTTP, API-key auth',
      server: reference('API-key auth', { AGENT_AUTH: 'apikey', AGENT_API_KEYS: API_KEY }),
      run: throughput(http(echoText, c, { 'x-api-key': API_KEY })),
    },
    {
      id: ids.refExpress,
      group: 'echo',
      name: 'reference server echo, HTTP, express backend',
      server: reference('express backend', { AGENT_HTTP_BACKEND: 'express' }),
      run: throughput(http(echoText, c)),
    },
    ...(['sse', 'ws', 'grpc'] as const).map((wire): Subject => ({
      id: ids.refWire(wire),
      group: 'echo',
      name: `reference server echo, ${WIRE_NAMES[wire]}, memory store`,
      server: memory,
      run: throughput(client(wire, (t, url) => sendEcho(t, url), c)),
    })),
    // A2A: once the reference server has an A2A mode (AGENT_A2A=1 is refused today), the
    // @a2a-js/sdk 1.3 subjects go here: its own server doing the same echo work (blocking
    // SendMessage and SendStreamingMessage), and the reference server in A2A mode, both driven by
    // the SDK's client, so the issue's "≥ 3 × the SDK" targets can be read off one run.
  ];

  for (const n of STREAM_LENGTHS)
    for (const wire of STREAM_WIRES)
      subjects.push({
        id: ids.stream(wire, n),
        group: 'stream',
        name: `reference server stream ${n}, ${WIRE_NAMES[wire]}`,
        server: memory,
        run: throughput(client(wire, (t, url) => streamOnce(t, url, n), c)),
      });

  for (const level of settings.sweep) {
    if (level === settings.connections) continue;
    subjects.push(
      {
        id: ids.sweep(settings, 'bare', level),
        group: 'sweep',
        name: `bare node:http JSON echo, ${level} connections`,
        server: bare,
        run: throughput(http(echoText, level)),
      },
      {
        id: ids.sweep(settings, 'ref', level),
        group: 'sweep',
        name: `reference server echo, HTTP, ${level} connections`,
        server: memory,
        run: throughput(http(echoText, level)),
      },
    );
  }

  for (const bytes of settings.payloadBytes) {
    const text = echoOfSize(bytes);
    subjects.push(
      {
        id: ids.payload('bare', bytes),
        group: 'payload',
        name: `bare node:http JSON echo, ${formatBytes(bytes)} text`,
        server: bare,
        run: throughput(http(text, settings.payloadConnections)),
      },
      {
        id: ids.payload('ref', bytes),
        group: 'payload',
        name: `reference server echo, HTTP, ${formatBytes(bytes)} text`,
        server: memory,
        run: throughput(http(text, settings.payloadConnections)),
      },
    );
  }

  for (const mode of ['at-once', 'one-at-a-time'] as const)
    subjects.push({
      id: ids.cancel(mode),
      group: 'cancel',
      name: `cancel ${settings.cancelTasks.toLocaleString('en-US')} running tasks, ${mode === 'at-once' ? 'all at once' : 'one at a time'}`,
      server: memory,
      run: async (server) => {
        const result = await cancelLatency(server, settings.cancelTasks, mode, settings.quick ? 200 : 1000);
        return { values: { ...result } };
      },
    });

  subjects.push({
    id: ids.idleWs,
    group: 'idle',
    name: `${settings.idleWsConnections.toLocaleString('en-US')} idle WebSocket connections`,
    // --expose-gc lets the probe collect before each RSS reading; nothing else uses it.
    server: reference('memory store, --expose-gc', {}, ['--expose-gc']),
    run: async (server) => ({
      values: { ...(await idleWebSockets(server, settings.idleWsConnections, settings.quick ? 200 : 1000)) },
    }),
  });
  return subjects;
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${bytes / 1024 / 1024} MiB`
    : bytes >= 1024
      ? `${bytes / 1024} KiB`
      : `${bytes} B`;
}
