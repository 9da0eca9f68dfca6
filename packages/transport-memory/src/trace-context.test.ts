/**
 * The trace context of an in-process call: the client hands the call's `traceparent` and
 * `tracestate` to the pipeline as headers, as a network client writes them on its wire.
 */
import { CLIENT_OPERATIONS, createTask } from '@agent/core';
import type { TestAgent } from '@agent/test-support';
import { RuntimeTransport } from './runtime-transport.js';
import { createEchoAgent } from './test-support/handlers.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const OTHER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

describe('RuntimeTransport trace context', () => {
  let server: RuntimeTransport;
  let agent: TestAgent;

  beforeEach(async () => {
    server = new RuntimeTransport();
    agent = createEchoAgent('alpha');
    server.registerAgent(agent);
    await server.start();
  });

  afterEach(() => server.stop());

  it("hands the call's traceparent and tracestate to the handler, unary and streaming", async () => {
    const client = server.client();
    await client.send(CLIENT_OPERATIONS.send_task, 'alpha', createTask('ping'), undefined, {
      traceparent: PARENT,
      tracestate: 'vendor=abc',
    });
    for await (const event of client.subscribe('runtime://alpha', createTask('two words'), {
      traceparent: OTHER,
    }))
      void event;
    await client.send(CLIENT_OPERATIONS.send_task, 'alpha', createTask('none'));
    expect(agent.contexts.map((ctx) => ctx.headers.traceparent)).toEqual([PARENT, OTHER, undefined]);
    expect(agent.contexts[0].headers.tracestate).toBe('vendor=abc');
  });
});
