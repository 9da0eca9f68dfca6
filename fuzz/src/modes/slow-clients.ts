/**
 * Slow and non-reading stream consumers: N callers per streaming transport open a `stream 10000`
 * task and never read a byte. Measured: the server's RSS before, during and after they leave (does
 * it come back within 10 % of the start?), and a healthy caller's `echo` latency meanwhile.
 */
import type { ClientReadableStream } from '@grpc/grpc-js';
import { connect, type Socket } from 'node:net';
import { echoTask } from '../arbitraries/json-bodies.js';
import { encodeTask, ld } from '../arbitraries/protobuf.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { healthzOnce, LatencyProbe, sleep, stats, type LatencyStats } from '../healthy-caller.js';
import type { FindingLog } from '../oracle.js';
import type { FuzzOptions, Target } from '../options.js';
import { ServerUnderTest } from '../server.js';
import { grpcClient, toMetadata, AGENT_SERVICE } from '../wire/grpc-raw.js';
import { encodeFrame, handshake } from '../wire/ws-raw.js';

export interface SlowSummary {
  targets: Target[];
  /** The server's store meanwhile. */
  store: 'memory' | 'sqlite';
  consumers: number;
  seconds: number;
  /** Consumers whose stream was opened (request accepted), per transport. */
  opened: Record<string, number>;
  rssStartKiB: number | undefined;
  rssPeakKiB: number | undefined;
  /** RSS `settleSeconds` after they left. */
  rssAfterKiB: number | undefined;
  /** RSS 10 s after they left, when the full run waits longer. */
  rssAfter10sKiB: number | undefined;
  settleSeconds: number;
  rssAfterRatio: number;
  rssRecovered: boolean;
  /** RSS samples (KiB) once a second during the window. */
  rssSamplesKiB: number[];
  echoBefore: LatencyStats;
  echoDuring: LatencyStats;
  echoAfter: LatencyStats;
  /** `GET /healthz` every 100 ms during the window. */
  healthzDuring: LatencyStats;
  alive: boolean;
}

/** The most the server's RSS may reach meanwhile, with its default settings. */
export const RSS_BOUND_KIB = 512 * 1024;
/** The most a `/healthz` may take at p99 meanwhile. */
export const HEALTHZ_P99_BOUND_MS = 50;

interface Consumer {
  close(): void;
}

const STREAM_TEXT = 'stream 10000';

function httpStreamRequest(port: number, path: string, body: string): Buffer {
  return Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** A socket that sends `bytes` and then never reads. Resolves once connected and written. */
function nonReadingSocket(host: string, port: number, bytes: Buffer): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => {
      socket.write(bytes);
      socket.pause();
      resolve(socket);
    });
    socket.on('error', (e) => reject(e));
  });
}

async function openConsumer(target: Target, server: ServerUnderTest, id: string): Promise<Consumer> {
  const task = echoTask(id, STREAM_TEXT);
  if (target === 'http-node' || target === 'http-express' || target === 'sse') {
    const url = new URL(target === 'sse' ? server.urls.sse : server.urls.http);
    const body =
      target === 'sse'
        ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/stream', params: { task } })
        : JSON.stringify(task);
    const socket = await nonReadingSocket(
      url.hostname,
      Number(url.port),
      httpStreamRequest(Number(url.port), '/tasks/stream', body),
    );
    return { close: () => socket.destroy() };
  }
  if (target === 'ws') {
    const url = new URL(server.urls.ws);
    const hs = await handshake(url.hostname, Number(url.port), '/', [], 10_000);
    if (hs.status !== 101) {
      hs.socket.destroy();
      throw new Error(`handshake answered ${hs.status}`);
    }
    hs.socket.write(
      encodeFrame({
        opcode: 1,
        payload: Buffer.from(JSON.stringify({ op: 'task.send', id: 's1', task, stream: true })),
      }),
    );
    hs.socket.pause();
    return { close: () => hs.socket.destroy() };
  }
  // gRPC: its own connection per consumer, the stream paused so HTTP/2 flow control pushes back.
  const client = grpcClient(server.urls.grpc, true);
  const body = ld(
    1,
    ld(
      1,
      encodeTask({
        id,
        state: 0,
        role: 1,
        messages: 1,
        parts: 1,
        content: { kind: 'echo', text: STREAM_TEXT },
        metadataDepth: 0,
        wrongWire: 'none',
        unknown: 'none',
      }),
    ),
  );
  const call: ClientReadableStream<Buffer> = client.makeServerStreamRequest(
    `/${AGENT_SERVICE}/Stream`,
    (b: Buffer) => b,
    (b: Buffer) => b,
    body,
    toMetadata([]),
    {},
  );
  call.on('error', () => undefined);
  // Wait for the first message so the stream is really open, then stop reading.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 5000);
    call.once('data', () => {
      clearTimeout(timer);
      call.pause();
      resolve();
    });
  });
  return {
    close: () => {
      call.cancel();
      client.close();
    },
  };
}

