import { ValueError, type PermissionRule } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import type { RunAction } from './run-action.js';
import type { PermissionValue, RunContext } from './run-context.js';

/** The result of evaluating one action. `capability` and `rule` name what decided it. */
export interface PolicyDecision {
  outcome: PermissionRule;
  /** The capability whose rule decided the outcome; null when none applied (the default rule). */
  capability: string | null;
  /** The rule key that matched (`records.delete`, `records.*`), `default`, or `error`. */
  rule: string | null;
  reason: string;
}

/** Anything that can decide on an action. May be async; a throw is a `deny` (fail closed). */
export interface Policy {
  evaluate(action: RunAction, context?: RunContext | null): PolicyDecision | Promise<PolicyDecision>;
}

export interface CapabilityPolicyOptions {
  /** Outcome for capabilities no rule matches, and for actions that declare none. Default `allow`, by design. */
  defaultRule?: PermissionRule;
}

const STRENGTH: Record<PermissionRule, number> = { allow: 0, require_approval: 1, deny: 2 };

/** `deny` > `require_approval` > `allow`. */
export function strongerRule(a: PermissionRule, b: PermissionRule): PermissionRule {
  return STRENGTH[b] > STRENGTH[a] ? b : a;
}

/** The decision with the stronger outcome; on a tie the first one. */
export function strongerDecision(a: PolicyDecision, b: PolicyDecision): PolicyDecision {
  return STRENGTH[b.outcome] > STRENGTH[a.outcome] ? b : a;
}

/**
 * Reads one permission value: a rule, a boolean (true allows, false denies), or policy metadata
 * (`{rule}`, `{outcome}` or `{effect}` naming a rule). Metadata without a rule imposes nothing.
 */
export function toPermissionRule(value: PermissionValue | unknown): PermissionRule | null {
  if (value === 'allow' || value === 'deny' || value === 'require_approval') return value;
  if (value === true) return 'allow';
  if (value === false) return 'deny';
  if (isRecord(value)) {
    for (const key of ['rule', 'outcome', 'effect']) {
      const rule = toPermissionRule(value[key]);
      if (rule !== null && typeof value[key] === 'string') return rule;
    }
  }
  return null;
}

interface CompiledRule {
  key: string;
  rule: PermissionRule;
  /** Exact name, or the namespace prefix for `ns.*` (`ns.`), or '' for `*`. */
  prefix: string | null;
}

/**
 * Capability rules by exact name or namespace wildcard. `records.*` matches every capability below
 * `records` at any depth (`records.delete`, `records.a.b`), not `records` itself; `*` matches all.
 * For one capability the most specific rule decides (exact, then the longest wildcard); across the
 * action's capabilities the strongest outcome wins.
 */
export class CapabilityPolicy implements Policy {
  readonly defaultRule: PermissionRule;
  private readonly exact = new Map<string, CompiledRule>();
  private readonly wildcards: CompiledRule[] = [];

  constructor(
    rules: Readonly<Record<string, PermissionRule | boolean>> = {},
    options: CapabilityPolicyOptions = {},
  ) {
    checkOptionNames(
      'CapabilityPolicy',
      options,
      optionNames<CapabilityPolicyOptions>({ defaultRule: true }),
    );
    const defaultRule = options.defaultRule ?? 'allow';
    if (toPermissionRule(defaultRule) === null || typeof defaultRule !== 'string') {
      throw new ValueError(
        `Invalid defaultRule: ${String(defaultRule)} (expected allow, deny or require_approval)`,
      );
    }
    this.defaultRule = defaultRule;
    if (!isRecord(rules))
      throw new ValueError('CapabilityPolicy rules must be an object of capability → rule');
    for (const [key, value] of Object.entries(rules)) {
      const rule = typeof value === 'boolean' || typeof value === 'string' ? toPermissionRule(value) : null;
      if (rule === null)
        throw new ValueError(
          `Invalid rule for "${key}": ${JSON.stringify(value)} (expected allow, deny, require_approval or a boolean)`,
        );
      if (
        key === '' ||
        key.endsWith('.') ||
        (key.includes('*') && key !== '*' && (!key.endsWith('.*') || key.indexOf('*') !== key.length - 1))
      ) {
        throw new ValueError(`Invalid capability pattern: "${key}" (use an exact name, "ns.*" or "*")`);
      }
      if (key === '*') this.wildcards.push({ key, rule, prefix: '' });
      else if (key.endsWith('.*')) this.wildcards.push({ key, rule, prefix: key.slice(0, -1) });
      else this.exact.set(key, { key, rule, prefix: null });
    }
    this.wildcards.sort((a, b) => (b.prefix ?? '').length - (a.prefix ?? '').length);
  }

