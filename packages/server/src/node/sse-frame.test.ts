import { createServer, request, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { RequestScope } from '../request-scope.js';
import { corkForTurn, drained, writeFrame } from './sse-frame.js';

/** Counts the socket writes a response makes: what reaches the kernel, one system call each. */
function countWrites(res: ServerResponse): { calls: number } {
  const socket = res.socket as Socket & {
    _write: (...args: unknown[]) => void;
    _writev?: (...args: unknown[]) => void;
  };
  const count = { calls: 0 };
  const write = socket._write;
  socket._write = function (this: Socket, ...args: unknown[]) {
    count.calls += 1;
    return write.apply(this, args);
  };
  const writev = socket._writev;
  if (writev)
    socket._writev = function (this: Socket, ...args: unknown[]) {
      count.calls += 1;
      return writev.apply(this, args);
    };
  return count;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function serve(
  handler: (res: ServerResponse) => Promise<{ calls: number }>,
): Promise<{ body: string; calls: number }> {
  let counted: Promise<{ calls: number }> | undefined;
  const server = createServer((_req, res) => {
    counted = handler(res);
    // A failed expectation in the handler still ends the response, so the test fails instead of hanging.
    counted.catch(() => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const body = await new Promise<string>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/' }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve(text));
      })
        .on('error', reject)
        .end();
    });
    return { body, calls: (await counted!).calls };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * Frames 1–3 in one turn, frame 4 in the next: the socket writes counted after each of the two
 * turns. `between` runs after the first frame (a microtask, as an async writer loop awaits).
 */
async function writeTwoTurns(
  res: ServerResponse,
  count: { calls: number },
  between?: () => Promise<void>,
): Promise<number[]> {
  writeFrame(res, 'data: 1\n\n');
  if (between) await between();
  writeFrame(res, 'data: 2\n\n');
  writeFrame(res, 'data: 3\n\n');
  await nextTurn();
  const firstTurn = count.calls;
  writeFrame(res, 'data: 4\n\n');
  await nextTurn();
  return [firstTurn, count.calls];
}

describe('writeFrame / corkForTurn', () => {
  it('sends the head and the frames of one turn in one socket write, a later frame in its own', async () => {
    const { body, calls } = await serve(async (res) => {
      const count = countWrites(res);
      corkForTurn(res);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      expect(await writeTwoTurns(res, count)).toEqual([1, 2]);
      res.end();
      await nextTurn();
      return count;
    });
    expect(body).toBe('data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n');
    expect(calls).toBe(3);
  });

  it("frames of one turn after the head leave in one socket write without it: node's own cork", async () => {
    const { body, calls } = await serve(async (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      await nextTurn();
      const count = countWrites(res);
      expect(await writeTwoTurns(res, count, () => Promise.resolve())).toEqual([1, 2]);
      res.end();
      await nextTurn();
      return count;
    });
    expect(body).toBe('data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n');
    expect(calls).toBe(3);
  });

  it('without it, the head flushed is a socket write of its own', async () => {
    const { calls } = await serve(async (res) => {
      const count = countWrites(res);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      res.write('data: 1\n\n');
      res.write('data: 2\n\n');
      await nextTurn();
      res.end();
      await nextTurn();
      return count;
    });
    expect(calls).toBeGreaterThanOrEqual(3);
  });
});

describe('drained', () => {
  /** A response whose caller stopped reading, written far past what the sockets' buffers hold. */
  async function stalledResponse(): Promise<{ res: ServerResponse; close(): Promise<void> }> {
    let handed!: (res: ServerResponse) => void;
    const responded = new Promise<ServerResponse>((resolve) => (handed = resolve));
    const server = createServer((_req, res) => handed(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.pause();
    const res = await responded;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = 'x'.repeat(64 * 1024);
    for (let written = 0; written < 32 * 1024 * 1024; written += chunk.length) writeFrame(res, chunk);
    return {
      res,
      close: async () => {
        socket.destroy();
        res.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  it('waits for the reader, and ends its wait when the request scope is aborted', async () => {
    const { res, close } = await stalledResponse();
    try {
      const scope = new RequestScope();
      let done = false;
      const waiting = drained(res, scope).then(() => (done = true));
      await nextTurn();
      await nextTurn();
      expect(done).toBe(false);
      scope.abort('given up');
      await waiting;
      expect(done).toBe(true);
      // An aborted scope does not wait at all; the wait left no listener behind.
      await drained(res, scope);
    } finally {
      await close();
    }
  });

  it('without a scope, ends when the response is gone', async () => {
    const { res, close } = await stalledResponse();
    const waiting = drained(res);
    await close();
    await waiting;
  });
});
