import type WebSocket from 'ws';

/**
 * Pings `socket` every `intervalMs`; when the previous ping got no pong by the next tick the peer is
 * considered dead and the socket is terminated (no close handshake: a dead peer would never answer).
 * Returns a stop function. The timer is unref'd so it never keeps a process alive on its own.
 */
export function startKeepalive(socket: WebSocket, intervalMs: number): () => void {
  if (intervalMs <= 0) return () => undefined;
  let alive = true;
  const onPong = (): void => {
    alive = true;
  };
  socket.on('pong', onPong);
  const timer = setInterval(() => {
    if (!alive) {
      socket.terminate();
      return;
    }
    alive = false;
    try {
      socket.ping();
    } catch {
      // Not open (yet or any more): the close handler stops this timer.
    }
  }, intervalMs);
  timer.unref();
  const stop = (): void => {
    clearInterval(timer);
    socket.off('pong', onPong);
  };
  socket.once('close', stop);
  return stop;
}