  /** The rule that applies to one capability, or null when none matches. */
  match(capability: string): { rule: PermissionRule; key: string } | null {
    const exact = this.exact.get(capability);
    if (exact) return { rule: exact.rule, key: exact.key };
    const wildcard = this.wildcards.find(
      (entry) => entry.prefix !== null && capability.startsWith(entry.prefix),
    );
    return wildcard ? { rule: wildcard.rule, key: wildcard.key } : null;
  }

  /** True when some rule names or covers the capability. */
  targets(capability: string): boolean {
    return this.match(capability) !== null;
  }

  evaluate(action: RunAction, _context?: RunContext | null): PolicyDecision {
    return this.evaluateCapabilities(action.capabilities);
  }

  evaluateCapabilities(capabilities: readonly string[]): PolicyDecision {
    let decision: PolicyDecision | null = null;
    for (const capability of capabilities) {
      const matched = this.match(capability);
      const next: PolicyDecision = matched
        ? {
            outcome: matched.rule,
            capability,
            rule: matched.key,
            reason: `${capability}: rule "${matched.key}" is ${matched.rule}`,
          }
        : {
            outcome: this.defaultRule,
            capability,
            rule: 'default',
            reason: `${capability}: no rule matches; default is ${this.defaultRule}`,
          };
      decision = decision ? strongerDecision(decision, next) : next;
    }
    return (
      decision ?? {
        outcome: this.defaultRule,
        capability: null,
        rule: 'default',
        reason: `no capabilities required; default is ${this.defaultRule}`,
      }
    );
  }

  /**
   * The restrictions a task's `run_context.permissions` imposes. Unmatched capabilities are
   * allowed here, because a task can only narrow the agent's policy, never widen it.
   */
  static fromPermissions(permissions: Readonly<Record<string, PermissionValue>>): CapabilityPolicy {
    const rules: Record<string, PermissionRule> = {};
    for (const [key, value] of Object.entries(permissions)) {
      const rule = toPermissionRule(value);
      if (rule !== null) rules[key] = rule;
    }
    return new CapabilityPolicy(rules, { defaultRule: 'allow' });
  }
}

/**
 * Evaluates the agent's policy and the context's permissions and keeps the most restrictive result.
 * A policy that throws (or returns something that is not a decision) yields `deny`.
 */
export async function evaluatePolicy(
  policy: Policy | null | undefined,
  action: RunAction,
  context: RunContext | null,
): Promise<PolicyDecision> {
  let decision: PolicyDecision;
  try {
    const result = policy ? await policy.evaluate(action, context) : new CapabilityPolicy().evaluate(action);
    if (
      !isRecord(result) ||
      toPermissionRule(result.outcome) === null ||
      typeof result.outcome !== 'string'
    ) {
      throw new ValueError('policy returned no valid outcome');
    }
    decision = {
      outcome: result.outcome,
      capability: typeof result.capability === 'string' ? result.capability : null,
      rule: typeof result.rule === 'string' ? result.rule : null,
      reason: typeof result.reason === 'string' ? result.reason : result.outcome,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      outcome: 'deny',
      capability: null,
      rule: 'error',
      reason: `policy evaluation failed: ${message}`,
    };
  }
  if (context && Object.keys(context.permissions).length > 0) {
    let fromContext: PolicyDecision;
    try {
      fromContext = CapabilityPolicy.fromPermissions(context.permissions).evaluateCapabilities(
        action.capabilities,
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return {
        outcome: 'deny',
        capability: null,
        rule: 'error',
        reason: `run_context.permissions are invalid: ${message}`,
      };
    }
    if (fromContext.rule !== 'default') {
      decision = strongerDecision(decision, {
        ...fromContext,
        reason: `run_context.permissions: ${fromContext.reason}`,
      });
    }
  }
  return decision;
}
