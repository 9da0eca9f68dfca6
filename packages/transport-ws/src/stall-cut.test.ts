/**
 * A stream's caller that stops reading is cut off by the pipeline's stall limit; a WebSocket whose
 * peer does not drain it is then closed, so what it buffered goes at once (every other call on it
 * is stuck behind the same unread bytes). A caller that reads is never cut.
 */
import { CLIENT_OPERATIONS } from '@agent/core';
import { client, closeAll, collect, rawSocket, serve, task } from './test-support/harness.js';

afterEach(closeAll);

const SETTINGS = { streamStallMs: 300, maxBufferedBytes: 1024 };

describe('a stream whose caller stops reading', () => {
  it('is cut off after streamStallMs and its socket, which the peer does not drain, is closed', async () => {
    const { server, handler } = await serve(SETTINGS);
    const peer = await rawSocket(server.url);
    const closed = new Promise<number>((resolve) => peer.socket.once('close', (code) => resolve(code)));
    // Far more than the socket buffers take, and the peer reads nothing: the run is held back.
    const flood = task('flood 6000 4096');
    peer.socket.pause();
    peer.send({ op: 'task.send', id: 's1', task: flood, stream: true });
    // Held back, the run could not end: it ends once the caller is cut off and it goes on alone.
    await handler.whenDone(flood.id);
    // The peer reads again: what the kernel held for it, then the end of a connection the server
    // cut (1006: no close frame), not a stream that goes on.
    peer.socket.resume();
    await expect(closed).resolves.toBe(1006);
    expect(peer.frames.some((frame) => frame.op === 'result')).toBe(false);
  });

  it('is not cut off while its caller reads', async () => {
    // A stall limit a reading caller never comes near, even on a busy machine.
    const { server } = await serve({ ...SETTINGS, streamStallMs: 2000 });
    const events = await collect(client().subscribe(server.url, task('flood 400 4096')));
    expect(events.filter((event) => event.type === 'task.artifact')).toHaveLength(400);
    await expect(
      client().send(CLIENT_OPERATIONS.send_task, server.url, task('echo still here')),
    ).resolves.toMatchObject({ state: 'completed' });
  });

  it('refuses a streamStallMs that is not a whole number of ms from 1', () => {
    for (const streamStallMs of [0, 1.5, -1]) {
      expect(() => client({ streamStallMs })).toThrow(/streamStallMs/);
    }
  });
});
