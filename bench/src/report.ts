/** Medians over rounds, laid out as one markdown table per group, and docs/benchmarks.md around them. */
import os from 'node:os';
import type { ProfileSummary } from './profile.js';
import type { Settings } from './settings.js';
import { median } from './stats.js';
import { formatBytes, ids, STREAM_LENGTHS, STREAM_WIRES, type Sample, type Subject } from './subjects.js';
import { WIRE_NAMES } from './clients.js';

export type Samples = Map<string, Sample[]>;

type NumericField = 'perSecond' | 'latencyP50Ms' | 'latencyP99Ms' | 'cpuMicrosPerOp' | 'peakRssBytes';

class Medians {
  constructor(private readonly samples: Samples) {}

  has(id: string): boolean {
    return (this.samples.get(id)?.length ?? 0) > 0;
  }

  field(id: string, field: NumericField): number {
    const values = (this.samples.get(id) ?? [])
      .map((s) => s[field])
      .filter((v): v is number => v !== undefined);
    return median(values);
  }

  value(id: string, key: string): number {
    const values = (this.samples.get(id) ?? [])
      .map((s) => s.values?.[key])
      .filter((v): v is number => v !== undefined);
    return median(values);
  }

  /** (max − min) / median of the throughput over rounds: how far to trust a difference. */
  spread(id: string): number {
    const values = (this.samples.get(id) ?? [])
      .map((s) => s.perSecond)
      .filter((v): v is number => v !== undefined);
    if (values.length < 2) return Number.NaN;
    return (Math.max(...values) - Math.min(...values)) / median(values);
  }
}

