/**
 * Control requests beside busy streams: with 100 streams writing as fast as their readers take it
 * (and some readers that take nothing), a `tasks/cancel` on `/rpc` and `/healthz` on the same port
 * are still answered.
 */
import { connect, type Socket } from 'node:net';
import { createTask, type Task } from '@agent/core';
import { startHarness, type Harness } from './test-support/harness.js';
import { rawRequest, rpcBody } from './test-support/raw-http.js';

jest.setTimeout(60_000);

const STREAMS = 100;
/** Far more chunks than the test lives for: every stream is still busy when the control requests go. */
const ENDLESS = 'stream 100000000';

/** Opens one stream on a bare socket; resolves once its first bytes arrived. */
function openStream(h: Harness, task: Task, reading: boolean, sockets: Socket[]): Promise<void> {
  const { hostname, port } = new URL(h.url);
  const body = rpcBody('tasks/stream', { task });
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST /tasks/stream HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => {
      // A reader that stops after the headers: its stream waits on back-pressure, never on the server.
      if (!reading) socket.pause();
      resolve();
    });
    if (reading) socket.on('data', () => undefined);
  });
}

describe('control requests beside 100 busy streams', () => {
  let h: Harness;
  const sockets: Socket[] = [];
  const tasks = Array.from({ length: STREAMS }, () => createTask(ENDLESS));

  beforeAll(async () => {
    h = await startHarness({ server: { stopGraceMs: 200 } });
    await Promise.all(tasks.map((task, i) => openStream(h, task, i % 10 !== 0, sockets)));
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await h.stop();
  });

  it('answers /healthz on the same port', async () => {
    const res = await rawRequest(`${h.url}/healthz`, { method: 'GET' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok' });
  });

  it('cancels a busy stream through /rpc, for a reading and a stalled consumer alike', async () => {
    for (const task of [tasks[1]!, tasks[0]!]) {
      const res = await rawRequest(`${h.url}/rpc`, {
        body: rpcBody('tasks/cancel', { task_id: task.id, reason: 'enough' }),
      });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ result: { id: task.id, state: 'canceled' } });
    }
  });

  it('answers a unary call and the card meanwhile', async () => {
    const sent = await rawRequest(`${h.url}/rpc`, {
      body: rpcBody('tasks/send', { task: createTask('echo fine') }),
    });
    expect(sent.json).toMatchObject({ result: { state: 'completed' } });
    const card = await rawRequest(`${h.url}/.well-known/agent.json`, { method: 'GET' });
    expect(card.status).toBe(200);
  });
});
