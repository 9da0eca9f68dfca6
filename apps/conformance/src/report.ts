import type { CaseResult } from './runner.js';

export function progressLine(result: CaseResult): string {
  const mark = result.status === 'passed' ? 'PASS' : result.status === 'failed' ? 'FAIL' : 'SKIP';
  const line = `${mark} [${result.transport}] ${result.id} (${result.durationMs} ms)`;
  return result.error ? `${line}\n     ${result.error.split('\n').join('\n     ')}` : line;
}

export function resultTable(results: readonly CaseResult[]): string {
  const idWidth = Math.max(4, ...results.map((r) => r.id.length));
  const rows = results.map(
    (r) =>
      `| ${r.transport.padEnd(9)} | ${r.id.padEnd(idWidth)} | ${r.status.padEnd(7)} | ${String(r.durationMs).padStart(6)} |`,
  );
  const header = `| ${'transport'.padEnd(9)} | ${'case'.padEnd(idWidth)} | ${'result'.padEnd(7)} | ${'ms'.padStart(6)} |`;
  const rule = `|${'-'.repeat(11)}|${'-'.repeat(idWidth + 2)}|${'-'.repeat(9)}|${'-'.repeat(8)}|`;
  return [header, rule, ...rows].join('\n');
}

function xml(text: string): string {
  return text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!,
  );
}

/** JUnit XML: one testsuite per transport. */
export function junitXml(results: readonly CaseResult[]): string {
  const byTransport = new Map<string, CaseResult[]>();
  for (const r of results) byTransport.set(r.transport, [...(byTransport.get(r.transport) ?? []), r]);
  const suites = [...byTransport].map(([transport, rs]) => {
    const failures = rs.filter((r) => r.status === 'failed').length;
    const time = rs.reduce((sum, r) => sum + r.durationMs, 0) / 1000;
    const cases = rs.map((r) => {
      const open = `    <testcase classname="conformance.${xml(transport)}" name="${xml(r.id)}: ${xml(r.title)}" time="${r.durationMs / 1000}"`;
      if (r.status === 'failed')
        return `${open}>\n      <failure message="${xml(r.error ?? 'failed')}"/>\n    </testcase>`;
      if (r.status === 'skipped') return `${open}>\n      <skipped/>\n    </testcase>`;
      return `${open}/>`;
    });
    return `  <testsuite name="conformance.${xml(transport)}" tests="${rs.length}" failures="${failures}" time="${time}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${suites.join('\n')}\n</testsuites>\n`;
}
