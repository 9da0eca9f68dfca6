import { createTask, type AgentCard, type Task } from '@agent/core';
import { createTestAgent, type TestAgent } from '@agent/test-support';
import WebSocket from 'ws';
import { WebSocketTransport } from '../websocket-transport.js';
import type { WebSocketTransportOptions } from '../options.js';

/** Everything a test opened, closed by {@link closeAll} in afterEach so jest exits by itself. */
const opened: Array<{ stop(): Promise<void> | void }> = [];

export interface Served {
  server: WebSocketTransport;
  handler: TestAgent;
}

/** The shared test agent as these tests know it: a text without a known command is an error. */
export function createDemoHandler(
  card: AgentCard = { name: 'demo', description: 'test agent', url: '' },
): TestAgent {
  return createTestAgent({ card, unknown: 'reject', collectArtifacts: false, cancelFinished: 'not-found' });
}

/**
 * A started server transport on 127.0.0.1 with a free port, serving a fresh demo handler. Its stop
 * cancels what still runs at once (`stopGraceMs: 0`) unless a test asks for a grace: a test that
 * leaves a task hanging would otherwise wait out the default grace in {@link closeAll}.
 */
export async function serve(
  options: Partial<WebSocketTransportOptions> = {},
  handler = createDemoHandler(),
): Promise<Served> {
  const server = new WebSocketTransport({
    url: 'ws://127.0.0.1:0',
    pingIntervalMs: 0,
    stopGraceMs: 0,
    ...options,
  });
  server.bind(handler);
  await server.start();
  opened.push(server);
  return { server, handler };
}

/** A client-only transport. */
export function client(options: Partial<WebSocketTransportOptions> = {}): WebSocketTransport {
  const transport = new WebSocketTransport({ url: 'ws://127.0.0.1:0', pingIntervalMs: 0, ...options });
  opened.push(transport);
  return transport;
}

/** A raw `ws` socket, for tests that speak frames directly. */
export async function rawSocket(url: string, options: WebSocket.ClientOptions = {}): Promise<RawSocket> {
  const socket = new WebSocket(url, options);
  const raw = new RawSocket(socket);
  opened.push({ stop: () => socket.terminate() });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return raw;
}

export class RawSocket {
  readonly frames: Array<Record<string, unknown>> = [];
  private waiters: Array<() => void> = [];

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)) as Record<string, unknown>);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Resolves with the first received frame matching `predicate` (waiting for it if needed). */
  async next(predicate: (frame: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.frames.find(predicate);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

export async function closeAll(): Promise<void> {
  const items = opened.splice(0);
  await Promise.all(items.map(async (item) => item.stop()));
}

export function task(text: string): Task {
  return createTask(text);
}

/** Waits until `condition` holds, re-checking on each macrotask turn (a condition, not a timing). */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}
