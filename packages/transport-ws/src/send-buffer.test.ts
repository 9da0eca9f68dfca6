/**
 * A peer that floods bad frames and never reads must not make the server buffer every error reply:
 * the server stops reading that socket while its send buffer is over `maxBufferedBytes`.
 */
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { ServerPipeline, silentLogger } from '@agent/server';
import { SocketSession } from './server-adapter-socket.js';
import { closeAll, createDemoHandler, rawSocket, until } from './test-support/harness.js';

const LIMIT = 64 * 1024;
const ID = 'i'.repeat(8 * 1024);
// Every one of these gets an INVALID_REQUEST reply that echoes the 8 KiB id.
const BAD_FRAME = JSON.stringify({ op: `nope${'x'.repeat(200)}`, id: ID });
// Generous room for the error envelope around the echoed id and the capped op text.
const MAX_REPLY_BYTES = ID.length + 1024;

let wss: WebSocketServer | undefined;

afterEach(async () => {
  await closeAll();
  for (const socket of wss?.clients ?? []) socket.terminate();
  await new Promise<void>((resolve) => (wss ? wss.close(() => resolve()) : resolve()));
  wss = undefined;
});

async function serveOne(): Promise<{ url: string; accepted: Promise<WebSocket> }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  wss = server;
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const pipeline = new ServerPipeline({
    transport: 'ws',
    handler: createDemoHandler(),
    logger: silentLogger,
  });
  pipeline.markReady();
  const handshake = await pipeline.open({ headers: {}, signal: new AbortController().signal });
  const accepted = new Promise<WebSocket>((resolve) =>
    server.once('connection', (socket) => {
      new SocketSession({
        socket,
        kind: 'data',
        pipeline,
        handshake,
        maxBufferedBytes: LIMIT,
        maxInFlight: 4,
        pingIntervalMs: 0,
      });
      resolve(socket);
    }),
  );
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, accepted };
}

describe('a peer that sends bad frames and never reads', () => {
  it('stops being read once the send buffer is full, and still gets every reply', async () => {
    const { url, accepted } = await serveOne();
    const peer = await rawSocket(url);
    const serverSocket = await accepted;
    let maxBuffered = 0;
    serverSocket.on('message', () => (maxBuffered = Math.max(maxBuffered, serverSocket.bufferedAmount)));
    peer.socket.pause();

    // Keep flooding until the server either stopped reading or let its buffer run far past the limit.
    const stalled = (): boolean => serverSocket.isPaused || serverSocket.bufferedAmount > 4 * LIMIT;
    let sent = 0;
    while (!stalled() && sent < 20_000) {
      for (let i = 0; i < 50; i++) peer.send(BAD_FRAME);
      sent += 50;
      await new Promise((resolve) => setImmediate(resolve));
      maxBuffered = Math.max(maxBuffered, serverSocket.bufferedAmount);
    }
    // Give the server every chance to read what already reached it.
    await until(() => peer.socket.bufferedAmount === 0 || stalled());
    maxBuffered = Math.max(maxBuffered, serverSocket.bufferedAmount);

    expect(maxBuffered).toBeLessThanOrEqual(LIMIT + MAX_REPLY_BYTES);
    expect(serverSocket.isPaused).toBe(true);

    // Once the peer reads again the server drains, resumes reading and answers every frame.
    peer.socket.resume();
    await until(() => peer.frames.length === sent);
    expect(serverSocket.isPaused).toBe(false);
    for (const frame of peer.frames) {
      expect(frame).toMatchObject({ op: 'error', id: ID, error: { code: 'INVALID_REQUEST' } });
      const message = (frame.error as { message: string }).message;
      expect(message.length).toBeLessThan(200);
    }
    expect(peer.socket.readyState).toBe(WebSocket.OPEN);
  });
});
