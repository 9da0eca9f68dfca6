/**
 * Starts a built server program (the reference server's `dist/main.js`) as a real child process and
 * reads its JSON `listening` line, so tests talk to it exactly as a user's clients would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface ListeningLine {
  http: string;
  sse: string;
  ws: string;
  grpc: string;
}

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly urls: ListeningLine;
  /** Resolves with the exit code (null when killed by a signal) once the process is gone. */
  readonly exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM by default) unless the process is gone, and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  stderr(): string;
}

/** How long a server may take to print its listening line before the start counts as failed. */
const START_TIMEOUT_MS = 15_000;

/**
 * Every transport on a free port (the listening line says which); `env` adds to PATH alone, so the
 * test's own environment (an AGENT_* of the developer's) cannot leak in.
 */
export async function startServerProcess(
  main: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [main], {
    env: {
      PATH: process.env.PATH ?? '',
      HTTP_PORT: '0',
      SSE_PORT: '0',
      WS_PORT: '0',
      GRPC_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = (once(child, 'exit') as Promise<[number | null]>).then(([code]) => code);
  const lines = createInterface({ input: child.stdout! });
  const listening = new Promise<ListeningLine>((resolve) => {
    lines.on('line', (line) => {
      let record: { event?: string } & ListeningLine;
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        return; // not one of the server's JSON lines
      }
      if (record.event === 'listening')
        resolve({ http: record.http, sse: record.sse, ws: record.ws, grpc: record.grpc });
    });
  });
  let timer: NodeJS.Timeout | undefined;
  const tooSlow = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the server did not start: ${stderr}`)), START_TIMEOUT_MS);
  });
  const stop = (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  let urls: ListeningLine;
  try {
    urls = await Promise.race([
      listening,
      tooSlow,
      exited.then((code) => {
        throw new Error(`the server exited with ${String(code)} before listening: ${stderr}`);
      }),
    ]);
  } catch (error) {
    await stop('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return { child, urls, exited, stop, stderr: () => stderr };
}
