import { BudgetExceededError, ValueError } from '@agent/core';
import { BudgetTracker } from './budget-tracker.js';
import { RunBudget } from './run-budget.js';
import type { RuntimeEventInput } from './run-events.js';

function tracker(
  budget: ConstructorParameters<typeof RunBudget>[0],
  options: { warningRatio?: number; now?: () => number } = {},
) {
  const events: RuntimeEventInput[] = [];
  const instance = new BudgetTracker(new RunBudget(budget), {
    ...options,
    emit: (event) => void events.push(event),
  });
  return { instance, events };
}

describe('BudgetTracker', () => {
  it('allows up to the limit, warns once at 80% and throws after budget.exceeded past it', async () => {
    const { instance, events } = tracker({ maxToolCalls: 5 });
    for (let i = 0; i < 3; i += 1) await instance.reserveToolCall();
    expect(events).toEqual([]);
    await instance.reserveToolCall();
    expect(events.map((event) => event.type)).toEqual(['budget.warning']);
    expect(events[0]).toMatchObject({ limit: 'max_tool_calls', used: 4, max: 5 });
    await instance.reserveToolCall();
    expect(events).toHaveLength(1);
    const error = await instance.reserveToolCall().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect((error as BudgetExceededError).data).toEqual({ limit: 'max_tool_calls', used: 6, max: 5 });
    expect(events.map((event) => event.type)).toEqual(['budget.warning', 'budget.exceeded']);
    // The rejected reservation was not counted.
    expect(instance.usage.tool_calls).toBe(5);
  });

  it('a limit of 0 refuses the first operation; warningRatio 0 disables warnings', async () => {
    const { instance, events } = tracker({ maxLlmCalls: 0 });
    await expect(instance.reserveLlmCall()).rejects.toThrow(BudgetExceededError);
    expect(events.map((event) => event.type)).toEqual(['budget.exceeded']);
    const quiet = tracker({ maxSteps: 1 }, { warningRatio: 0 });
    await quiet.instance.reserveStep();
    expect(quiet.events).toEqual([]);
    expect(() => new BudgetTracker(null, { warningRatio: 2 })).toThrow(ValueError);
  });

  it('counts input tokens with the estimate and reconciles with provider usage', async () => {
    const { instance, events } = tracker({ maxInputTokens: 100 });
    await instance.reserveInputTokens(60);
    instance.reconcileInputTokens(60, 30);
    expect(instance.usage.input_tokens).toBe(30);
    await instance.reserveInputTokens(70);
    expect(events.map((event) => event.type)).toEqual(['budget.warning']);
    await expect(instance.reserveInputTokens(1)).rejects.toThrow(/max_input_tokens observed 101 > limit 100/);
  });

  it('output tokens are counted after the fact and stop the run once past the limit', async () => {
    const { instance, events } = tracker({ maxOutputTokens: 10 });
    await instance.recordOutputTokens(10);
    expect(events.map((event) => event.type)).toEqual(['budget.warning']);
    await expect(instance.recordOutputTokens(1)).rejects.toThrow(BudgetExceededError);
    expect(events.map((event) => event.type)).toEqual(['budget.warning', 'budget.exceeded']);
  });

  it('max_runtime_seconds is checked on every check with a monotonic clock', async () => {
    let now = 0;
    const { instance, events } = tracker({ maxRuntimeSeconds: 10, maxSteps: 100 }, { now: () => now });
    now = 5000;
    await instance.reserveStep();
    expect(events).toEqual([]);
    now = 8000;
    await instance.check();
    expect(events.map((event) => event.type)).toEqual(['budget.warning']);
    now = 10_001;
    await expect(instance.reserveStep()).rejects.toMatchObject({
      code: 'BUDGET_EXCEEDED',
      data: { limit: 'max_runtime_seconds' },
    });
    expect(events.map((event) => event.type)).toEqual(['budget.warning', 'budget.exceeded']);
    expect(instance.usage.steps).toBe(1);
  });
});
