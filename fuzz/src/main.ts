/**
 * `pnpm fuzz [-- flags]`: runs the harness against the built reference server, prints the summary
 * and writes the JSON report; exits 1 when an enforced oracle failed, 2 on a usage error.
 */
import { parseArgs, USAGE } from './options.js';
import { runFuzz } from './run.js';

async function main(): Promise<void> {
  let options;
  try {
    options = parseArgs(process.argv.slice(2), (line) => process.stderr.write(`${line}\n`));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const report = await runFuzz(options);
  process.stdout.write(report.summaryText);
  process.exit(report.failed ? 1 : 0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
