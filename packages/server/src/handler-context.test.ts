import { setFlagsFromString } from 'node:v8';
import { HandlerContext, type ContextSource } from './handler-context.js';

// V8 natives parse only with this flag, set before the function is made.
setFlagsFromString('--allow-natives-syntax');
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;

function source(reads: string[], extra: Partial<ContextSource> = {}): ContextSource {
  const controller = new AbortController();
  return {
    transport: 'http',
    tenant: 'acme',
    security: undefined,
    taskStore: undefined,
    request: {
      get signal() {
        reads.push('signal');
        return controller.signal;
      },
    },
    normalizedHeaders: () => {
      reads.push('headers');
      return { 'x-one': '1' };
    },
    ...extra,
  };
}

describe('HandlerContext', () => {
  it('reads signal and headers only when asked, and a spread copy keeps them', () => {
    const reads: string[] = [];
    const ctx = new HandlerContext(source(reads));
    expect(reads).toEqual([]);
    const copy = { ...ctx };
    expect(reads).toEqual(['signal', 'headers']);
    expect(copy.headers).toEqual({ 'x-one': '1' });
    expect(copy.signal).toBeInstanceOf(AbortSignal);
    expect(Object.keys(ctx)).toEqual(['transport', 'tenant', 'signal', 'headers']);
  });

  it('carries security and the task store only when the call has them', () => {
    const security = { principalId: 'p', token: 't', metadata: {} };
    const store = {};
    const ctx = new HandlerContext(source([], { security, taskStore: store }));
    expect(Object.keys(ctx)).toEqual(['transport', 'tenant', 'signal', 'headers', 'security', 'taskStore']);
    expect(ctx.security).toBe(security);
    expect(ctx.taskStore).toBe(store);
  });

  it('keeps fast properties: one shape for every call, nothing of a call kept after it', () => {
    const contexts = Array.from({ length: 3 }, () => new HandlerContext(source([])));
    for (const ctx of contexts) expect(hasFastProperties(ctx)).toBe(true);
  });
});
