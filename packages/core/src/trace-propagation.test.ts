import {
  context,
  trace,
  ROOT_CONTEXT,
  TraceFlags,
  type Context,
  type ContextManager,
} from '@opentelemetry/api';
import { outgoingTraceHeaders, withTraceHeaders } from './trace-propagation.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** The smallest context manager: enough to make a span active for a synchronous call. */
class StackContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;
  active(): Context {
    return this.current;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.current;
    this.current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

describe('outgoingTraceHeaders', () => {
  beforeAll(() => context.setGlobalContextManager(new StackContextManager()));
  afterAll(() => context.disable());

  const active = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
  });

  it('sends nothing without an option or an active span, and allocates nothing for it', () => {
    expect(outgoingTraceHeaders()).toBeUndefined();
    const headers = { accept: 'application/json' };
    expect(withTraceHeaders(headers, {})).toBe(headers);
  });

  it("sends the call's own traceparent (with tracestate), ignoring an invalid one", () => {
    expect(outgoingTraceHeaders({ traceparent: PARENT, tracestate: 'a=1' })).toEqual({
      traceparent: PARENT,
      tracestate: 'a=1',
    });
    expect(outgoingTraceHeaders({ traceparent: 'garbage', tracestate: 'a=1' })).toBeUndefined();
    expect(withTraceHeaders({ accept: 'x' }, { traceparent: PARENT })).toEqual({
      accept: 'x',
      traceparent: PARENT,
    });
  });

  it("sends the active OpenTelemetry span when the call names none; the call's own wins", () => {
    context.with(active, () => {
      expect(outgoingTraceHeaders()).toEqual({
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      });
      expect(outgoingTraceHeaders({ traceparent: PARENT })).toEqual({ traceparent: PARENT });
    });
  });

  it('sends nothing for an invalid active span context (a no-op span)', () => {
    const invalid = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0'.repeat(32),
      spanId: '0'.repeat(16),
      traceFlags: TraceFlags.NONE,
    });
    context.with(invalid, () => expect(outgoingTraceHeaders()).toBeUndefined());
  });
});
