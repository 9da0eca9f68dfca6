/** This app's built server (`dist/main.js`) as a real child process: the shared starter, pointed here. */
import path from 'node:path';
import { startServerProcess as startProcess, type ServerProcess } from '@agent/test-support';

export type { ServerProcess } from '@agent/test-support';

const MAIN = path.resolve(__dirname, '../../dist/main.js');

export function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  return startProcess(MAIN, env);
}
