import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { cleanEnv, runCommand } from './run-command.js';

/** Runs a Node program in `cwd` (a fresh project) to completion and returns what it printed. */
export async function runProgram(cwd: string, file: string, args: readonly string[] = []): Promise<string> {
  const { stdout } = await runCommand(process.execPath, [file, ...args], { cwd });
  return stdout;
}

export interface RunningServer {
  /** The first group that `readyPattern` matched in the line the server printed when ready. */
  address: string;
  /** Closes the server's stdin, its signal to stop, and waits for it to exit. */
  stop(): Promise<number | null>;
}

/**
 * Starts a Node program that serves until its stdin closes and waits for the line that says it
 * is ready. A server that exits first rejects with everything it printed.
 */
export async function startServer(cwd: string, file: string, readyPattern: RegExp): Promise<RunningServer> {
  const child: ChildProcess = spawn(process.execPath, [file], {
    cwd,
    env: cleanEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let printed = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const lines = createInterface({ input: child.stdout! });
  const ready = new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      printed += `${line}\n`;
      const match = readyPattern.exec(line);
      if (match) resolve(match[1] ?? line);
    });
    void exited.then(([code]) =>
      reject(new Error(`${file} exited with ${code} before it was ready:\n${printed}`)),
    );
  });
  const address = await ready;
  return {
    address,
    async stop() {
      child.stdin?.end();
      const [code] = await exited;
      return code;
    },
  };
}
