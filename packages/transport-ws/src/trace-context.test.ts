// The trace context on the WebSocket wire: the client writes it in each call frame.
import { CLIENT_OPERATIONS, createTask } from '@agent/core';
import { describeTraceContext, OTHER_TRACE_PARENT, TRACE_PARENT } from '@agent/test-support';
import { callHeaders, checkRequestFrame, payloadOf, type CallFrame } from './codec.js';
import { WebSocketTransport } from './websocket-transport.js';

describeTraceContext(
  'WebSocketTransport',
  {
    server: () => new WebSocketTransport({ url: 'ws://127.0.0.1:0' }),
    client: (url) => new WebSocketTransport({ url }),
  },
  (state) => {
    it("gives each call on one socket its own frame's trace context, and none to a frame without", async () => {
      await Promise.all([
        state.client.send(CLIENT_OPERATIONS.send_task, state.url, createTask('echo one'), undefined, {
          traceparent: TRACE_PARENT,
        }),
        state.client.send(CLIENT_OPERATIONS.send_task, state.url, createTask('echo two'), undefined, {
          traceparent: OTHER_TRACE_PARENT,
        }),
      ]);
      await state.client.send(CLIENT_OPERATIONS.send_task, state.url, createTask('echo three'));
      const byText = new Map(state.agent.contexts.map((ctx, index) => [index, ctx.headers.traceparent]));
      expect(new Set([byText.get(0), byText.get(1)])).toEqual(new Set([TRACE_PARENT, OTHER_TRACE_PARENT]));
      expect(byText.get(2)).toBeUndefined();
    });
  },
);

describe('WebSocket frame trace fields', () => {
  it("replace the handshake's trace headers in the call's headers, or drop them", () => {
    const handshake = { 'x-tenant': 'acme', traceparent: OTHER_TRACE_PARENT, tracestate: 'a=1' };
    expect(callHeaders(handshake, { traceparent: TRACE_PARENT })).toEqual({
      'x-tenant': 'acme',
      traceparent: TRACE_PARENT,
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
      traceparent: TRACE_PARENT,
      tracestate: 'a=1',
    });
    expect(payloadOf(frame as CallFrame)).toEqual({ task_id: 't' });
  });
});
