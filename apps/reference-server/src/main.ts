#!/usr/bin/env node
/**
 * `pnpm start`: serves the demo agent over HTTP, SSE, WebSocket and gRPC. Prints one JSON line
 * `{"event":"listening",...}` once every transport serves; SIGTERM/SIGINT stop gracefully (exit 0).
 */
import { loadConfig } from './config.js';
import { startReferenceServer } from './server.js';

function log(record: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

async function main(): Promise<void> {
  const config = loadConfig();
  const server = await startReferenceServer(config);
  log({ event: 'listening', ...server.urls, auth: config.auth.mode, backend: config.httpBackend });
  let signaled = false;
  const shutdown = (signal: string) => {
    if (signaled) return;
    signaled = true;
    log({ event: 'stopping', signal });
    server.stop().then(
      () => {
        log({ event: 'stopped' });
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`${JSON.stringify({ event: 'error', message: (error as Error).message })}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  const err = error as Error & { code?: string };
  process.stderr.write(
    `${JSON.stringify({ event: 'error', code: err.code ?? 'INTERNAL', message: err.message })}\n`,
  );
  process.exit(1);
});
