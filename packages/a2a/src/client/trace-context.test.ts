/**
 * A2ATransport writes the call's `traceparent` and `tracestate` on every A2A request, and an agent
 * served by A2AServer reads them in `ctx.headers`.
 */
import {
  CLIENT_OPERATIONS,
  createMessage,
  createTask,
  handlerFromFunction,
  type CallContext,
} from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';
import { A2AServer } from '../server/a2a-server.js';
import { A2ATransport } from './a2a-transport.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const OTHER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

describe('A2ATransport trace context', () => {
  let server: HTTPTransport;
  let a2a: A2AServer;
  const contexts: CallContext[] = [];

  beforeAll(async () => {
    a2a = new A2AServer();
    server = new HTTPTransport({ url: 'http://127.0.0.1:0', routes: [a2a] });
    server.bind(
      handlerFromFunction(
        async (task, ctx) => {
          contexts.push(ctx);
          return { ...task, state: 'completed' };
        },
        { card: { name: 'traced', description: 'Answers', url: '' } },
      ),
    );
    await server.start();
  });

  afterAll(async () => {
    await a2a.close();
    await server.stop();
  });

  it("carries the call's trace context, unary and streaming", async () => {
    const client = new A2ATransport();
    try {
      await client.send(CLIENT_OPERATIONS.send_task, server.url, createTask(createMessage('hi')), undefined, {
        traceparent: PARENT,
        tracestate: 'vendor=abc',
      });
      for await (const event of client.subscribe(server.url, createTask(createMessage('again')), {
        traceparent: OTHER,
      }))
        void event;
    } finally {
      await client.stop();
    }
    expect(contexts.map((ctx) => ctx.headers.traceparent)).toEqual([PARENT, OTHER]);
    expect(contexts[0].headers.tracestate).toBe('vendor=abc');
  });
});