const dash = '–';
function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return dash;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
function ratio(value: number): string {
  if (!Number.isFinite(value)) return dash;
  return value < 0.1 ? value.toFixed(3) : value.toFixed(2);
}
function ms(value: number): string {
  if (!Number.isFinite(value)) return dash;
  // autocannon reports whole milliseconds: no decimals it did not measure.
  if (Number.isInteger(value)) return num(value);
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : num(value);
}
function mb(bytes: number): string {
  return Number.isFinite(bytes) ? num(bytes / 1024 / 1024) : dash;
}
function pct(share: number): string {
  return Number.isFinite(share) ? `${(share * 100).toFixed(share < 0.1 ? 1 : 0)} %` : dash;
}
function table(head: string[], align: ('l' | 'r')[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${align.map((a) => (a === 'r' ? '---:' : '---')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}
function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'not measured' : ok ? 'meets' : '**below**';
}

export interface ReportTables {
  echo: string;
  a2a: string;
  streams: string;
  sweep: string;
  payload: string;
  cancel: string;
  replicas: string;
  idle: string;
  targets: string;
  profile: string;
}

export function buildTables(
  settings: Settings,
  subjects: Subject[],
  samples: Samples,
  profile: ProfileSummary | undefined,
): ReportTables {
  const m = new Medians(samples);
  const bareRps = m.field(ids.bare, 'perSecond');
  const byId = new Map(subjects.map((s) => [s.id, s]));

  const echoRows = subjects
    .filter((s) => s.group === 'echo' && m.has(s.id))
    .map((s) => [
      s.name,
      num(m.field(s.id, 'perSecond')),
      ratio(m.field(s.id, 'perSecond') / bareRps),
      `${ms(m.field(s.id, 'latencyP50Ms'))} / ${ms(m.field(s.id, 'latencyP99Ms'))}`,
      num(m.field(s.id, 'cpuMicrosPerOp')),
      mb(m.field(s.id, 'peakRssBytes')),
      pct(m.spread(s.id)),
    ]);
  const echo = table(
    [
      'subject',
      'req/s',
      '× bare node:http',
      'latency p50 / p99 (ms)',
      'server CPU µs/req',
      'peak RSS (MB)',
      'spread',
    ],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
    echoRows,
  );

  const a2aRows = (['send', 'stream'] as const).flatMap((call) =>
    (['ref', 'sdk'] as const)
      .map((server) => ids.a2a(server, call))
      .filter((id) => m.has(id))
      .map((id) => [
        byId.get(id)!.name,
        num(m.field(id, 'perSecond')),
        ratio(m.field(id, 'perSecond') / m.field(ids.a2a('sdk', call), 'perSecond')),
        `${ms(m.field(id, 'latencyP50Ms'))} / ${ms(m.field(id, 'latencyP99Ms'))}`,
        num(m.field(id, 'cpuMicrosPerOp')),
        mb(m.field(id, 'peakRssBytes')),
        pct(m.spread(id)),
      ]),
  );
  const a2a = table(
    [
      'subject',
      'calls/s',
      '× @a2a-js/sdk (same call)',
      'latency p50 / p99 (ms)',
      'server CPU µs/call',
      'peak RSS (MB)',
      'spread',
    ],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
    a2aRows,
  );

  const streamRows: string[][] = [];
  for (const n of STREAM_LENGTHS)
    for (const wire of STREAM_WIRES) {
      const id = ids.stream(wire, n);
      if (!m.has(id)) continue;
      const rate = m.field(id, 'perSecond');
      streamRows.push([
        `stream ${n}`,
        WIRE_NAMES[wire],
        num(rate),
        num(rate * n),
        ratio(rate / bareRps),
        `${ms(m.field(id, 'latencyP50Ms'))} / ${ms(m.field(id, 'latencyP99Ms'))}`,
        num(m.field(id, 'cpuMicrosPerOp')),
        mb(m.field(id, 'peakRssBytes')),
      ]);
    }
  const streams = table(
    [
      'command',
      'wire',
      'streams/s',
      'artifact events/s',
      '× bare node:http echo req/s',
      'stream p50 / p99 (ms)',
      'server CPU µs/stream',
      'peak RSS (MB)',
    ],
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
    streamRows,
  );

  const sweepRows = settings.sweep
    .filter((level) => m.has(ids.sweep(settings, 'ref', level)))
    .map((level) => {
      const bareId = ids.sweep(settings, 'bare', level);
      const refId = ids.sweep(settings, 'ref', level);
      return [
        num(level),
        num(m.field(bareId, 'perSecond')),
        num(m.field(refId, 'perSecond')),
        ratio(m.field(refId, 'perSecond') / m.field(bareId, 'perSecond')),
        `${ms(m.field(refId, 'latencyP50Ms'))} / ${ms(m.field(refId, 'latencyP99Ms'))}`,
        num(m.field(bareId, 'cpuMicrosPerOp')),
        num(m.field(refId, 'cpuMicrosPerOp')),
      ];
    });
  const sweep = table(
    [
      'connections',
      'bare node:http req/s',
      'reference server req/s',
      'ratio',
      'reference p50 / p99 (ms)',
      'bare CPU µs/req',
      'reference CPU µs/req',
    ],
    ['r', 'r', 'r', 'r', 'r', 'r', 'r'],
    sweepRows,
  );

  const payloadRows = settings.payloadBytes
    .filter((bytes) => m.has(ids.payload('ref', bytes)))
    .map((bytes) => {
      const bareId = ids.payload('bare', bytes);
      const refId = ids.payload('ref', bytes);
      return [
        formatBytes(bytes),
        num(m.field(bareId, 'perSecond'), m.field(bareId, 'perSecond') < 100 ? 1 : 0),
        num(m.field(refId, 'perSecond'), m.field(refId, 'perSecond') < 100 ? 1 : 0),
        ratio(m.field(refId, 'perSecond') / m.field(bareId, 'perSecond')),
        num(m.field(bareId, 'cpuMicrosPerOp')),
        num(m.field(refId, 'cpuMicrosPerOp')),
        mb(m.field(bareId, 'peakRssBytes')),
        mb(m.field(refId, 'peakRssBytes')),
      ];
    });
  const payload = table(
    [
      'text part',
      'bare node:http req/s',
      'reference server req/s',
      'ratio',
      'bare CPU µs/req',
      'reference CPU µs/req',
      'bare peak RSS (MB)',
      'reference peak RSS (MB)',
    ],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    payloadRows,
  );

  const cancelRows = (['at-once', 'one-at-a-time'] as const)
    .filter((mode) => m.has(ids.cancel(mode)))
    .map((mode) => {
      const id = ids.cancel(mode);
      return [
        byId.get(id)!.name,
        `${ms(m.value(id, 'callerP50Ms'))} / ${ms(m.value(id, 'callerP99Ms'))}`,
        `${ms(m.value(id, 'cancelP50Ms'))} / ${ms(m.value(id, 'cancelP99Ms'))}`,
        `${ms(m.value(id, 'coldCallerP50Ms'))} / ${ms(m.value(id, 'coldCallerP99Ms'))}`,
        pct(m.value(id, 'sleepingCpuShare')),
        mb(m.field(id, 'peakRssBytes')),
      ];
    });
  if (m.has(ids.cancelFloor))
    cancelRows.unshift([
      byId.get(ids.cancelFloor)!.name,
      '–',
      `${ms(m.value(ids.cancelFloor, 'cancelP50Ms'))} / ${ms(m.value(ids.cancelFloor, 'cancelP99Ms'))}`,
      '–',
      '–',
      mb(m.field(ids.cancelFloor, 'peakRssBytes')),
    ]);
  const cancel = table(
    [
      'subject',
      "to the task caller's final canceled status, p50 / p99 (ms)",
      "to the cancel call's answer, p50 / p99 (ms)",
      "cold: the fresh server's first cancels (the warm-up), to the caller, p50 / p99 (ms)",
      'server CPU while the tasks sleep (share of a core)',
      'peak RSS (MB)',
    ],
    ['l', 'r', 'r', 'r', 'r', 'r'],
    cancelRows,
  );

  const replicas = m.has(ids.replicas)
    ? table(
        [
          'subject',
          'tasks',
          'completed',
          'canceled',
          'lost',
          'wrong',
          'send + cancel (s)',
          'tasks/s',
          'cancel, to its answer from another replica, p50 / p99 (ms)',
          "to the task caller's canceled answer, p50 / p99 (ms)",
          'servers CPU µs/task (3 together)',
          'peak RSS per replica (MB)',
          'spread',
        ],
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        [
          [
            byId.get(ids.replicas)!.name,
            num(m.value(ids.replicas, 'tasks')),
            num(m.value(ids.replicas, 'completed')),
            num(m.value(ids.replicas, 'canceled')),
            num(m.value(ids.replicas, 'lost')),
            num(m.value(ids.replicas, 'wrong')),
            num(m.value(ids.replicas, 'seconds'), 1),
            num(m.field(ids.replicas, 'perSecond')),
            `${ms(m.value(ids.replicas, 'cancelP50Ms'))} / ${ms(m.value(ids.replicas, 'cancelP99Ms'))}`,
            `${ms(m.value(ids.replicas, 'callerP50Ms'))} / ${ms(m.value(ids.replicas, 'callerP99Ms'))}`,
            num(m.field(ids.replicas, 'cpuMicrosPerOp')),
            mb(m.field(ids.replicas, 'peakRssBytes')),
            pct(m.spread(ids.replicas)),
          ],
        ],
      )
    : 'not run';

  const idle = m.has(ids.idleWs)
    ? table(
        ['subject', 'RSS per connection (KB)', 'given back after close'],
        ['l', 'r', 'r'],
        [
          [
            byId.get(ids.idleWs)!.name,
            num(m.value(ids.idleWs, 'kbPerConnection'), 1),
            pct(m.value(ids.idleWs, 'returnedShare')),
          ],
        ],
      )
    : 'not run';

  const refRps = m.field(ids.refHttp, 'perSecond');
  const sqliteRps = m.field(ids.refSqlite, 'perSecond');
  const kib64 = 64 * 1024;
  const payloadRatio =
    m.field(ids.payload('ref', kib64), 'perSecond') / m.field(ids.payload('bare', kib64), 'perSecond');
  const atOnceP99 = m.value(ids.cancel('at-once'), 'callerP99Ms');
  const oneP99 = m.value(ids.cancel('one-at-a-time'), 'callerP99Ms');
  const sdkStreamRps = m.field(ids.a2a('sdk', 'stream'), 'perSecond');
  const a2aSendRatio =
    m.field(ids.a2a('ref', 'send'), 'perSecond') / m.field(ids.a2a('sdk', 'send'), 'perSecond');
  const sseStreamRatio = m.field(ids.stream('sse', 3), 'perSecond') / sdkStreamRps;
  const measured = (x: number, ok: (x: number) => boolean) => (Number.isFinite(x) ? ok(x) : undefined);
  const targets = table(
    ['target (issue 15)', 'measured', ''],
    ['l', 'r', 'l'],
    [
      [
        'reference server echo, HTTP, memory store ≥ 0.5 × bare node:http',
        ratio(refRps / bareRps),
        verdict(measured(refRps / bareRps, (x) => x >= 0.5)),
      ],
      [
        'same with the SQLite store ≥ 0.8 × the memory store',
        ratio(sqliteRps / refRps),
        verdict(measured(sqliteRps / refRps, (x) => x >= 0.8)),
      ],
      [
        '64 KiB text part ≥ 0.3 × bare node:http on the same payload',
        ratio(payloadRatio),
        verdict(measured(payloadRatio, (x) => x >= 0.3)),
      ],
      [
        'cancel all at once: p99 to the caller ≤ 50 ms',
        m.has(ids.cancelFloor)
          ? `${ms(atOnceP99)} ms (bare node:http answering the same requests: ${ms(m.value(ids.cancelFloor, 'cancelP99Ms'))} ms)`
          : `${ms(atOnceP99)} ms`,
        verdict(measured(atOnceP99, (x) => x <= 50)),
      ],
      [
        'cancel one at a time: p99 to the caller ≤ 5 ms',
        `${ms(oneP99)} ms (a fresh server's first cancels: ${ms(m.value(ids.cancel('one-at-a-time'), 'coldCallerP99Ms'))} ms)`,
        verdict(measured(oneP99, (x) => x <= 5)),
      ],
      [
        'A2A SendMessage (blocking) ≥ 3 × @a2a-js/sdk 1.3',
        ratio(a2aSendRatio),
        verdict(measured(a2aSendRatio, (x) => x >= 3)),
      ],
      [
        'SSE `stream 3` ≥ 3 × @a2a-js/sdk 1.3 SendStreamingMessage',
        ratio(sseStreamRatio),
        verdict(measured(sseStreamRatio, (x) => x >= 3)),
      ],
    ],
  );

  const profileText = profile
    ? [
        table(
          ['function (self time)', 'share', 'ms'],
          ['l', 'r', 'r'],
          profile.functions.map((f) => [`\`${f.name}\``, pct(f.share), num(f.selfMs)]),
        ),
        '',
        table(
          ['package', 'share of self time'],
          ['l', 'r'],
          profile.owners.map((o) => [o.name, pct(o.share)]),
        ),
      ].join('\n')
    : 'not run';

  return { echo, a2a, streams, sweep, payload, cancel, replicas, idle, targets, profile: profileText };
}

export interface RunInfo {
  command: string;
  date: string;
  elapsedSeconds: number;
}

export function machineLine(): string {
  const cpus = os.cpus();
  const ram = (os.totalmem() / 1024 ** 3).toFixed(1);
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${ram} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}`;
}
