/**
 * Memory per idle WebSocket connection: RSS of the server child (after a forced GC) before `n`
 * connections to its data path are opened, with them open, and after they are closed again.
 */
import { WebSocket } from 'ws';
import type { ServerChild } from './child.js';

export interface IdleWsResult {
  connections: number;
  kbPerConnection: number;
  /** Share of the growth given back after every connection closed (RSS is returned lazily). */
  returnedShare: number;
}

const BATCH = 500;
const settle = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** `settleMs`: the pause before each reading, for the server to finish accepting or closing. */
export async function idleWebSockets(
  server: ServerChild,
  n: number,
  settleMs: number,
): Promise<IdleWsResult> {
  const url = server.urls.ws;
  if (!url) throw new Error('the server announced no ws URL');
  const before = (await server.probe(true)).rssBytes;
  const sockets: WebSocket[] = [];
  try {
    for (let i = 0; i < n; i += BATCH)
      sockets.push(...(await Promise.all(Array.from({ length: Math.min(BATCH, n - i) }, () => open(url)))));
    await settle(settleMs);
    const held = (await server.probe(true)).rssBytes;
    for (const socket of sockets) socket.close();
    await Promise.all(
      sockets.map((socket) =>
        socket.readyState === WebSocket.CLOSED
          ? undefined
          : new Promise((resolve) => socket.once('close', resolve)),
      ),
    );
    await settle(settleMs);
    const after = (await server.probe(true)).rssBytes;
    const growth = held - before;
    return {
      connections: n,
      kbPerConnection: growth / n / 1024,
      returnedShare: growth > 0 ? (held - after) / growth : 0,
    };
  } finally {
    for (const socket of sockets) if (socket.readyState !== WebSocket.CLOSED) socket.terminate();
  }
}
