/**
 * A TCP relay in front of a server that counts the connections clients open through it: how a
 * test sees whether a client reuses its keep-alive connections.
 */
import net from 'node:net';

export interface CountingRelay {
  /** `http://127.0.0.1:<port>` of the relay. */
  url: string;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

/** `target` may be a function, for a server that must know the relay's URL before it starts. */
export async function countingRelay(target: URL | string | (() => URL | string)): Promise<CountingRelay> {
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    accepted += 1;
    const { hostname, port } = new URL(typeof target === 'function' ? target() : target);
    const upstream = net.connect(Number(port), hostname);
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
  const address = relay.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    accepted: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    },
  };
}
