import { CLIENT_OPERATIONS, createTask, isFinalEvent, type Task, type TaskEvent } from '@agent/core';
import net from 'node:net';
import { SSETransport } from './sse-transport.js';
import { startHarness, type Harness } from './test-support/harness.js';

/** A TCP relay in front of the server that counts the connections clients open through it. */
async function countingRelay(
  target: URL,
): Promise<{ url: string; accepted: () => number; close: () => Promise<void> }> {
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    accepted += 1;
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    accepted: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    },
  };
}

describe('SSE client connection reuse', () => {
  let h: Harness;
  let relay: Awaited<ReturnType<typeof countingRelay>>;
  let client: SSETransport;
  beforeAll(async () => {
    h = await startHarness();
    relay = await countingRelay(new URL(h.url));
  });
  beforeEach(() => {
    client = new SSETransport({ url: relay.url });
  });
  afterEach(() => client.stop());
  afterAll(async () => {
    await relay.close();
    await h.stop();
  });

  it('reuses keep-alive connections for streams one after another, also when the reader stops at the final event', async () => {
    const before = relay.accepted();
    for (let i = 0; i < 6; i++) {
      const seen: TaskEvent[] = [];
      for await (const event of client.subscribe(relay.url, createTask('stream 3'), {})) seen.push(event);
      expect(seen.filter((event) => event.type === 'task.artifact')).toHaveLength(3);
      expect(seen.filter(isFinalEvent)).toHaveLength(1);
    }
    // A reader that breaks out at the final event, as most do.
    for (let i = 0; i < 6; i++) {
      for await (const event of client.subscribe(relay.url, createTask('stream 2'), {}))
        if (isFinalEvent(event)) break;
    }
    const echoed = await client.send<Task>(CLIENT_OPERATIONS.send_task, relay.url, createTask('echo after'));
    expect(echoed.state).toBe('completed');
    // A connection per stream before; now the stream's end drains and its socket goes back to the
    // pool (a call that comes before the end has arrived may still open a second one).
    expect(relay.accepted() - before).toBeLessThanOrEqual(3);
  });

  it('tears down the connection of a stream left before its final event', async () => {
    const before = relay.accepted();
    for await (const event of client.subscribe(relay.url, createTask('stream 50'), {})) {
      expect(event.type).toBe('task.artifact');
      break;
    }
    const echoed = await client.send<Task>(
      CLIENT_OPERATIONS.send_task,
      relay.url,
      createTask('echo still fine'),
    );
    expect(echoed.state).toBe('completed');
    expect(relay.accepted() - before).toBe(2);
  });
});
