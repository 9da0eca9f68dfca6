/**
 * Streamed events per second: the WebSocket and SSE transports streaming n artifact events per task,
 * each against a bare writer of the same JSON frames (bare `ws`; bare node:http SSE read with
 * eventsource-parser, the parser the SSE client uses).
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParser } from 'eventsource-parser';
import { WebSocket, WebSocketServer } from 'ws';
import { createArtifact, createTask, nowIso, type TaskEvent, type TaskHandler } from '@agent/core';
import { finalStatusEvent } from '@agent/core/internal';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';
import { closedLoop, compare, type Comparison } from './load.js';

const EVENTS_PER_STREAM = 1000;
const ARTIFACT = createArtifact('chunk of streamed output', { id: 'bench-artifact' });

function artifactEvent(taskId: string, i: number): TaskEvent {
  return {
    type: 'task.artifact',
    task_id: taskId,
    artifact: ARTIFACT,
    append: i > 0,
    last_chunk: false,
    timestamp: nowIso(),
  };
}

/** A handler that streams EVENTS_PER_STREAM artifact events, then the final status. */
const streamingHandler: TaskHandler = {
  async handleTask(task) {
    return { ...task, state: 'completed' };
  },
  async *handleTaskStreaming(task) {
    for (let i = 0; i < EVENTS_PER_STREAM; i++) yield artifactEvent(task.id, i);
    yield finalStatusEvent({ ...task, state: 'completed' });
  },
  async cancelTask(taskId) {
    throw new Error(`not cancelable: ${taskId}`);
  },
  getAgentCard: () => ({ name: 'bench', description: '', url: '' }),
};

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function bareWs(settings: { seconds: number; concurrency: number }) {
  const http = createServer();
  const wss = new WebSocketServer({ server: http });
  wss.on('connection', (socket) => {
    socket.on('message', (raw) => {
      const { id } = JSON.parse(String(raw)) as { id: number };
      for (let i = 0; i < EVENTS_PER_STREAM; i++)
        socket.send(JSON.stringify({ op: 'event', id, event: artifactEvent('t', i) }));
      socket.send(JSON.stringify({ op: 'result', id, task: createTask('done') }));
    });
  });
  const port = await listen(http);
  const sockets = await Promise.all(
    Array.from({ length: settings.concurrency }, async () => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}`);
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      return socket;
    }),
  );
  let next = 0;
  const once = (socket: WebSocket) =>
    new Promise<number>((resolve) => {
      let count = 0;
      const id = next++;
      const onMessage = (raw: Buffer) => {
        const frame = JSON.parse(String(raw)) as { op: string };
        if (frame.op === 'event') count++;
        else {
          socket.off('message', onMessage);
          resolve(count);
        }
      };
      socket.on('message', onMessage);
      socket.send(JSON.stringify({ op: 'task.send', id }));
    });
  let turn = 0;
  const result = await closedLoop('bare ws writer', () => once(sockets[turn++ % sockets.length]!), {
    ...settings,
    concurrency: sockets.length,
  });
  for (const s of sockets) s.terminate();
  wss.close();
  await closeServer(http);
  return result;
}

async function bareSse(settings: { seconds: number; concurrency: number }) {
  const http = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (let i = 0; i < EVENTS_PER_STREAM; i++) {
        res.write(
          `id: ${i}\nevent: task.artifact\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: artifactEvent('t', i) })}\n\n`,
        );
      }
      res.end(
        `event: task.status\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: finalStatusEvent(createTask('done')) })}\n\n`,
      );
    });
  });
  const port = await listen(http);
  const once = () =>
    new Promise<number>((resolve, reject) => {
      let count = 0;
      const parser = createParser({
        onEvent: (message) => {
          JSON.parse(message.data);
          if (message.event === 'task.artifact') count++;
        },
      });
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/tasks/stream' }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('end', () => resolve(count));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end('{}');
    });
  const result = await closedLoop('bare node:http SSE writer + eventsource-parser', once, settings);
  await closeServer(http);
  return result;
}

async function subjectLoop(
  name: string,
  transport: WebSocketTransport | SSETransport,
  url: string,
  settings: { seconds: number; concurrency: number },
) {
  const once = async () => {
    let count = 0;
    for await (const event of transport.subscribe(url, createTask('stream')))
      if (event.type === 'task.artifact') count++;
    return count;
  };
  await closedLoop('warm-up', once, { ...settings, seconds: 1 });
  return closedLoop(name, once, settings);
}

export async function runStreamBench(settings: {
  seconds: number;
  concurrency: number;
}): Promise<{ ws: Comparison; sse: Comparison }> {
  const wsBaseline = await bareWs(settings);
  const wsServer = new WebSocketTransport({ url: 'ws://127.0.0.1:0' });
  wsServer.bind(streamingHandler);
  await wsServer.start();
  const wsClient = new WebSocketTransport({ url: wsServer.url });
  const wsSubject = await subjectLoop('WebSocketTransport stream', wsClient, wsServer.url, settings);
  await wsClient.stop();
  await wsServer.stop();

  const sseBaseline = await bareSse(settings);
  const sseServer = new SSETransport({ url: 'http://127.0.0.1:0' });
  sseServer.bind(streamingHandler);
  await sseServer.start();
  const sseClient = new SSETransport({ url: sseServer.url });
  const sseSubject = await subjectLoop('SSETransport stream', sseClient, sseServer.url, settings);
  await sseClient.stop();
  await sseServer.stop();
  return { ws: compare(wsBaseline, wsSubject), sse: compare(sseBaseline, sseSubject) };
}
