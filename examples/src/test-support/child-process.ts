import { execFile } from 'node:child_process';
import { join } from 'node:path';

export interface Outcome {
  code: number | null;
  /** stdout, then stderr. */
  output: string;
}

/** Runs a built JavaScript file with node from this package's folder, as a user would. */
export function runNode(file: string, env: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [file],
      { cwd: join(__dirname, '..', '..'), timeout: 30_000, env: { ...process.env, ...env } },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, output: `${stdout}\n${stderr}` }),
    );
  });
}

/** Throws unless the run exited 0 and printed each expected text, in this order, on lines of its own. */
export function expectSuccess(what: string, { code, output }: Outcome, expected: readonly string[]): void {
  if (code !== 0) throw new Error(`${what} exited with ${code}:\n${output}`);
  const lines = output.split('\n');
  let from = 0;
  for (const text of expected) {
    const at = lines.findIndex((line, index) => index >= from && line.includes(text));
    if (at === -1) throw new Error(`${what} did not print "${text}" (in order); it printed:\n${output}`);
    from = at + 1;
  }
}
