/** The human summary printed at the end of a run. */
import type { FuzzReport } from './run.js';

const mb = (kib: number | undefined): string => (kib === undefined ? '—' : `${(kib / 1024).toFixed(1)} MB`);

export function summaryText(r: FuzzReport): string {
  const out: string[] = [];
  out.push('');
  out.push(`== fuzz ${r.smoke ? 'smoke ' : ''}run, seed ${r.seed}, ${r.durationSeconds.toFixed(1)} s ==`);
  out.push(
    `server: commit ${r.server.commit}${r.server.uncommittedFiles > 0 ? ` + ${r.server.uncommittedFiles} uncommitted files under packages/ and apps/` : ''}, dist built ${r.server.builtAt}`,
  );
  if (r.malformed.length > 0) {
    out.push('', 'malformed input:');
    for (const m of r.malformed) {
      const top = Object.entries(m.outcomes)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([k, v]) => `${k} ×${v}`)
        .join(', ');
      out.push(
        `  ${m.target.padEnd(12)} ${String(m.cases).padStart(7)} cases in ${m.seconds.toFixed(1).padStart(5)} s (${(m.cases / Math.max(m.seconds, 0.001)).toFixed(0)}/s), restarts ${m.restarts}: ${top}`,
      );
    }
  }
  for (const s of r.slow) {
    out.push(
      '',
      `slow consumers (${s.targets.join(', ')}, ${s.store} store): ${s.consumers} non-readers for ${s.seconds} s`,
    );
    out.push(
      `  RSS start ${mb(s.rssStartKiB)}, peak ${mb(s.rssPeakKiB)}, ${s.rssAfter10sKiB === undefined ? '' : `10 s after they left ${mb(s.rssAfter10sKiB)}, `}${s.settleSeconds} s after ${mb(s.rssAfterKiB)} (${s.rssAfterRatio.toFixed(2)}× start: ${s.rssRecovered ? 'within' : 'NOT within'} 10 %)`,
    );
    out.push(
      `  healthy echo latency: before p50 ${s.echoBefore.p50} ms / p99 ${s.echoBefore.p99} ms; during p50 ${s.echoDuring.p50} ms / p99 ${s.echoDuring.p99} ms / max ${s.echoDuring.max} ms, ${s.echoDuring.failures} failures of ${s.echoDuring.count} (${s.echoDuring.overloaded ?? 0} of them refused as overloaded, 503)`,
    );
    out.push(
      `  /healthz during: p50 ${s.healthzDuring.p50} ms / p99 ${s.healthzDuring.p99} ms / max ${s.healthzDuring.max} ms, ${s.healthzDuring.failures} failures of ${s.healthzDuring.count}`,
    );
    out.push(`  consumers opened: ${JSON.stringify(s.opened)}; server alive: ${s.alive}`);
  }
  for (const s of r.slowloris) {
    out.push('', `slowloris (${s.connectionsPerKind} connections per kind, watched ${s.seconds} s):`);
    for (const k of s.kinds) {
      out.push(
        `  ${k.kind.padEnd(26)} closed by the server ${String(k.closed).padStart(3)}/${k.connections}` +
          (k.closed > 0 ? ` after ${k.closeMs.min}–${k.closeMs.max} ms (median ${k.closeMs.p50} ms)` : '') +
          `, still open at the end ${k.open}`,
      );
    }
    out.push(
      `  healthy echo during: p50 ${s.echo.p50} ms, max ${s.echo.max} ms, ${s.echo.failures} failures; server alive: ${s.alive}`,
    );
  }
  for (const k of r.kill9) {
    out.push(
      '',
      `kill -9 round ${k.round}: ${k.sent} sent, ${k.acknowledged} acknowledged completed, killed after ${k.killAfterMs} ms; after restart: ${k.intact} intact, ${k.missing} missing, ${k.changed} changed; unacknowledged: ${JSON.stringify(k.unacknowledgedStates)}; non-terminal listed: ${k.nonTerminal}`,
    );
  }
  out.push('', 'findings (oracle / target / kind: count, example):');
  if (r.findings.length === 0) out.push('  none');
  for (const g of r.findings) {
    const ex = g.examples[0];
    const where =
      ex?.caseIndex !== undefined
        ? ` — case ${ex.caseIndex}: ${(ex.label ?? '').slice(0, 140)}`
        : ex?.detail
          ? ` — ${ex.detail.slice(0, 140)}`
          : '';
    const mark = r.enforcement[g.oracle]?.failsRun
      ? r.enforcement[g.oracle]?.failsCi
        ? '[CI]'
        : '[run]'
      : '[report]';
    out.push(`  ${mark.padEnd(8)} ${g.oracle} / ${g.target} / ${g.kind}: ${g.count}${where}`);
  }
  out.push(
    '',
    `result: ${r.failed ? 'FAILED' : 'passed'} (CI oracles crash+hang: ${r.ciFailed ? 'FAILED' : 'passed'})`,
  );
  out.push(`report: ${r.reportPath}`);
  out.push(`replay: ${r.replay}   (one case: --seed ${r.seed} --transport <t> --case <n>)`);
  out.push('');
  return out.join('\n');
}
