/**
 * Every subject of a run. Each names the server child it needs (built per run, so a SQLite subject
 * gets a fresh file) and measures it from the bench process.
 */
import { randomUUID } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import path from 'node:path';
import type { Task, Transport } from '@agent/core';
import {
  A2A_HEADERS,
  A2A_JSON_RPC_PATH,
  a2aRequestTemplate,
  a2aSendVerifier,
  a2aStreamOnce,
  checkA2ASend,
} from './a2a.js';
import { cancelFloor, cancelLatency } from './cancel.js';
import {
  a2aSdkSpec as a2aSdk,
  bareSpec as bare,
  referenceSpec,
  transportSpec as transport,
  type ServerChild,
  type ServerSpec,
} from './child.js';
import { clientFor, WIRE_NAMES, type Wire } from './clients.js';
import { idleWebSockets } from './idle-ws.js';
import { closedLoop, httpLoad, type LoadResult } from './load.js';
import { REPLICAS, replicaRun, type ReplicaDatabase } from './replicas.js';
import type { Settings } from './settings.js';
import { checkEcho, ECHO_TEXT, echoOfSize, sendEcho, streamOnce, taskBodyTemplate } from './tasks.js';

export type GroupId = 'echo' | 'a2a' | 'stream' | 'sweep' | 'payload' | 'cancel' | 'replicas' | 'idle';

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

interface SubjectInfo {
  id: string;
  group: GroupId;
  name: string;
}

/** Measured against one server child the runner starts for it (or, in quick mode, reuses). */
export interface ServedSubject extends SubjectInfo {
  server: () => ServerSpec;
  run(server: ServerChild): Promise<Sample>;
}

/** Starts, measures and stops the processes it needs itself (several replicas and their database). */
export interface SelfServedSubject extends SubjectInfo {
  server?: undefined;
  run(): Promise<Sample>;
}

export type Subject = ServedSubject | SelfServedSubject;

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
  /** The reference server in A2A mode, or the @a2a-js/sdk baseline; blocking SendMessage or streamed. */
  a2a: (server: 'ref' | 'sdk', call: 'send' | 'stream') => `a2a:${server}-${call}`,
  /** The main echo subjects already run at the main connection count: the sweep reuses them there. */
  sweep: (settings: Settings, server: 'bare' | 'ref', connections: number) =>
    connections === settings.connections
      ? server === 'bare'
        ? ids.bare
        : ids.refHttp
      : `sweep:${server}:${connections}`,
  payload: (server: 'bare' | 'ref', bytes: number) => `payload:${server}:${bytes}`,
  cancel: (mode: 'at-once' | 'one-at-a-time') => `cancel:${mode}`,
  /** Bare node:http answering the same cancels at once, with nothing behind them. */
  cancelFloor: 'cancel:floor',
  replicas: 'replicas:postgres',
  idleWs: 'idle:ws',
};

/**
 * `replicaDatabase`: the PostgreSQL server the replicas subject starts at first use (each round gets
 * a database of its own on it); the caller stops it after the run.
 */
export function buildSubjects(
  settings: Settings,
  tmpDir: string,
  replicaDatabase: ReplicaDatabase,
): Subject[] {
  let sqliteFiles = 0;
  const reference =
    (label: string, env: Record<string, string> = {}, nodeArgs: string[] = []) =>
    (): ServerSpec =>
      referenceSpec(label, env, nodeArgs);
  const memory = reference('memory store');
  const a2aMode = reference('A2A mode', { AGENT_A2A: '1' });
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

  /** autocannon on the A2A JSON-RPC route, after one SendMessage whose answer is checked. */
  const a2aSend =
    (text: string, connections: number) =>
    async (server: ServerChild): Promise<Driver> => {
      const body = a2aRequestTemplate('SendMessage', `echo ${text}`);
      const response = await fetch(`${server.urls.http.replace(/\/$/, '')}${A2A_JSON_RPC_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...A2A_HEADERS },
        body: body.replaceAll('[<id>]', randomUUID()),
      });
      if (response.status !== 200)
        throw new Error(`${server.spec.label}: check request got HTTP ${response.status}`);
      checkA2ASend(await response.json(), text);
      return {
        load: (seconds) =>
          httpLoad({
            url: server.urls.http,
            path: A2A_JSON_RPC_PATH,
            body,
            headers: A2A_HEADERS,
            connections,
            seconds,
            verifyBody: a2aSendVerifier(text),
          }),
        close: async () => undefined,
      };
    };

  /** `concurrency` loops of one SendStreamingMessage each over keep-alive connections; every stream checked. */
  const a2aStream =
    (text: string, concurrency: number) =>
    async (server: ServerChild): Promise<Driver> => {
      const template = a2aRequestTemplate('SendStreamingMessage', `echo ${text}`);
      const agent = new HttpAgent({ keepAlive: true, maxSockets: concurrency });
      const url = new URL(server.urls.http);
      const once = () => a2aStreamOnce(agent, url, template.replaceAll('[<id>]', randomUUID()), text);
      try {
        await once();
      } catch (error) {
        agent.destroy();
        throw error;
      }
      return {
        load: (seconds) => closedLoop(once, { concurrency, seconds }),
        close: async () => agent.destroy(),
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
  ];

  // A2A: the reference server in A2A mode and the official SDK's server doing the same echo work,
  // driven alike (the same JSON-RPC bodies, every answer checked), so the ratio is the servers'.
  const a2aServers = [
    { key: 'ref', name: 'reference server, A2A mode', spec: a2aMode },
    { key: 'sdk', name: '@a2a-js/sdk 1.3 + express', spec: a2aSdk },
  ] as const;
  for (const { key, name, spec } of a2aServers)
    subjects.push(
      {
        id: ids.a2a(key, 'send'),
        group: 'a2a',
        name: `${name}: A2A SendMessage (blocking)`,
        server: spec,
        run: throughput(a2aSend(ECHO_TEXT, c)),
      },
      {
        id: ids.a2a(key, 'stream'),
        group: 'a2a',
        name: `${name}: A2A SendStreamingMessage`,
        server: spec,
        run: throughput(a2aStream(ECHO_TEXT, c)),
      },
    );

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

  subjects.push({
    id: ids.cancelFloor,
    group: 'cancel',
    name: `bare node:http answering ${settings.cancelTasks.toLocaleString('en-US')} cancels sent at once (no task behind them)`,
    server: bare,
    run: async (server) => ({ values: { ...(await cancelFloor(server, settings.cancelTasks)) } }),
  });
  for (const mode of ['at-once', 'one-at-a-time'] as const)
    subjects.push({
      id: ids.cancel(mode),
      group: 'cancel',
      name: `cancel ${settings.cancelTasks.toLocaleString('en-US')} running tasks, ${mode === 'at-once' ? 'all at once' : 'one at a time'}`,
      server: memory,
      run: async (server) => {
        const result = await cancelLatency(
          server,
          settings.cancelTasks,
          mode,
          settings.quick ? 200 : 1000,
          settings.cancelWarmup,
        );
        return { values: { ...result } };
      },
    });

  subjects.push({
    id: ids.replicas,
    group: 'replicas',
    name: `${settings.replicaTasks.toLocaleString('en-US')} tasks over ${REPLICAS} replicas on PostgreSQL, a fifth canceled from another replica`,
    run: async () => {
      const { tasksPerSecond, cpuMicrosPerTask, peakRssBytes, ...values } = await replicaRun(
        replicaDatabase,
        settings.replicaTasks,
        settings.connections,
      );
      return { perSecond: tasksPerSecond, cpuMicrosPerOp: cpuMicrosPerTask, peakRssBytes, values };
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