export async function runSlowClients(
  targets: Target[],
  options: FuzzOptions,
  findings: FindingLog,
): Promise<SlowSummary> {
  const dir =
    options.slowStore === 'sqlite' ? mkdtempSync(path.join(tmpdir(), 'agent-fuzz-slow-')) : undefined;
  const server = await ServerUnderTest.start(
    dir === undefined ? {} : { AGENT_STORE: `sqlite:${path.join(dir, 'tasks.db')}` },
  );
  const label = targets.join('+');
  const add = (oracle: 'crash' | 'resources', kind: string, detail: string): void =>
    findings.add({ oracle, kind, target: label, seed: options.seed, detail });
  try {
    // Warm up (JIT, pools) so the start figure is the server's settled size, not its first breath.
    const warm = new LatencyProbe(server.urls.http, 20, options.hangMs);
    await sleep(1500);
    const echoBefore = await warm.stop();
    const rssStart = server.rssKiB();
    const samples: number[] = [];
    const sampler = setInterval(() => {
      const rss = server.rssKiB();
      if (rss !== undefined) samples.push(rss);
    }, 1000);
    const probe = new LatencyProbe(server.urls.http, 250, options.hangMs);
    const health = new LatencyProbe(server.urls.http, 100, options.hangMs, healthzOnce);
    const consumers: Consumer[] = [];
    const opened: Record<string, number> = {};
    const openErrors: string[] = [];
    const opening = targets.flatMap((target) =>
      Array.from({ length: options.nonReaders }, async (_, i) => {
        try {
          consumers.push(await openConsumer(target, server, `slow-${target}-${options.seed}-${i}`));
          opened[target] = (opened[target] ?? 0) + 1;
        } catch (error) {
          if (openErrors.length < 5) openErrors.push(`${target}: ${(error as Error).message}`);
        }
      }),
    );
    const windowStart = Date.now();
    await Promise.all(opening);
    await sleep(Math.max(0, options.slowSeconds * 1000 - (Date.now() - windowStart)));
    clearInterval(sampler);
    const echoDuring = await probe.stop();
    const healthzDuring = await health.stop();
    const rssPeak = samples.length > 0 ? Math.max(...samples) : undefined;
    for (const c of consumers) c.close();
    // Give the server time to notice the closed connections and drop what it buffered for them.
    // Their runs go on when they leave (released from back-pressure, at full speed): the figure is
    // taken once those have had time to finish and be stored, 30 s in a full run, and 10 s in is
    // reported beside it.
    const settleMs = options.smoke ? 3000 : 30_000;
    const after = new LatencyProbe(server.urls.http, 250, options.hangMs);
    let rssAfter10s: number | undefined;
    if (settleMs > 10_000) {
      await sleep(10_000);
      rssAfter10s = server.rssKiB();
      await sleep(settleMs - 10_000);
    } else await sleep(settleMs);
    const echoAfter = await after.stop();
    const rssAfter = server.rssKiB();
    const ratio = rssStart && rssAfter ? rssAfter / rssStart : 0;
    // The consumers' runs go on after they leave (leaving is not a cancel: a caller may come back
    // for its task) and the store keeps them, within its bound; with the memory store, compressed.
    const recovered = rssStart !== undefined && rssAfter !== undefined && ratio <= 1.1;
    const alive = server.alive && (await server.healthy(options.hangMs));
    // A process that is gone crashed; one still running but not answering /healthz is starved by
    // the streams it still runs (reported with the other resource figures, not as a crash).
    if (!server.alive) add('crash', 'process exited under slow consumers', server.stderr().slice(-3000));
    else if (!alive)
      add(
        'resources',
        `/healthz unanswered within ${options.hangMs} ms after slow consumers`,
        'process alive',
      );
    const echoFaults = echoDuring.failures - (echoDuring.overloaded ?? 0);
    if (echoFaults > 0)
      add(
        'resources',
        'healthy echo failed (error or over the hang limit) during slow consumers',
        `${echoFaults} of ${echoDuring.count}: ${probe.errors.join(' | ')}`,
      );
    if (rssPeak !== undefined && rssPeak > RSS_BOUND_KIB)
      add('resources', 'RSS over its 512 MB bound during slow consumers', `peak ${rssPeak} KiB`);
    if (healthzDuring.failures > 0 || healthzDuring.p99 > HEALTHZ_P99_BOUND_MS)
      add(
        'resources',
        `/healthz p99 over ${HEALTHZ_P99_BOUND_MS} ms or failing during slow consumers`,
        `p50 ${healthzDuring.p50} ms, p99 ${healthzDuring.p99} ms, max ${healthzDuring.max} ms, ${healthzDuring.failures} failed of ${healthzDuring.count}: ${health.errors.join(' | ')}`,
      );
    if (!recovered)
      add(
        'resources',
        'RSS not back within 10 % after slow consumers left',
        `start ${rssStart} KiB, peak ${rssPeak} KiB, ${settleMs / 1000} s after they left ${rssAfter} KiB (×${ratio.toFixed(2)})`,
      );
    if (echoDuring.p99 > 1000)
      add(
        'resources',
        'healthy echo p99 over 1 s during slow consumers',
        `p50 ${echoDuring.p50} ms, p99 ${echoDuring.p99} ms, max ${echoDuring.max} ms`,
      );
    if (openErrors.length > 0) options.log(`  consumers that could not open: ${openErrors.join(' | ')}`);
    return {
      targets,
      store: options.slowStore,
      consumers: options.nonReaders * targets.length,
      seconds: options.slowSeconds,
      opened,
      rssStartKiB: rssStart,
      rssPeakKiB: rssPeak,
      rssAfterKiB: rssAfter,
      rssAfter10sKiB: rssAfter10s,
      settleSeconds: settleMs / 1000,
      rssAfterRatio: ratio,
      rssRecovered: recovered,
      rssSamplesKiB: samples,
      echoBefore,
      echoDuring,
      echoAfter: echoAfter.count > 0 ? echoAfter : stats([], 0),
      healthzDuring,
      alive,
    };
  } finally {
    await server.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}
