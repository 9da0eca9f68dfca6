/** A well-behaved caller beside the abuse: `echo` round trips over HTTP, timed. */
import { request } from 'node:http';
import { echoTask } from './arbitraries/json-bodies.js';

export interface LatencyStats {
  count: number;
  failures: number;
  /** Of the failures, answers that were the server's overload refusal (503 `UNAVAILABLE`, a task limit). */
  overloaded?: number;
  p50: number;
  p99: number;
  max: number;
}

let sequence = 0;

/**
 * The healthy caller is another client than the abusive ones: on Linux it connects from a loopback
 * address of its own, so the server's per-caller limits (which tell anonymous callers apart by
 * address) see two clients, as they would on a real network. Elsewhere only 127.0.0.1 may exist.
 */
const HEALTHY_ADDRESS: { localAddress?: string } =
  process.platform === 'linux' ? { localAddress: '127.0.0.2' } : {};

/** One `echo` task over `POST /tasks/` on a fresh connection; resolves with the round trip in ms, or rejects. */
export function echoOnce(httpUrl: string, timeoutMs: number): Promise<number> {
  const body = JSON.stringify(echoTask(`healthy-${process.pid}-${Date.now()}-${sequence++}`, 'echo healthy'));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${httpUrl}/tasks/`,
      {
        method: 'POST',
        agent: false,
        ...HEALTHY_ADDRESS,
        timeout: timeoutMs,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode === 200 && text.includes('"completed"')) resolve(performance.now() - started);
          else if (res.statusCode === 503 && text.includes('"UNAVAILABLE"'))
            reject(new OverloadedError(`echo answered 503: ${text.slice(0, 200)}`));
          else reject(new Error(`echo answered ${res.statusCode}: ${text.slice(0, 200)}`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`echo took over ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The server refused the call as overloaded (503 `UNAVAILABLE`): its limits at work, not a fault. */
export class OverloadedError extends Error {}

/** One `GET /healthz` on a fresh connection; resolves with the round trip in ms, or rejects. */
export function healthzOnce(httpUrl: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${httpUrl}/healthz`,
      { agent: false, timeout: timeoutMs, ...HEALTHY_ADDRESS },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(performance.now() - started)
            : reject(new Error(`/healthz answered ${res.statusCode}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`/healthz took over ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

export function stats(samples: number[], failures: number, overloaded?: number): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted.length === 0 ? 0 : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
  return {
    count: samples.length + failures,
    failures,
    ...(overloaded === undefined ? {} : { overloaded }),
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
  };
}

/**
 * Round trips (an `echo` task by default, or `GET /healthz`) every `everyMs` until stopped; errors
 * are counted, the first few kept, overload refusals apart.
 */
export class LatencyProbe {
  readonly samples: number[] = [];
  failures = 0;
  overloaded = 0;
  readonly errors: string[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(httpUrl: string, everyMs: number, timeoutMs: number, call = echoOnce) {
    this.loop = (async () => {
      while (this.running) {
        const tick = Date.now();
        try {
          this.samples.push(await call(httpUrl, timeoutMs));
        } catch (error) {
          this.failures++;
          if (error instanceof OverloadedError) this.overloaded++;
          else if (this.errors.length < 5) this.errors.push((error as Error).message);
        }
        const wait = everyMs - (Date.now() - tick);
        if (wait > 0 && this.running) await new Promise((r) => setTimeout(r, wait));
      }
    })();
  }

  async stop(): Promise<LatencyStats> {
    this.running = false;
    await this.loop;
    return stats(this.samples, this.failures, this.overloaded);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
