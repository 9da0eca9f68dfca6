import { readFileSync } from 'node:fs';
import { rootToolBin } from './root-tool.js';
import { CommandFailedError, runCommand } from './run-command.js';

/**
 * publint is ESM-only, so it runs in a child Node (its cwd is this package, from where `publint`
 * resolves to the root devDependency); the script prints the formatted messages as JSON.
 */
const PUBLINT_SCRIPT = `
const { readFileSync } = await import('node:fs');
const { publint } = await import('publint');
const { formatMessage } = await import('publint/utils');
const bytes = readFileSync(process.argv[1]);
const tarball = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const { messages, pkg } = await publint({ pack: { tarball }, strict: true, level: 'suggestion' });
console.log(JSON.stringify(messages.map((m) => m.type + ': ' + formatMessage(m, pkg, { color: false }))));
`;

/**
 * Every publint message for a packed tarball, suggestions included (each one is cheap to fix,
 * and a clean list keeps a new one visible).
 */
export async function publintMessages(tarball: string): Promise<string[]> {
  readFileSync(tarball); // a missing tarball fails here, by name, not inside the child
  const { stdout } = await runCommand(
    process.execPath,
    ['--input-type=module', '-e', PUBLINT_SCRIPT, tarball],
    {
      cwd: __dirname,
    },
  );
  return JSON.parse(stdout) as string[];
}

export interface AttwResult {
  ok: boolean;
  /** attw's own report: the problems and a resolution table per entry point. */
  report: string;
}

/**
 * `@arethetypeswrong/cli` on a packed tarball under its strictest profile, which checks every
 * resolution mode, node10 included. Its exit code is the verdict: its JSON output can be cut off
 * at 64 KiB when it exits into a pipe. `--no-definitely-typed` keeps it offline.
 */
export async function attwCheck(tarball: string): Promise<AttwResult> {
  const bin = rootToolBin('@arethetypeswrong/cli', 'attw');
  const args = [
    bin,
    tarball,
    '--profile',
    'strict',
    '--no-definitely-typed',
    '--format',
    'ascii',
    '--no-color',
  ];
  try {
    const { stdout } = await runCommand(process.execPath, args, { cwd: __dirname });
    return { ok: true, report: stdout };
  } catch (error) {
    if (error instanceof CommandFailedError && error.exitCode === 1)
      return { ok: false, report: error.output.stdout };
    throw error;
  }
}
