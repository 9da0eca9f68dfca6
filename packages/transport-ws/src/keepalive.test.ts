import { CLIENT_OPERATIONS, UnavailableError, type Task } from '@agent/core';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { client, closeAll, rawSocket, serve, task } from './test-support/harness.js';

afterEach(closeAll);

describe('ping/pong keepalive', () => {
  it('the server terminates a peer that stops answering pings and detaches its calls; live peers stay', async () => {
    // A second between pings: this process is the server and both peers, so a stall of the event
    // loop longer than the interval (a loaded CI machine) let the server's check run before it had
    // read the live peer's pong, and it closed that peer too.
    const { server, handler } = await serve({ pingIntervalMs: 1000 });
    const live = await rawSocket(server.url);
    const dead = await rawSocket(server.url, { autoPong: false });
    const hung = task('hang');
    dead.send({ op: 'task.send', id: 'h', task: hung, stream: true });
    await handler.whenRunning(hung.id);
    const closeCode = await new Promise<number>((resolve) => dead.socket.once('close', resolve));
    expect(closeCode).toBe(1006);
    // The task is the server's: it runs on without the peer.
    await expect(
      client().send<Task>(CLIENT_OPERATIONS.get_task, server.url, { task_id: hung.id }),
    ).resolves.toMatchObject({ state: 'working' });
    expect(handler.abortedCalls).toBe(0);
    expect(live.socket.readyState).toBe(WebSocket.OPEN);
    live.send({ op: 'agent.card', id: 'c' });
    expect(await live.next((f) => f.id === 'c')).toMatchObject({ op: 'result' });
  });

  it('the client terminates a server that stops answering pings and fails its calls with UnavailableError', async () => {
    // A bare ws server that accepts the upgrade, never answers a frame and never pongs.
    const silent = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: false });
    await new Promise<void>((resolve) => silent.once('listening', () => resolve()));
    try {
      const url = `ws://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const transport = client({ pingIntervalMs: 50, timeoutMs: 60_000 });
      await expect(transport.send(CLIENT_OPERATIONS.send_task, url, task('echo anyone?'))).rejects.toThrow(
        UnavailableError,
      );
    } finally {
      for (const socket of silent.clients) socket.terminate();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
