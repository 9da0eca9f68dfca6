import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PROBE = path.resolve(__dirname, '../dist/heap-probe.js');

interface ProbeResult {
  tasks: number;
  base_tasks: number;
  heap_at_base: number;
  heap_at_end: number;
  ratio: number;
}

describe('heap under many finished tasks', () => {
  // The full-size run (200,000 tasks against 10,000) is `pnpm heap-probe` in this app; CI runs three
  // times the base count, enough for anything kept per task to show.
  it('stays within 10 % of its level once the task store is full', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', PROBE, '--tasks', '30000', '--base', '10000', '--max-tasks', '10000'],
      { timeout: 120_000 },
    );
    const result = JSON.parse(stdout) as ProbeResult;
    process.stdout.write(
      `heap after ${result.base_tasks} tasks: ${result.heap_at_base} B; after ${result.tasks}: ${result.heap_at_end} B (×${result.ratio})\n`,
    );
    expect(result.heap_at_end).toBeLessThanOrEqual(result.heap_at_base * 1.1);
  }, 150_000);
});
