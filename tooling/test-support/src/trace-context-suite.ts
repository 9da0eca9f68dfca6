/**
 * The trace context on a wire: the client writes the call's `traceparent` and `tracestate` (as
 * headers, metadata or frame fields: the wire's choice) and the handler reads them in `ctx.headers`;
 * no trace context is sent without one, nor for an invalid value. Runs under jest against a real
 * server on 127.0.0.1 port 0.
 */
import { CLIENT_OPERATIONS, createTask, type Transport } from '@agent/core';
import { createTestAgent, type TestAgent } from './test-agent.js';

export const TRACE_PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
export const OTHER_TRACE_PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

export interface TraceContextHarness {
  /** A server on 127.0.0.1 port 0 (not started). */
  server(): Transport & { readonly url: string };
  /** A client of `url`. */
  client(url: string): Transport;
}

/** The suite; `more(state)` adds a wire's own cases within the same server and client. */
export function describeTraceContext(
  name: string,
  harness: TraceContextHarness,
  more?: (state: { readonly url: string; readonly agent: TestAgent; readonly client: Transport }) => void,
): void {
  describe(`${name} trace context`, () => {
    let server: Transport & { readonly url: string };
    const state = {} as { url: string; agent: TestAgent; client: Transport };

    beforeAll(async () => {
      state.agent = createTestAgent();
      server = harness.server();
      server.bind(state.agent);
      await server.start();
      state.url = server.url;
      state.client = harness.client(server.url);
    });

    afterAll(async () => {
      await state.client.stop();
      await server.stop();
    });

    beforeEach(() => {
      state.agent.contexts.length = 0;
    });

    it("carries the call's traceparent and tracestate to the handler, unary and streaming", async () => {
      const { client, agent, url } = state;
      await client.send(CLIENT_OPERATIONS.send_task, url, createTask('echo hi'), undefined, {
        traceparent: TRACE_PARENT,
        tracestate: 'vendor=abc',
      });
      for await (const event of client.subscribe(url, createTask('echo there'), {
        traceparent: OTHER_TRACE_PARENT,
      }))
        void event;
      expect(agent.contexts).toHaveLength(2);
      expect(agent.contexts[0]!.headers.traceparent).toBe(TRACE_PARENT);
      expect(agent.contexts[0]!.headers.tracestate).toBe('vendor=abc');
      expect(agent.contexts[1]!.headers.traceparent).toBe(OTHER_TRACE_PARENT);
      expect(agent.contexts[1]!.headers.tracestate).toBeUndefined();
    });

    it('sends none without one (no span is active), and none for an invalid value', async () => {
      const { client, agent, url } = state;
      await client.send(CLIENT_OPERATIONS.send_task, url, createTask('echo a'));
      await client.send(CLIENT_OPERATIONS.send_task, url, createTask('echo b'), undefined, {
        traceparent: 'not-a-traceparent',
        tracestate: 'vendor=abc',
      });
      for (const ctx of agent.contexts) {
        expect(ctx.headers.traceparent).toBeUndefined();
        expect(ctx.headers.tracestate).toBeUndefined();
      }
    });

    more?.(state);
  });
}
