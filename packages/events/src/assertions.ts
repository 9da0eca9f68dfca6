/**
 * Assertion helpers for tests of agents: they read events or a report and throw an
 * AssertionError (node:assert's, which every test runner shows with expected and actual).
 */
import { AssertionError } from 'node:assert';
import { ValueError } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { isRunEventType, type RunEvent, type RunEventType } from './run-event.js';
import { RunReport } from './run-report.js';
import { RunReplay } from './run-replay.js';

/** How `assertRunEvents` compares: every type somewhere, the exact list, or in order with gaps. */
export type RunEventsMatchMode = 'present' | 'exact' | 'subsequence';

export interface AssertRunEventsOptions {
  /** Default `'subsequence'`. */
  mode?: RunEventsMatchMode;
}

/** What the assertions read: a run's events, its report, or a replay of it. */
export type RunEventSource = RunReport | RunReplay | readonly RunEvent[];

function typesOf(source: RunEventSource): RunEventType[] {
  if (source instanceof RunReplay) return source.eventTypes;
  if (source instanceof RunReport) return new RunReplay(source).eventTypes;
  if (Array.isArray(source)) return (source as readonly RunEvent[]).map((event) => event.type);
  throw new ValueError('Expected RunEvents, a RunReport or a RunReplay');
}

function eventsOf(source: RunEventSource): RunEvent[] {
  if (source instanceof RunReplay) return [...source.iterEvents()];
  if (source instanceof RunReport) return source.events;
  if (Array.isArray(source)) return [...(source as readonly RunEvent[])];
  throw new ValueError('Expected RunEvents, a RunReport or a RunReplay');
}

function fail(message: string, expected: unknown, actual: unknown, operator: string): never {
  throw new AssertionError({ message, expected, actual, operator });
}

const list = (types: readonly string[]): string => `[${types.join(', ')}]`;

/**
 * Checks the event types of a run.
 * - `present`: each expected type occurs at least once (as often as it is listed);
 * - `exact`: the types are exactly this list;
 * - `subsequence` (default): the expected types occur in this order, other events may sit between.
 * @throws AssertionError showing expected and actual types; ValueError for an unknown type or mode.
 */
export function assertRunEvents(
  source: RunEventSource,
  types: readonly RunEventType[],
  options: AssertRunEventsOptions = {},
): void {
  checkOptionNames('assertRunEvents', options, optionNames<AssertRunEventsOptions>({ mode: true }));
  const mode = options.mode ?? 'subsequence';
  if (!['present', 'exact', 'subsequence'].includes(mode))
    throw new ValueError(`Unknown assertRunEvents mode ${JSON.stringify(mode)}`);
  for (const type of types)
    if (!isRunEventType(type)) throw new ValueError(`Unknown RunEvent type ${JSON.stringify(type)}`);
  const actual = typesOf(source);
  if (mode === 'exact') {
    const same = actual.length === types.length && actual.every((type, i) => type === types[i]);
    if (!same) {
      const at = actual.findIndex((type, i) => type !== types[i]);
      const index = at === -1 ? Math.min(actual.length, types.length) : at;
      fail(
        `Run events differ at index ${index}:\n  expected ${list(types)}\n  actual   ${list(actual)}`,
        [...types],
        actual,
        'exact',
      );
    }
    return;
  }
  if (mode === 'present') {
    const remaining = [...actual];
    const missing: string[] = [];
    for (const type of types) {
      const index = remaining.indexOf(type);
      if (index === -1) missing.push(type);
      else remaining.splice(index, 1);
    }
    if (missing.length > 0) {
      fail(
        `Run events are missing ${list(missing)}:\n  expected ${list(types)} present\n  actual   ${list(actual)}`,
        [...types],
        actual,
        'present',
      );
    }
    return;
  }
  let next = 0;
  for (const type of actual) if (next < types.length && type === types[next]) next += 1;
  if (next < types.length) {
    fail(
      `Run events do not contain the expected order; matched ${list(types.slice(0, next))}, then no ${types[next]}:\n  expected ${list(types)} in order\n  actual   ${list(actual)}`,
      [...types],
      actual,
      'subsequence',
    );
  }
}

/**
 * Fails when any action was denied: by policy (`action.denied`), by an approver
 * (`approval.decided` with `approved: false`) or with a policy `deny` outcome.
 * @throws AssertionError listing each denied action.
 */
export function assertNoDeniedActions(source: RunEventSource): void {
  const denied: string[] = [];
  for (const event of eventsOf(source)) {
    const payload = event.payload as Record<string, unknown>;
    const action = (payload.action ?? (payload.request as Record<string, unknown> | undefined)?.action) as
      { name?: unknown } | undefined;
    const name = typeof action?.name === 'string' ? action.name : '?';
    const decision = payload.decision as { approved?: unknown; outcome?: unknown } | undefined;
    const isDenied =
      event.type === 'action.denied' ||
      (event.type === 'approval.decided' && decision?.approved === false) ||
      (event.type === 'action.policy' && decision?.outcome === 'deny');
    if (isDenied)
      denied.push(`${event.type} ${name} (action_id ${event.action_id ?? '?'}, sequence ${event.sequence})`);
  }
  if (denied.length > 0) {
    fail(
      `Expected no denied actions, found ${denied.length}:\n  ${denied.join('\n  ')}`,
      [],
      denied,
      'noDeniedActions',
    );
  }
}

export interface BudgetLimits {
  /** Most input tokens over all model calls. */
  maxInputTokens?: number;
  /** Most output tokens over all model calls. */
  maxOutputTokens?: number;
  /** Most wall-clock seconds from the first to the last event. */
  maxRuntimeSeconds?: number;
}

/**
 * Fails when the report used more than a limit; a value equal to the limit passes.
 * @throws AssertionError listing every limit exceeded with used vs allowed; ValueError for a bad limit.
 */
export function assertBudgetUnder(report: RunReport, limits: BudgetLimits): void {
  if (!(report instanceof RunReport)) throw new ValueError('assertBudgetUnder needs a RunReport');
  const metrics = report.llmMetrics;
  const checks: [keyof BudgetLimits, number][] = [
    ['maxInputTokens', metrics.input_tokens],
    ['maxOutputTokens', metrics.output_tokens],
    ['maxRuntimeSeconds', report.durationSeconds],
  ];
  const over: string[] = [];
  const expected: Record<string, number> = {};
  const actual: Record<string, number> = {};
  for (const [name, used] of checks) {
    const limit = limits[name];
    if (limit === undefined) continue;
    if (typeof limit !== 'number' || !Number.isFinite(limit) || limit < 0)
      throw new ValueError(`${name} must be a non-negative number`);
    expected[name] = limit;
    actual[name] = used;
    if (used > limit) over.push(`${name}: used ${used}, allowed ${limit}`);
  }
  if (Object.keys(expected).length === 0) throw new ValueError('assertBudgetUnder needs at least one limit');
  if (over.length > 0)
    fail(`Run exceeded its budget:\n  ${over.join('\n  ')}`, expected, actual, 'budgetUnder');
}
