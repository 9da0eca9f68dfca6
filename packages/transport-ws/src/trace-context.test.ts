/**
 * The trace context on the WebSocket wire: the client writes the call's `traceparent` and `tracestate` in each call frame,
 * and the handler reads them in `ctx.headers`.
 */
import { CLIENT_OPERATIONS, createTask, type Transport } from '@agent/core';
import { createTestAgent, type TestAgent } from '@agent/test-support';
import { callHeaders, checkRequestFrame, payloadOf, type CallFrame } from './codec.js';
import { WebSocketTransport } from './websocket-transport.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const OTHER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

describe('WebSocketTransport trace context', () => {
  let server: WebSocketTransport;
  let agent: TestAgent;
  let client: Transport;

  beforeAll(async () => {
    agent = createTestAgent();
    server = new WebSocketTransport({ url: 'ws://127.0.0.1:0' });
    server.bind(agent);
    await server.start();
    client = new WebSocketTransport({ url: server.url });
  });

  afterAll(async () => {
    await client.stop();
    await server.stop();
  });

  beforeEach(() => {
    agent.contexts.length = 0;
  });

  it("carries the call's traceparent and tracestate to the handler, unary and streaming", async () => {
    await client.send(CLIENT_OPERATIONS.send_task, server.url, createTask('echo hi'), undefined, {
      traceparent: PARENT,
      tracestate: 'vendor=abc',
    });
    for await (const event of client.subscribe(server.url, createTask('echo there'), { traceparent: OTHER }))
      void event;
    expect(agent.contexts).toHaveLength(2);
    expect(agent.contexts[0].headers.traceparent).toBe(PARENT);
    expect(agent.contexts[0].headers.tracestate).toBe('vendor=abc');
    expect(agent.contexts[1].headers.traceparent).toBe(OTHER);
    expect(agent.contexts[1].headers.tracestate).toBeUndefined();
  });

  it('sends none without one (no span is active), and none for an invalid value', async () => {
    await client.send(CLIENT_OPERATIONS.send_task, server.url, createTask('echo a'));
    await client.send(CLIENT_OPERATIONS.send_task, server.url, createTask('echo b'), undefined, {
      traceparent: 'not-a-traceparent',
      tracestate: 'vendor=abc',
    });
    for (const ctx of agent.contexts) {
      expect(ctx.headers.traceparent).toBeUndefined();
      expect(ctx.headers.tracestate).toBeUndefined();
    }
  });

  it("gives each call on one socket its own frame's trace context, and none to a frame without", async () => {
    await Promise.all([
      client.send(CLIENT_OPERATIONS.send_task, server.url, createTask('echo one'), undefined, {
        traceparent: PARENT,
      }),
      client.send(CLIENT_OPERATIONS.send_task, server.url, createTask('echo two'), undefined, {
        traceparent: OTHER,
      }),
    ]);
    await client.send(CLIENT_OPERATIONS.send_task, server.url, createTask('echo three'));
    const byText = new Map(agent.contexts.map((ctx, index) => [index, ctx.headers.traceparent]));
    expect(new Set([byText.get(0), byText.get(1)])).toEqual(new Set([PARENT, OTHER]));
    expect(byText.get(2)).toBeUndefined();
  });
});

describe('WebSocket frame trace fields', () => {
  it("replace the handshake's trace headers in the call's headers, or drop them", () => {
    const handshake = { 'x-tenant': 'acme', traceparent: OTHER, tracestate: 'a=1' };
    expect(callHeaders(handshake, { traceparent: PARENT })).toEqual({
      'x-tenant': 'acme',
      traceparent: PARENT,
    });
    expect(callHeaders(handshake, {})).toEqual({ 'x-tenant': 'acme' });
    const plain = { 'x-tenant': 'acme' };
    expect(callHeaders(plain, {})).toBe(plain);
  });

  it('are refused when not text, and never reach a request payload', () => {
    expect(() => checkRequestFrame({ op: 'task.get', id: '1', task_id: 't', traceparent: 7 })).toThrow(
      '"traceparent" must be a string',
    );
    const frame = checkRequestFrame({
      op: 'task.get',
      id: '1',
      task_id: 't',
      traceparent: PARENT,
      tracestate: 'a=1',
    });
    expect(payloadOf(frame as CallFrame)).toEqual({ task_id: 't' });
  });
});
