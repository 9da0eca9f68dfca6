/**
 * The reference server process (`pnpm start` builds and runs it). Prints one JSON line
 * `{"event":"listening",...}` once every transport serves; SIGTERM and SIGINT (Ctrl-C) stop it
 * gracefully and it exits 0.
 */
import { loadConfig } from './config.js';
import { startReferenceServer } from './server.js';

function log(record: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

function fail(error: unknown): never {
  const err = error as Error & { code?: string };
  process.stderr.write(
    `${JSON.stringify({ event: 'error', code: err.code ?? 'INTERNAL', message: err.message })}\n`,
  );
  process.exit(1);
}

// The handlers go in before anything listens: whoever reads the listening line may signal at once,
// and a signal during start-up must stop the server once it is up rather than kill the process.
const stopRequested = new Promise<NodeJS.Signals>((resolve) => {
  process.once('SIGTERM', () => resolve('SIGTERM'));
  process.once('SIGINT', () => resolve('SIGINT'));
});
// Ctrl-C reaches the process from the terminal and again from the `pnpm start` wrapper: one stop.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

async function main(): Promise<void> {
  const config = loadConfig();
  const server = await startReferenceServer(config, {
    onInterrupted: (count) => log({ event: 'tasks_interrupted', count, code: 'PROCESS_RESTARTED' }),
    onLostReplica: (lost) =>
      log({ event: 'replica_lost', replica_id: lost.replica_id, tasks: lost.tasks.length }),
  });
  log({ event: 'listening', ...server.urls, auth: config.auth.mode, backend: config.httpBackend });
  // A replica whose lease ran out has had its tasks finished by the others: it stops and exits 1,
  // so whatever supervises it starts a fresh one.
  const reason = await Promise.race([stopRequested, server.lost.then(() => 'lease lost' as const)]);
  log({ event: 'stopping', ...(reason === 'lease lost' ? { reason } : { signal: reason }) });
  await server.stop();
  log({ event: 'stopped' });
  process.exit(reason === 'lease lost' ? 1 : 0);
}

main().catch(fail);
