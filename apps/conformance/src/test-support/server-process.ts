/** Starts the built reference server as a real child process and reads its listening line. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface ServerProcess {
  urls: { http: string; sse: string; ws: string; grpc: string };
  child: ChildProcess;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
  stderr(): string;
}

export const MAIN = path.resolve(__dirname, '../../../reference-server/dist/main.js');

export async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [MAIN], {
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
  const lines = createInterface({ input: child.stdout! });
  const listening = await new Promise<ServerProcess['urls']>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${stderr}`));
    });
    lines.on('line', (line) => {
      try {
        const record = JSON.parse(line) as { event?: string } & ServerProcess['urls'];
        if (record.event === 'listening') {
          clearTimeout(timer);
          resolve({ http: record.http, sse: record.sse, ws: record.ws, grpc: record.grpc });
        }
      } catch {
        // not a JSON line: ignore
      }
    });
  });
  child.removeAllListeners('exit');
  let exited: Promise<number | null> | undefined;
  return {
    urls: listening,
    child,
    stderr: () => stderr,
    stop() {
      exited ??= (async () => {
        if (child.exitCode !== null) return child.exitCode;
        const done = once(child, 'exit') as Promise<[number | null]>;
        child.kill('SIGTERM');
        const [code] = await done;
        lines.close();
        return code;
      })();
      return exited;
    },
  };
}
