import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface ServerProcess {
  url: string;
  stop(): Promise<void>;
}

/** Starts test-support/echo-server.cjs in a child process and waits for its listening line. */
export function startEchoServer(env: Record<string, string> = {}): Promise<ServerProcess> {
  return startServerProcess('echo-server.cjs', env);
}

/** Starts a server script of test-support in a child process and waits for its `{"url"}` line. */
export async function startServerProcess(
  file: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, file)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`${file} exited with code ${String(code)}`);
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
