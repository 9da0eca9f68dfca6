import { spawn } from 'node:child_process';

export interface CommandResult {
  stdout: string;
  stderr: string;
}

export class CommandFailedError extends Error {
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly output: CommandResult,
  ) {
    super(`${command} exited with ${exitCode}\n--- stdout\n${output.stdout}\n--- stderr\n${output.stderr}`);
    this.name = 'CommandFailedError';
  }
}

/**
 * The environment for a package manager run in a fresh project. `pnpm test` runs jest through
 * pnpm, which exports the workspace's settings as `npm_*` variables; a child npm or pnpm would
 * read them as its own configuration, so they go, except the one that points node-gyp at the
 * local Node headers.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && key.toLowerCase() !== 'npm_config_nodedir') continue;
    if (key === 'PNPM_SCRIPT_SRC_DIR' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command to completion; rejects with everything it printed when it exits non-zero. */
export function runCommand(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const output = { stdout, stderr };
      if (code === 0) resolve(output);
      else reject(new CommandFailedError([file, ...args].join(' '), code, output));
    });
  });
}
