/**
 * `pnpm bench` — runs every benchmark once and prints a table; `--write` also rewrites
 * docs/benchmarks.md. Settings: BENCH_DURATION (seconds, default 5), BENCH_CONNECTIONS (default 32).
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runGrpcBench } from './grpc-bench.js';
import { runHttpBench, type HttpComparison } from './http-bench.js';
import type { Comparison } from './load.js';
import { runStreamBench } from './stream-bench.js';

function row(c: HttpComparison): string {
  const pass = c.ratio >= c.target ? 'meets' : 'BELOW';
  return [
    `| ${c.baseline.name} | ${c.baseline.requestsPerSecond.toLocaleString('en-US')} | ${c.baseline.latencyP50Ms} / ${c.baseline.latencyP99Ms} | | |`,
    `| ${c.subject.name} | ${c.subject.requestsPerSecond.toLocaleString('en-US')} | ${c.subject.latencyP50Ms} / ${c.subject.latencyP99Ms} | **${c.ratio.toFixed(2)}** | ≥ ${c.target} (${pass}) |`,
  ].join('\n');
}

function loopRows(c: Comparison, unit: string): string {
  return [
    `| ${c.baseline.name} | ${c.baseline.perSecond.toLocaleString('en-US')} ${unit} | |`,
    `| ${c.subject.name} | ${c.subject.perSecond.toLocaleString('en-US')} ${unit} | **${c.ratio.toFixed(2)}** |`,
  ].join('\n');
}

async function main(): Promise<void> {
  const settings = {
    durationSeconds: Number(process.env.BENCH_DURATION ?? 5),
    connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  };
  const http = await runHttpBench(settings);
  for (const c of http) {
    for (const r of [c.baseline, c.subject]) {
      if (r.errors || r.non2xx)
        throw new Error(`${r.name}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
    }
  }
  const table = [
    '| subject | req/s | latency p50 / p99 (ms) | ratio | target |',
    '|---|---:|---:|---:|---|',
    ...http.map(row),
  ].join('\n');
  process.stdout.write(`${table}\n\n`);
  const grpc = await runGrpcBench({ seconds: settings.durationSeconds, concurrency: settings.connections });
  const streams = await runStreamBench({ seconds: settings.durationSeconds, concurrency: 4 });
  const streamTable = [
    '| subject | throughput | ratio |',
    '|---|---:|---:|',
    loopRows(grpc, 'calls/s'),
    loopRows(streams.ws, 'events/s'),
    loopRows(streams.sse, 'events/s'),
  ].join('\n');
  process.stdout.write(`${streamTable}\n`);
  if (process.argv.includes('--write')) {
    const doc = `# Benchmarks

Reproduce with \`pnpm bench -- --write\` (BENCH_DURATION=${settings.durationSeconds} s per subject,
${settings.connections} connections, after a 1 s warm-up; every subject runs in the same process, one
after another, on the same machine). Numbers vary from run to run by about 10 %; compare the ratios,
which pit each subject against its bare baseline measured minutes apart in the same run.

Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.

## HTTP: POST /tasks/ echo (autocannon)

The payload is one Task with one text message; the handler returns it completed. The \`node\`
backend is compared with a bare \`node:http\` JSON echo, the \`express\` backend with a bare express 5
\`express.json()\` echo. The transport's numbers include the server pipeline (authentication step,
Task schema validation, dispatch, error policy), routing, the body limit, JSON parsing and the
handler call. The \`express\` backend reads bodies with the same capped reader as the \`node\` backend
(not \`express.json()\`), which is why it can outrun its baseline.

${table}

## gRPC unary and streamed events

gRPC: \`GRPCTransport\` Invoke (send_task echo, through the proto codec and the Task schema check) against
a bare grpc-js unary echo that parses and re-serializes the same Task JSON, ${settings.connections} calls in
flight. Streams: 4 concurrent streams of 1,000 \`task.artifact\` events each through
\`WebSocketTransport\` / \`SSETransport\` (server and client), against a bare \`ws\` server writing the same
frames and a bare \`node:http\` SSE writer read with eventsource-parser.

${streamTable}
`;
    writeFileSync(path.resolve(__dirname, '../../docs/benchmarks.md'), doc);
    process.stdout.write('wrote docs/benchmarks.md\n');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
