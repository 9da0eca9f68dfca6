import { ValidationError, ValueError, type RunBudgetData } from '@agent/core';
import { checkOptionNames, isRecord } from '@agent/core/internal';

/** The six limits a RunBudget can set, by their snake_case (wire) names. */
export const BUDGET_LIMITS = [
  'max_steps',
  'max_llm_calls',
  'max_tool_calls',
  'max_runtime_seconds',
  'max_input_tokens',
  'max_output_tokens',
] as const;
export type BudgetLimit = (typeof BUDGET_LIMITS)[number];

export interface RunBudgetInit {
  /** Inference steps per run (integer ≥ 0). */
  maxSteps?: number | null;
  /** Model calls per run (integer ≥ 0). */
  maxLlmCalls?: number | null;
  /** Tool executions per run (integer ≥ 0). */
  maxToolCalls?: number | null;
  /** Wall time of the run in seconds, measured on a monotonic clock (number ≥ 0). */
  maxRuntimeSeconds?: number | null;
  /** Input (prompt) tokens summed over the run's model calls (integer ≥ 0). */
  maxInputTokens?: number | null;
  /** Output (completion) tokens summed over the run's model calls (integer ≥ 0). */
  maxOutputTokens?: number | null;
}

const FIELDS: Record<BudgetLimit, keyof RunBudgetInit> = {
  max_steps: 'maxSteps',
  max_llm_calls: 'maxLlmCalls',
  max_tool_calls: 'maxToolCalls',
  max_runtime_seconds: 'maxRuntimeSeconds',
  max_input_tokens: 'maxInputTokens',
  max_output_tokens: 'maxOutputTokens',
};

/** Optional run limits. Immutable; `null` means unlimited. */
export class RunBudget {
  readonly maxSteps: number | null;
  readonly maxLlmCalls: number | null;
  readonly maxToolCalls: number | null;
  readonly maxRuntimeSeconds: number | null;
  readonly maxInputTokens: number | null;
  readonly maxOutputTokens: number | null;

  constructor(init: RunBudgetInit = {}) {
    checkOptionNames('RunBudget', init, Object.values(FIELDS));
    for (const limit of BUDGET_LIMITS) {
      const value = init[FIELDS[limit]];
      if (value === undefined || value === null) continue;
      const integer = limit !== 'max_runtime_seconds';
      if (
        typeof value !== 'number' ||
        !Number.isFinite(value) ||
        value < 0 ||
        (integer && !Number.isInteger(value))
      ) {
        const message = integer ? 'must be an integer ≥ 0' : 'must be a number ≥ 0';
        throw new ValidationError(`Invalid budget: /${limit} ${message}`, {
          data: { errors: [{ pointer: `/${limit}`, message }] },
        });
      }
    }
    this.maxSteps = init.maxSteps ?? null;
    this.maxLlmCalls = init.maxLlmCalls ?? null;
    this.maxToolCalls = init.maxToolCalls ?? null;
    this.maxRuntimeSeconds = init.maxRuntimeSeconds ?? null;
    this.maxInputTokens = init.maxInputTokens ?? null;
    this.maxOutputTokens = init.maxOutputTokens ?? null;
  }

  /** The limit by its wire name, or null when unlimited. */
  limit(name: BudgetLimit): number | null {
    return this[FIELDS[name]];
  }

  /** True when no limit is set. */
  get isUnlimited(): boolean {
    return BUDGET_LIMITS.every((limit) => this.limit(limit) === null);
  }

  /** The stricter of two budgets, limit by limit (an agent ceiling and a task's own budget). */
  combine(other: RunBudget | null | undefined): RunBudget {
    if (!other) return this;
    const init: RunBudgetInit = {};
    for (const limit of BUDGET_LIMITS) {
      const a = this.limit(limit);
      const b = other.limit(limit);
      init[FIELDS[limit]] = a === null ? b : b === null ? a : Math.min(a, b);
    }
    return new RunBudget(init);
  }

  /** Only the limits that are set, by their wire names. */
  toDict(): RunBudgetData {
    const data: RunBudgetData = {};
    for (const limit of BUDGET_LIMITS) {
      const value = this.limit(limit);
      if (value !== null) data[limit] = value;
    }
    return data;
  }

  toJSON(): RunBudgetData {
    return this.toDict();
  }

  /** Reads the wire form; unknown keys are ignored, bad values throw ValidationError. */
  static fromDict(value: unknown): RunBudget {
    if (!isRecord(value)) {
      throw new ValidationError('Invalid budget: / must be an object', {
        data: { errors: [{ pointer: '/', message: 'must be an object' }] },
      });
    }
    const init: RunBudgetInit = {};
    for (const limit of BUDGET_LIMITS) {
      const field = value[limit];
      if (field !== undefined && field !== null) init[FIELDS[limit]] = field as number;
    }
    return new RunBudget(init);
  }

  /** Accepts a RunBudget, its camelCase init or its snake_case wire form. */
  static from(value: RunBudget | RunBudgetInit | RunBudgetData | null | undefined): RunBudget | null {
    if (value === null || value === undefined) return null;
    if (value instanceof RunBudget) return value;
    // A misspelt limit would otherwise leave that limit unlimited without a word.
    checkOptionNames('budget', value, [...BUDGET_LIMITS, ...Object.values(FIELDS)]);
    const keys = Object.keys(value);
    const wire = keys.filter((key) => (BUDGET_LIMITS as readonly string[]).includes(key));
    if (wire.length > 0 && wire.length < keys.length)
      throw new ValueError(`budget mixes snake_case and camelCase limits: ${keys.join(', ')}`);
    if (wire.length > 0) return RunBudget.fromDict(value);
    return new RunBudget(value as RunBudgetInit);
  }
}
