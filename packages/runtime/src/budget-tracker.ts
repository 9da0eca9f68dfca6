import { performance } from 'node:perf_hooks';
import { BudgetExceededError, ValueError } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import type { RuntimeEventInput } from './run-events.js';
import { RunBudget, type BudgetLimit } from './run-budget.js';

/** Usage of one run, by the budget's wire names. */
export interface BudgetUsage {
  steps: number;
  llm_calls: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  runtime_seconds: number;
}

export interface BudgetTrackerOptions {
  /** Fraction of a limit at which `budget.warning` fires (once per limit). Default 0.8; 0 disables warnings. */
  warningRatio?: number;
  /** Receives `budget.warning` / `budget.exceeded` events; awaited so a bounded stream can push back. */
  emit?: (event: RuntimeEventInput) => void | Promise<void>;
  /** Monotonic clock in milliseconds. Default `performance.now`. */
  now?: () => number;
}

const OPTION_NAMES = optionNames<BudgetTrackerOptions>({ warningRatio: true, emit: true, now: true });

type Counter = 'steps' | 'llm_calls' | 'tool_calls' | 'input_tokens' | 'output_tokens';

/**
 * Enforces a RunBudget at its check points: `max_steps` before each inference step, `max_llm_calls`
 * and `max_input_tokens` (the ContextManifest's estimate) before a model call, `max_tool_calls`
 * before a tool executes, `max_output_tokens` once usage or an estimate exists, and
 * `max_runtime_seconds` at every one of them. Each `reserve*` call is made before the protected
 * operation and counts it at once, so operations started together cannot all pass one check; a
 * reservation that would go over the limit emits `budget.exceeded` and throws BudgetExceededError
 * without counting. Equality with a limit is allowed; going past it is not.
 */
export class BudgetTracker {
  readonly budget: RunBudget;
  private readonly warningRatio: number;
  private readonly emit: (event: RuntimeEventInput) => void | Promise<void>;
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly counters: Record<Counter, number> = {
    steps: 0,
    llm_calls: 0,
    tool_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
  };
  private readonly warned = new Set<BudgetLimit>();

  constructor(budget: RunBudget | null | undefined, options: BudgetTrackerOptions = {}) {
    checkOptionNames('BudgetTracker', options, OPTION_NAMES);
    const ratio = options.warningRatio ?? 0.8;
    if (typeof ratio !== 'number' || !(ratio >= 0 && ratio <= 1))
      throw new ValueError('warningRatio must be a number between 0 and 1');
    this.budget = budget ?? new RunBudget();
    this.warningRatio = ratio;
    this.emit = options.emit ?? (() => undefined);
    this.now = options.now ?? (() => performance.now());
    this.startedAt = this.now();
  }

  get usage(): BudgetUsage {
    return { ...this.counters, runtime_seconds: (this.now() - this.startedAt) / 1000 };
  }

  /** `max_runtime_seconds`, checked by every other check as well. */
  async check(): Promise<void> {
    const max = this.budget.maxRuntimeSeconds;
    if (max === null) return;
    const elapsed = (this.now() - this.startedAt) / 1000;
    if (elapsed > max) await this.exceeded('max_runtime_seconds', elapsed, max);
    await this.maybeWarn('max_runtime_seconds', elapsed, max);
  }

  /** Before each inference step begins. */
  reserveStep(): Promise<void> {
    return this.reserve('max_steps', 'steps', 1);
  }

  /** Before a model call starts. */
  reserveLlmCall(): Promise<void> {
    return this.reserve('max_llm_calls', 'llm_calls', 1);
  }

  /** Before a tool executes. */
  reserveToolCall(): Promise<void> {
    return this.reserve('max_tool_calls', 'tool_calls', 1);
  }

  /** Before a model call, with the ContextManifest's estimate of the prompt. */
  reserveInputTokens(estimate: number): Promise<void> {
    return this.reserve('max_input_tokens', 'input_tokens', Math.max(0, Math.round(estimate)));
  }

  /** After the call: replaces the pre-call estimate with what the provider reported. */
  reconcileInputTokens(estimate: number, actual: number): void {
    this.counters.input_tokens = Math.max(
      0,
      this.counters.input_tokens - Math.round(estimate) + Math.round(actual),
    );
  }

  /**
   * After provider usage (or a local estimate) exists. The tokens are already spent, so they are
   * counted; going past the limit then stops the run before anything else happens.
   */
  async recordOutputTokens(tokens: number): Promise<void> {
    this.counters.output_tokens += Math.max(0, Math.round(tokens));
    const max = this.budget.maxOutputTokens;
    await this.check();
    if (max === null) return;
    if (this.counters.output_tokens > max)
      await this.exceeded('max_output_tokens', this.counters.output_tokens, max);
    await this.maybeWarn('max_output_tokens', this.counters.output_tokens, max);
  }

  private async reserve(limit: BudgetLimit, counter: Counter, amount: number): Promise<void> {
    await this.check();
    const max = this.budget.limit(limit);
    const observed = this.counters[counter] + amount;
    if (max !== null && observed > max) await this.exceeded(limit, observed, max);
    this.counters[counter] = observed;
    if (max !== null) await this.maybeWarn(limit, observed, max);
  }

  private async maybeWarn(limit: BudgetLimit, used: number, max: number): Promise<void> {
    if (this.warningRatio === 0 || this.warned.has(limit) || used < max * this.warningRatio) return;
    this.warned.add(limit);
    await this.emit({
      type: 'budget.warning',
      limit,
      used,
      max,
      usage: { ...this.usage },
      summary: `Run budget warning: ${limit} observed ${used} near limit ${max}`,
    });
  }

  private async exceeded(limit: BudgetLimit, used: number, max: number): Promise<never> {
    const message = `Run budget exceeded: ${limit} observed ${used} > limit ${max}`;
    await this.emit({
      type: 'budget.exceeded',
      limit,
      used,
      max,
      usage: { ...this.usage },
      summary: message,
    });
    throw new BudgetExceededError(message, { data: { limit, used, max } });
  }
}
