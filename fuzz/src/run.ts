/**
 * One harness run: the modes asked for, in order (malformed input per transport, slow and
 * non-reading consumers, slowloris, kill -9 with the SQLite store), then the report.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runKill9, type Kill9Summary } from './modes/kill9.js';
import { runMalformed, type MalformedSummary } from './modes/malformed.js';
import { runSlowClients, type SlowSummary } from './modes/slow-clients.js';
import { runSlowloris, type SlowlorisSummary } from './modes/slowloris.js';
import { CI_FAILS_ON, FindingLog, ORACLES, RUN_FAILS_ON, type FindingGroup } from './oracle.js';
import type { FuzzOptions, Target } from './options.js';
import { serverMain } from './server.js';
import { summaryText } from './summary.js';

export interface FuzzReport {
  seed: number;
  smoke: boolean;
  startedAt: string;
  durationSeconds: number;
  /** The command that replays this run. */
  replay: string;
  settings: Record<string, unknown>;
  /** Which server was tested: the commit, uncommitted changes under packages/ and apps/, the build's time. */
  server: { commit: string; uncommittedFiles: number; builtAt: string };
  malformed: MalformedSummary[];
  slow: SlowSummary[];
  slowloris: SlowlorisSummary[];
  kill9: Kill9Summary[];
  findings: FindingGroup[];
  /** Oracle → whether it fails the run, and whether it fails the CI smoke test. */
  enforcement: Record<string, { description: string; failsRun: boolean; failsCi: boolean }>;
  /** An oracle that fails the run failed. */
  failed: boolean;
  /** An oracle the CI smoke test enforces (crash, hang) failed. */
  ciFailed: boolean;
  reportPath: string;
  summaryText: string;
}

const STREAMING: readonly Target[] = ['http-node', 'sse', 'ws', 'grpc'];

export function replayCommand(options: FuzzOptions): string {
  const flags = [`--seed ${options.seed}`];
  if (options.smoke) flags.unshift('--smoke');
  return `pnpm fuzz -- ${flags.join(' ')}`;
}

function serverBuild(): FuzzReport['server'] {
  const root = path.resolve(__dirname, '..', '..');
  const git = (args: string[]): string => {
    try {
      return execFileSync('git', args, {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return '';
    }
  };
  // The newest build among the server's entry and the workspace packages' outputs.
  const entries = [serverMain()];
  try {
    const packages = path.join(root, 'packages');
    for (const name of readdirSync(packages)) entries.push(path.join(packages, name, 'dist', 'index.js'));
  } catch {
    // no packages folder: the entry alone
  }
  let newest = 0;
  for (const file of entries) {
    try {
      newest = Math.max(newest, statSync(file).mtimeMs);
    } catch {
      // not built
    }
  }
  const builtAt = newest === 0 ? 'not built' : new Date(newest).toISOString();
  const status = git(['status', '--porcelain', '--', 'packages', 'apps']);
  return {
    commit: git(['rev-parse', '--short', 'HEAD']) || 'unknown',
    uncommittedFiles: status === '' ? 0 : status.split('\n').length,
    builtAt,
  };
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const findings = new FindingLog();
  const log = options.log;
  log(
    `fuzz: seed ${options.seed} (${options.smoke ? 'smoke' : 'full'} run; replay: ${replayCommand(options)})`,
  );
  const malformed: MalformedSummary[] = [];
  const slow: SlowSummary[] = [];
  const slowloris: SlowlorisSummary[] = [];
  const kill9: Kill9Summary[] = [];

  if (options.modes.includes('malformed')) {
    for (const target of options.transports) {
      log(`malformed: ${target} (up to ${options.count} cases or ${options.seconds} s)…`);
      const summary = await runMalformed(target, options, findings);
      malformed.push(summary);
      log(`  ${summary.cases} cases in ${summary.seconds.toFixed(1)} s, ${summary.restarts} restarts`);
    }
  }
  const streaming = options.transports.filter((t) => STREAMING.includes(t));
  if (options.modes.includes('slow') && streaming.length > 0) {
    const windows = options.slowTogether ? [streaming] : streaming.map((t) => [t]);
    for (const targets of windows) {
      log(
        `slow consumers: ${options.nonReaders} non-readers on ${targets.join(', ')} for ${options.slowSeconds} s…`,
      );
      slow.push(await runSlowClients(targets, options, findings));
    }
  }
  if (options.modes.includes('slowloris') && options.slowloris > 0) {
    log(`slowloris: ${options.slowloris} connections per kind for ${options.slowlorisSeconds} s…`);
    slowloris.push(await runSlowloris(options, findings));
  }
  if (options.modes.includes('kill9') && options.killRounds > 0) {
    log(`kill -9: ${options.killRounds} round(s) with the SQLite store…`);
    kill9.push(...(await runKill9(options, findings)));
  }

  const groups = findings.list();
  const enforcement = Object.fromEntries(
    Object.entries(ORACLES).map(([name, { description }]) => [
      name,
      { description, failsRun: RUN_FAILS_ON.has(name as never), failsCi: CI_FAILS_ON.has(name as never) },
    ]),
  );
  const reportPath =
    options.reportPath ??
    path.join(tmpdir(), 'agent-fuzz', `fuzz-${options.smoke ? 'smoke-' : ''}${options.seed}.json`);
  const report: FuzzReport = {
    seed: options.seed,
    smoke: options.smoke,
    startedAt: new Date(started).toISOString(),
    durationSeconds: (Date.now() - started) / 1000,
    replay: replayCommand(options),
    settings: {
      count: options.count,
      seconds: options.seconds,
      transports: options.transports,
      modes: options.modes,
      concurrency: options.concurrency,
      hangMs: options.hangMs,
      nonReaders: options.nonReaders,
      slowSeconds: options.slowSeconds,
      slowloris: options.slowloris,
      slowlorisSeconds: options.slowlorisSeconds,
      killRounds: options.killRounds,
      caseIndex: options.caseIndex,
    },
    server: serverBuild(),
    malformed,
    slow,
    slowloris,
    kill9,
    findings: groups,
    enforcement,
    failed: findings.count(RUN_FAILS_ON) > 0,
    ciFailed: findings.count(CI_FAILS_ON) > 0,
    reportPath,
    summaryText: '',
  };
  report.summaryText = summaryText(report);
  mkdirSync(path.dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, `${JSON.stringify({ ...report, summaryText: undefined }, null, 2)}\n`);
  return report;
}
