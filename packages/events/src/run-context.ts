/**
 * Reading correlation ids out of a run context without importing the runtime: events take core's
 * `RunContextData` or anything with `toDict()` (the runtime's RunContext class).
 */
import { type RunContextData } from '@agent/core';
import { isRecord } from '@agent/core/internal';

/** A serialized run context, or an object that serializes to one. */
export type RunContextInput = RunContextData | { toDict(): RunContextData };

/** The correlation ids events, reports, stores and spans share. */
export interface RunIds {
  run_id: string | null;
  session_id: string | null;
  trace_id: string | null;
  /** Last entry of `agent_chain`: the agent currently handling the run. */
  agent_name: string | null;
}

export const EMPTY_RUN_IDS: RunIds = Object.freeze({
  run_id: null,
  session_id: null,
  trace_id: null,
  agent_name: null,
});

/** The plain record behind a context input; `null` when there is none or it is not an object. */
export function contextData(context: RunContextInput | null | undefined): Record<string, unknown> | null {
  if (context === null || context === undefined) return null;
  const maybe = context as { toDict?: unknown };
  const data: unknown =
    typeof maybe.toDict === 'function' ? (maybe.toDict as () => unknown).call(context) : context;
  return isRecord(data) ? data : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Reads ids from a serialized run context, tolerating partial or foreign shapes. */
export function runIdsOf(context: RunContextInput | Record<string, unknown> | null | undefined): RunIds {
  const data = contextData(context as RunContextInput | null | undefined);
  if (!data) return EMPTY_RUN_IDS;
  const chain = Array.isArray(data.agent_chain) ? data.agent_chain : [];
  const last: unknown = chain.length > 0 ? chain[chain.length - 1] : undefined;
  return {
    run_id: str(data.run_id),
    session_id: str(data.session_id),
    trace_id: str(data.trace_id),
    agent_name: str(last),
  };
}

/**
 * Ids of a task's `metadata.run_context`, falling back to the legacy `metadata.session_id` key,
 * which stays readable for backward compatibility (it is upgraded to a typed RunContext).
 */
export function runIdsOfTask(task: unknown): RunIds {
  if (!isRecord(task) || !isRecord(task.metadata)) return EMPTY_RUN_IDS;
  const ids = runIdsOf(isRecord(task.metadata.run_context) ? task.metadata.run_context : null);
  return ids.session_id === null &&
    typeof task.metadata.session_id === 'string' &&
    task.metadata.session_id !== ''
    ? { ...ids, session_id: task.metadata.session_id }
    : ids;
}

/** First non-null value of each field, in priority order. */
export function mergeRunIds(...sources: RunIds[]): RunIds {
  const pick = (key: keyof RunIds): string | null => {
    for (const source of sources) if (source[key] !== null) return source[key];
    return null;
  };
  return {
    run_id: pick('run_id'),
    session_id: pick('session_id'),
    trace_id: pick('trace_id'),
    agent_name: pick('agent_name'),
  };
}
