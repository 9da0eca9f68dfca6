/**
 * The floor: a bare `node:http` JSON echo (read the body, parse, do the echo work, stringify,
 * write), run as its own process like every server under test. Port 0: the OS picks a free one.
 * `POST /tasks/cancel` answers `{ id, state: "canceled" }` at once: the HTTP floor of the cancel
 * subjects (there is no task behind it).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, echoReply, type EchoTask } from './echo-work.js';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let body: string;
    try {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      body = JSON.stringify(
        req.url === '/tasks/cancel'
          ? { id: (parsed as { task_id?: unknown }).task_id, state: 'canceled' }
          : echoReply(parsed as EchoTask),
      );
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});

server.listen(0, '127.0.0.1', () => {
  announce({ http: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});

process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
