/** A well-behaved caller beside the abuse: `echo` round trips over HTTP, timed. */
import { request } from 'node:http';
import { echoTask } from './arbitraries/json-bodies.js';

export interface LatencyStats {
  count: number;
  failures: number;
  p50: number;
  p99: number;
  max: number;
}

let sequence = 0;

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
        timeout: timeoutMs,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode === 200 && text.includes('"completed"')) resolve(performance.now() - started);
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

export function stats(samples: number[], failures: number): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted.length === 0 ? 0 : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
  return { count: samples.length + failures, failures, p50: at(0.5), p99: at(0.99), max: at(1) };
}

/** Echo round trips every `everyMs` until stopped; errors are counted, the first few kept. */
export class LatencyProbe {
  readonly samples: number[] = [];
  failures = 0;
  readonly errors: string[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(httpUrl: string, everyMs: number, timeoutMs: number) {
    this.loop = (async () => {
      while (this.running) {
        const tick = Date.now();
        try {
          this.samples.push(await echoOnce(httpUrl, timeoutMs));
        } catch (error) {
          this.failures++;
          if (this.errors.length < 5) this.errors.push((error as Error).message);
        }
        const wait = everyMs - (Date.now() - tick);
        if (wait > 0 && this.running) await new Promise((r) => setTimeout(r, wait));
      }
    })();
  }

  async stop(): Promise<LatencyStats> {
    this.running = false;
    await this.loop;
    return stats(this.samples, this.failures);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
