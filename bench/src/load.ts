/**
 * The load generators, all running in the bench process, never in a server's: autocannon for the
 * HTTP routes (one raw HTTP/1.1 client for every HTTP subject, the bare baseline included), and a
 * closed loop over a transport's own client for the wire protocols autocannon cannot speak (SSE
 * JSON-RPC, WebSocket, gRPC) and for counting streamed events.
 */
import autocannon from 'autocannon';
import { percentile } from './stats.js';

export interface LoadResult {
  /** Completed calls (unary requests, or whole streams). */
  operations: number;
  seconds: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
}

export interface HttpLoadOptions {
  url: string;
  path: string;
  /** The request body; every `[<id>]` in it becomes a fresh id per request (autocannon idReplacement). */
  body: string;
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
  /**
   * Checks every answer's body: for a route whose errors travel with HTTP 200 (JSON-RPC), a fast
   * wrong answer must fail the run rather than count.
   */
  verifyBody?: (body: string | Buffer | undefined) => boolean;
}

/**
 * Fresh ids per request because a server that records tasks answers a resubmitted id from its store
 * without running anything: a fixed body would measure the store lookup, not the task.
 */
export async function httpLoad(options: HttpLoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: `${options.url.replace(/\/$/, '')}${options.path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.body,
    idReplacement: true,
    connections: options.connections,
    duration: options.seconds,
    // Large payloads under many connections answer slowly; a timeout here would be an error.
    timeout: 60,
    ...(options.verifyBody ? { verifyBody: options.verifyBody } : {}),
  });
  if (result.errors || result.timeouts || result.non2xx || result.mismatches)
    throw new Error(
      `${options.path}: ${result.errors} errors (${result.timeouts} timeouts), ${result.non2xx} non-2xx answers, ${result.mismatches} wrong answers`,
    );
  return {
    operations: result.requests.total,
    seconds: result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
  };
}

/**
 * Runs `concurrency` loops of `once()` for `seconds` (each loop starts its next call when the last
 * one ends). `once` throws on a wrong answer, which fails the subject.
 */
export async function closedLoop(
  once: () => Promise<void>,
  options: { concurrency: number; seconds: number },
): Promise<LoadResult> {
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await once();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return {
    operations: latencies.length,
    seconds: (performance.now() - started) / 1000,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
  };
}
