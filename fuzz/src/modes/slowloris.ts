/**
 * Slowloris: connections that send a request (headers, a body, a WebSocket handshake, the HTTP/2
 * preface) one byte every few seconds, and idle ones that send nothing. Measured: how long until
 * the server closes each, and a healthy caller's `echo` latency meanwhile.
 */
import { connect, type Socket } from 'node:net';
import { LatencyProbe, sleep, type LatencyStats } from '../healthy-caller.js';
import type { FindingLog } from '../oracle.js';
import type { FuzzOptions } from '../options.js';
import { ServerUnderTest, type Urls } from '../server.js';

/** One byte every this many ms. */
const TRICKLE_MS = 2000;

interface Kind {
  kind: string;
  url: (urls: Urls) => string;
  /** Sent at once. */
  head: string;
  /** Then trickled a byte at a time (cycled). */
  trickle: string;
}

const KINDS: Kind[] = [
  { kind: 'http idle (nothing sent)', url: (u) => u.http, head: '', trickle: '' },
  {
    kind: 'http headers trickle',
    url: (u) => u.http,
    head: 'POST /tasks/ HTTP/1.1\r\nHost: x\r\n',
    trickle: 'X-Slow: aaaaaaaaaaaa',
  },
  {
    kind: 'http body trickle',
    url: (u) => u.http,
    head: 'POST /tasks/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
    trickle: '{"id":"slow","messages":[',
  },
  {
    kind: 'sse body trickle',
    url: (u) => u.sse,
    head: 'POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
    trickle: '{"jsonrpc":"2.0","id":1,',
  },
  {
    kind: 'ws handshake trickle',
    url: (u) => u.ws,
    head: 'GET / HTTP/1.1\r\nHost: x\r\n',
    trickle: 'Upgrade: websocket',
  },
  {
    kind: 'grpc preface trickle',
    url: (u) => u.grpc.replace(/^grpc/, 'http'),
    head: '',
    trickle: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
  },
];

export interface SlowlorisKindSummary {
  kind: string;
  connections: number;
  closed: number;
  open: number;
  closeMs: { min: number; p50: number; max: number };
}

export interface SlowlorisSummary {
  connectionsPerKind: number;
  seconds: number;
  trickleEveryMs: number;
  kinds: SlowlorisKindSummary[];
  echo: LatencyStats;
  alive: boolean;
}

interface Tracked {
  socket: Socket;
  openedAt: number;
  closedAfter: number | undefined;
}

function open(kind: Kind, urls: Urls): Tracked {
  const url = new URL(kind.url(urls));
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  const tracked: Tracked = { socket, openedAt: Date.now(), closedAfter: undefined };
  let at = 0;
  let timer: NodeJS.Timeout | undefined;
  socket.on('connect', () => {
    if (kind.head) socket.write(kind.head);
    if (kind.trickle) {
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(kind.trickle[at++ % kind.trickle.length]!);
      }, TRICKLE_MS);
    }
  });
  socket.on('data', () => undefined);
  socket.on('error', () => undefined);
  socket.on('close', () => {
    clearInterval(timer);
    tracked.closedAfter ??= Date.now() - tracked.openedAt;
  });
  return tracked;
}

export async function runSlowloris(options: FuzzOptions, findings: FindingLog): Promise<SlowlorisSummary> {
  const server = await ServerUnderTest.start();
  try {
    const tracked = KINDS.map((kind) => ({
      kind,
      conns: Array.from({ length: options.slowloris }, () => open(kind, server.urls)),
    }));
    const probe = new LatencyProbe(server.urls.http, 500, options.hangMs);
    await sleep(options.slowlorisSeconds * 1000);
    const echo = await probe.stop();
    const kinds = tracked.map(({ kind, conns }): SlowlorisKindSummary => {
      const closed = conns
        .map((c) => c.closedAfter)
        .filter((v): v is number => v !== undefined)
        .sort((a, b) => a - b);
      for (const c of conns) c.socket.destroy();
      return {
        kind: kind.kind,
        connections: conns.length,
        closed: closed.length,
        open: conns.length - closed.length,
        closeMs: {
          min: closed[0] ?? 0,
          p50: closed[Math.floor(closed.length / 2)] ?? 0,
          max: closed[closed.length - 1] ?? 0,
        },
      };
    });
    const alive = server.alive && (await server.healthy(options.hangMs));
    if (!alive)
      findings.add({
        oracle: 'crash',
        kind: 'server down after slowloris',
        target: 'slowloris',
        seed: options.seed,
        detail: server.stderr().slice(-3000),
      });
    if (echo.failures > 0)
      findings.add({
        oracle: 'resources',
        kind: 'healthy echo failed (error or over the hang limit) during slowloris',
        target: 'slowloris',
        seed: options.seed,
        detail: `${echo.failures} of ${echo.count}: ${probe.errors.join(' | ')}`,
      });
    // Shorter windows than Node's own header timeout (60 s) would only restate the window.
    for (const k of kinds) {
      if (k.open > 0 && options.slowlorisSeconds >= 60)
        findings.add({
          oracle: 'resources',
          kind: `${k.kind}: still open after ${options.slowlorisSeconds} s`,
          target: 'slowloris',
          seed: options.seed,
          detail: `${k.open} of ${k.connections} connections still open after ${options.slowlorisSeconds} s (a byte every ${TRICKLE_MS} ms)`,
        });
    }
    return {
      connectionsPerKind: options.slowloris,
      seconds: options.slowlorisSeconds,
      trickleEveryMs: TRICKLE_MS,
      kinds,
      echo,
      alive,
    };
  } finally {
    await server.stop();
  }
}
