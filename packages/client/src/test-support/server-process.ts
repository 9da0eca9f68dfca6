import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface ServerProcess {
  url: string;
  stop(): Promise<void>;
}

/** Starts test-support/echo-server.cjs in a child process and waits for its listening line. */
export async function startEchoServer(env: Record<string, string> = {}): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, 'echo-server.cjs')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`echo server exited with code ${String(code)}`);
    }),
  ])) as [string];
  lines.close();
  const { url } = JSON.parse(line) as { url: string };
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill();
      await exited;
    },
  };
}
