/**
 * TaskTracing without an OpenTelemetry SDK: the caller's trace is still joined and carried on (the
 * spans themselves are covered with a real SDK in @agent/runtime's tracing test).
 */
import { TaskTracing } from './task-tracing.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const RUN_TRACE = '0af7651916cd43dd8448eb211c80319c';

describe.each([
  ['without @opentelemetry/api (tracing off)', new TaskTracing({ enabled: false })],
  ['with @opentelemetry/api but no SDK registered', new TaskTracing()],
])('TaskTracing %s', (_name, tracing) => {
  it("joins the caller's trace and passes its span on to a delegated call", () => {
    const trace = tracing.start({
      taskId: 't1',
      agentName: 'a',
      headers: { traceparent: PARENT, tracestate: 'v=1' },
      served: true,
    });
    expect(trace.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    trace.bind({ runId: 'r1', traceId: trace.traceId!, sessionId: null });
    expect(trace.run(() => 42)).toBe(42);
    const delegation = trace.delegation('grpc://127.0.0.1:1', 'child', RUN_TRACE);
    expect(delegation.outgoing).toEqual({ traceparent: PARENT, tracestate: 'v=1' });
    delegation.end();
    const call = trace.modelCall('openai', 'gpt');
    expect(call.run(() => 'answer')).toBe('answer');
    call.end({ inputTokens: 1, outputTokens: 2 });
    trace.end('completed');
  });

  it("without a caller, names no trace and starts one in the run's trace id for a delegated call", () => {
    const trace = tracing.start({ taskId: 't2', agentName: 'a' });
    expect(trace.traceId).toBeUndefined();
    const { traceparent } = trace.delegation('b', 'child', RUN_TRACE).outgoing;
    expect(traceparent).toMatch(new RegExp(`^00-${RUN_TRACE}-[0-9a-f]{16}-01$`));
    trace.end('failed', 'INTERNAL');
  });

  it('ignores an invalid traceparent', () => {
    const trace = tracing.start({ taskId: 't3', agentName: 'a', headers: { traceparent: '00-xyz' } });
    expect(trace.traceId).toBeUndefined();
  });
});
