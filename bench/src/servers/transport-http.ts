/**
 * `HTTPTransport` (node backend) serving a plain function handler that does the same echo work as
 * the bare server: the transport and its server pipeline without the `Agent` runtime.
 */
import type { Task } from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';
import { announce, echoReply } from './echo-work.js';

async function main(): Promise<void> {
  const transport = new HTTPTransport({ url: 'http://127.0.0.1:0', stopGraceMs: 0 });
  transport.onTaskReceived(async (task: Task) => echoReply(task));
  await transport.start();
  announce({ http: transport.url });
  process.once('SIGTERM', () => {
    void transport.stop().then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
