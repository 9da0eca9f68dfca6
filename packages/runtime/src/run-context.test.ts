import { createTask, ValidationError } from '@agent/core';
import { RunBudget } from './run-budget.js';
import { newTraceId, RunContext } from './run-context.js';

describe('RunContext', () => {
  it('generates a W3C trace id and round-trips through toDict/fromDict', () => {
    const context = new RunContext({
      sessionId: 's1',
      workspaceUri: 'file:///tmp/ws',
      agentChain: ['a'],
      permissions: { 'files.read': 'allow', 'records.*': false, net: { rule: 'require_approval' } },
      budget: new RunBudget({ maxSteps: 3, maxRuntimeSeconds: 1.5 }),
      metadata: { app: 'x' },
    });
    expect(context.traceId).toMatch(/^[0-9a-f]{32}$/);
    const dict = context.toDict();
    expect(dict).toEqual({
      run_id: context.runId,
      session_id: 's1',
      trace_id: context.traceId,
      workspace_uri: 'file:///tmp/ws',
      parent_run_id: null,
      agent_chain: ['a'],
      permissions: { 'files.read': 'allow', 'records.*': false, net: { rule: 'require_approval' } },
      budget: { max_steps: 3, max_runtime_seconds: 1.5 },
      canceled: false,
      metadata: { app: 'x' },
    });
    expect(
      JSON.parse(JSON.stringify(RunContext.fromDict(JSON.parse(JSON.stringify(dict))).toDict())),
    ).toEqual(dict);
  });

  it('makes trace ids that start with the time in milliseconds and end in 10 random bytes', async () => {
    const before = Date.now();
    const first = newTraceId();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = newTraceId();
    const after = Date.now();
    for (const id of [first, second]) {
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(parseInt(id.slice(0, 12), 16)).toBeGreaterThanOrEqual(before);
      expect(parseInt(id.slice(0, 12), 16)).toBeLessThanOrEqual(after);
    }
    // Made later, sorted later: a store's index of them grows at its end.
    expect([second, first].sort()).toEqual([first, second]);
    // Past the pool of random bytes (256 ids) too, the random part never repeats.
    const ids = Array.from({ length: 5000 }, newTraceId);
    expect(new Set(ids.map((id) => id.slice(12))).size).toBe(ids.length);
  });

  it('gives a run a time-ordered UUID v7 run id, and a child a later one', async () => {
    const parent = new RunContext();
    await new Promise((resolve) => setTimeout(resolve, 2));
    const child = parent.child();
    for (const id of [parent.runId, child.runId])
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(child.runId > parent.runId).toBe(true);
    expect(new RunContext({ runId: 'given' }).runId).toBe('given');
  });

  it('replaces a trace id that is not W3C-shaped', () => {
    expect(new RunContext({ traceId: 'trace_abc' }).traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(new RunContext({ traceId: 'a'.repeat(32) }).traceId).toBe('a'.repeat(32));
  });

  it('child() keeps session, trace, workspace, permissions, budget and metadata with a new run id', () => {
    const parent = new RunContext({
      sessionId: 's',
      agentChain: ['a'],
      permissions: { x: 'deny' },
      budget: new RunBudget({ maxLlmCalls: 2 }),
      metadata: { k: 1 },
    });
    const child = parent.child({ agentName: 'b' });
    expect(child.runId).not.toBe(parent.runId);
    expect(child.parentRunId).toBe(parent.runId);
    expect(child.agentChain).toEqual(['a', 'b']);
    expect(child.sessionId).toBe('s');
    expect(child.traceId).toBe(parent.traceId);
    expect(child.permissions).toEqual({ x: 'deny' });
    expect(child.budget?.toDict()).toEqual({ max_llm_calls: 2 });
    expect(child.metadata).toEqual({ k: 1 });
    expect(parent.child().agentChain).toEqual(['a']);
  });

  it('cancel() returns a serializable canceled snapshot and leaves the original alone', () => {
    const context = new RunContext();
    const canceled = context.cancel('user pressed stop');
    expect(context.canceled).toBe(false);
    expect(canceled.canceled).toBe(true);
    expect(canceled.runId).toBe(context.runId);
    expect(JSON.parse(JSON.stringify(canceled))).toMatchObject({
      canceled: true,
      metadata: { cancel_reason: 'user pressed stop' },
    });
    expect(canceled.child().canceled).toBe(false);
    expect(canceled.child().cancelReason).toBeNull();
  });

  it('ensureTaskContext creates one and stores it in task.metadata.run_context', () => {
    const task = createTask('hi');
    const context = RunContext.ensureTaskContext(task, { agentName: 'agent-a' });
    expect(task.metadata.run_context).toEqual(context.toDict());
    expect(context.agentChain).toEqual(['agent-a']);
    // A second pass by the same agent does not grow the chain; it reads the stored context.
    const again = RunContext.ensureTaskContext(task, { agentName: 'agent-a' });
    expect(again.runId).toBe(context.runId);
    expect(again.agentChain).toEqual(['agent-a']);
  });

  it('ensureTaskContext upgrades legacy metadata.session_id and mirrors it back', () => {
    const task = createTask('hi', { metadata: { session_id: 'legacy-1', trace_id: 'b'.repeat(32) } });
    const context = RunContext.ensureTaskContext(task);
    expect(context.sessionId).toBe('legacy-1');
    expect(context.traceId).toBe('b'.repeat(32));
    expect(task.metadata.session_id).toBe('legacy-1');
    expect((task.metadata.run_context as { session_id: string }).session_id).toBe('legacy-1');

    const typed = createTask('hi', {
      metadata: { run_context: new RunContext({ sessionId: 'typed' }).toDict() },
    });
    RunContext.ensureTaskContext(typed);
    expect(typed.metadata.session_id).toBe('typed');
  });

  it('fromDict names the bad field', () => {
    expect(() => RunContext.fromDict('x')).toThrow(ValidationError);
    expect(() => RunContext.fromDict({ agent_chain: 'a' })).toThrow(/agent_chain/);
    expect(() => RunContext.fromDict({ permissions: { x: 'maybe' } })).toThrow(/permissions\/x/);
    expect(() => RunContext.fromDict({ budget: { max_steps: -1 } })).toThrow(/budget\/max_steps/);
    expect(() => RunContext.fromDict({ canceled: 'yes' })).toThrow(/canceled/);
    const task = createTask('hi', { metadata: { run_context: { session_id: 5 } } });
    expect(() => RunContext.ensureTaskContext(task)).toThrow(/session_id/);
  });
});

describe('RunBudget', () => {
  it('validates, combines by the stricter limit and serializes only set limits', () => {
    expect(() => new RunBudget({ maxSteps: 1.5 })).toThrow(ValidationError);
    expect(() => new RunBudget({ maxLlmCalls: -1 })).toThrow(/max_llm_calls/);
    expect(() => RunBudget.fromDict([])).toThrow(ValidationError);
    const agent = new RunBudget({ maxSteps: 10, maxLlmCalls: 5 });
    const task = RunBudget.fromDict({ max_steps: 20, max_llm_calls: 2, max_output_tokens: 100 });
    expect(agent.combine(task).toDict()).toEqual({ max_steps: 10, max_llm_calls: 2, max_output_tokens: 100 });
    expect(RunBudget.from({ max_tool_calls: 1 })?.maxToolCalls).toBe(1);
    expect(RunBudget.from({ maxToolCalls: 2 })?.maxToolCalls).toBe(2);
    expect(new RunBudget().isUnlimited).toBe(true);
  });
});
