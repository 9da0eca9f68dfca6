/**
 * The trace context on the gRPC wire: the client writes the call's `traceparent` and `tracestate` as call metadata,
 * and the handler reads them in `ctx.headers`.
 */
import { CLIENT_OPERATIONS, createTask, type Transport } from '@agent/core';
import { createTestAgent, type TestAgent } from '@agent/test-support';
import { GRPCTransport } from './grpc-transport.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const OTHER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

describe('GRPCTransport trace context', () => {
  let server: GRPCTransport;
  let agent: TestAgent;
  let client: Transport;

  beforeAll(async () => {
    agent = createTestAgent();
    server = new GRPCTransport({ url: 'grpc://127.0.0.1:0' });
    server.bind(agent);
    await server.start();
    client = new GRPCTransport({ url: server.url });
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
});
