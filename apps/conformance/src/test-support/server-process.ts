/** The built reference server as a real child process: the shared starter, pointed at its dist. */
import path from 'node:path';
import { startServerProcess as startProcess, type ServerProcess } from '@agent/test-support';

export type { ServerProcess } from '@agent/test-support';

const MAIN = path.resolve(__dirname, '../../../reference-server/dist/main.js');

export function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  return startProcess(MAIN, env);
}
