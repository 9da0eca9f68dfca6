import {
  newTimeOrderedId,
  ValidationError,
  type JsonObject,
  type PermissionRule,
  type RunContextData,
  type Task,
} from '@agent/core';
import { checkOptionNames, isRecord, optionNames, snapshot, timeOrderedHex } from '@agent/core/internal';
import { RunBudget } from './run-budget.js';

export type PermissionValue = PermissionRule | boolean | JsonObject;

export interface RunContextInit {
  runId?: string;
  sessionId?: string | null;
  /** W3C trace id (32 lowercase hex); generated when absent. */
  traceId?: string;
  workspaceUri?: string | null;
  parentRunId?: string | null;
  agentChain?: readonly string[];
  permissions?: Readonly<Record<string, PermissionValue>>;
  budget?: RunBudget | null;
  canceled?: boolean;
  metadata?: JsonObject;
}

const INIT_NAMES = optionNames<RunContextInit>({
  runId: true,
  sessionId: true,
  traceId: true,
  workspaceUri: true,
  parentRunId: true,
  agentChain: true,
  permissions: true,
  budget: true,
  canceled: true,
  metadata: true,
});

export interface EnsureTaskContextOptions {
  /** Appended to `agent_chain` unless it is already the last entry. */
  agentName?: string;
  /**
   * The trace id to use when the task names no valid one (in `run_context` or the legacy
   * `metadata.trace_id`): the caller's `traceparent` trace, for a served task. Default: a new id.
   */
  traceId?: string;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const ALL_ZEROS = '0'.repeat(32);

/**
 * A new W3C trace id, 32 lowercase hex characters: the Unix time in milliseconds (6 bytes, the way
 * UUID v7 and AWS X-Ray ids begin with the time) and then 10 random bytes. The random part covers
 * the rightmost 7 bytes that W3C trace-context level 2 and samplers read; the time first makes ids
 * made together sort together, so a store's index of them grows at its end instead of at a random
 * page per run. Never all zeros.
 */
export function newTraceId(): string {
  return timeOrderedHex();
}

/**
 * The execution envelope of one run (ids, agent chain, permissions, budget), stored serialized at
 * `task.metadata.run_context`. Immutable: `child`, `cancel` and `withAgent` return new contexts, so a
 * snapshot stored in a task never changes under its reader.
 */
export class RunContext {
  readonly runId: string;
  readonly sessionId: string | null;
  readonly traceId: string;
  readonly workspaceUri: string | null;
  readonly parentRunId: string | null;
  readonly agentChain: readonly string[];
  readonly permissions: Readonly<Record<string, PermissionValue>>;
  readonly budget: RunBudget | null;
  readonly canceled: boolean;
  readonly metadata: JsonObject;

  constructor(init: RunContextInit = {}) {
    checkOptionNames('RunContext', init, INIT_NAMES);
    this.runId = init.runId ?? newTimeOrderedId();
    this.sessionId = init.sessionId ?? null;
    // A trace id that is not W3C-shaped would not map onto OpenTelemetry, so a bad one is replaced.
    this.traceId = init.traceId && TRACE_ID.test(init.traceId) ? init.traceId : newTraceId();
    this.workspaceUri = init.workspaceUri ?? null;
    this.parentRunId = init.parentRunId ?? null;
    this.agentChain = Object.freeze([...(init.agentChain ?? [])]);
    this.permissions = Object.freeze({ ...(init.permissions ?? {}) });
    this.budget = init.budget ?? null;
    this.canceled = init.canceled ?? false;
    this.metadata = { ...(init.metadata ?? {}) };
  }

  /** The agent that handles the run now: the last entry of the chain. */
  get agentName(): string | null {
    return this.agentChain.length > 0 ? this.agentChain[this.agentChain.length - 1] : null;
  }

  /** The reason stored by `cancel`, if any. */
  get cancelReason(): string | null {
    const reason = this.metadata.cancel_reason;
    return typeof reason === 'string' ? reason : null;
  }

  /**
   * A nested run: new run id, same session, trace, workspace, permissions, budget and metadata;
   * `parent_run_id` points here. With `agentName`, that agent is appended to the chain.
   */
  child(options: { agentName?: string } = {}): RunContext {
    const chain = options.agentName === undefined ? this.agentChain : [...this.agentChain, options.agentName];
    const metadata = { ...this.metadata };
    delete metadata.cancel_reason;
    return new RunContext({
      ...this.toInit(),
      runId: newTimeOrderedId(),
      parentRunId: this.runId,
      agentChain: chain,
      canceled: false,
      metadata,
    });
  }

  /** A serializable canceled snapshot: `canceled: true` and `metadata.cancel_reason`. */
  cancel(reason?: string): RunContext {
    const metadata = { ...this.metadata, cancel_reason: reason ?? this.cancelReason ?? 'canceled' };
    return new RunContext({ ...this.toInit(), canceled: true, metadata });
  }

  /** The same run with `agentName` appended to the chain (unless it is already last). */
  withAgent(agentName: string): RunContext {
    if (this.agentName === agentName) return this;
    return new RunContext({ ...this.toInit(), agentChain: [...this.agentChain, agentName] });
  }

  toDict(): RunContextData {
    return {
      run_id: this.runId,
      session_id: this.sessionId,
      trace_id: this.traceId,
      workspace_uri: this.workspaceUri,
      parent_run_id: this.parentRunId,
      agent_chain: [...this.agentChain],
      permissions: snapshot({ ...this.permissions }),
      budget: this.budget ? this.budget.toDict() : null,
      canceled: this.canceled,
      metadata: snapshot(this.metadata),
    };
  }

  toJSON(): RunContextData {
    return this.toDict();
  }

  /** Restores a context; throws ValidationError naming the bad field. Missing optional fields get defaults. */
  static fromDict(value: unknown): RunContext {
    if (!isRecord(value)) throw invalid('', 'must be an object');
    const optionalString = (key: string): string | null | undefined => {
      const field = value[key];
      if (field === undefined || field === null) return field as null | undefined;
      if (typeof field !== 'string') throw invalid(`/${key}`, 'must be a string or null');
      return field;
    };
    const runId = optionalString('run_id');
    const chain = value.agent_chain;
    if (chain !== undefined && (!Array.isArray(chain) || chain.some((entry) => typeof entry !== 'string'))) {
      throw invalid('/agent_chain', 'must be an array of strings');
    }
    const permissions = value.permissions;
    if (permissions !== undefined && permissions !== null && !isRecord(permissions))
      throw invalid('/permissions', 'must be an object');
    for (const [name, rule] of Object.entries(permissions ?? {})) {
      const ok =
        typeof rule === 'boolean' ||
        isRecord(rule) ||
        rule === 'allow' ||
        rule === 'deny' ||
        rule === 'require_approval';
      if (!ok)
        throw invalid(
          `/permissions/${name}`,
          'must be allow, deny, require_approval, a boolean or an object',
        );
    }
    if (value.canceled !== undefined && typeof value.canceled !== 'boolean')
      throw invalid('/canceled', 'must be a boolean');
    if (value.metadata !== undefined && value.metadata !== null && !isRecord(value.metadata))
      throw invalid('/metadata', 'must be an object');
    let budget: RunBudget | null;
    try {
      budget = value.budget === undefined || value.budget === null ? null : RunBudget.fromDict(value.budget);
    } catch (error) {
      if (error instanceof ValidationError)
        throw invalid(`/budget${pointerOf(error)}`, error.message.replace(/^.*?: /, ''));
      throw error;
    }
    return new RunContext({
      runId: runId ?? undefined,
      sessionId: optionalString('session_id'),
      traceId: optionalString('trace_id') ?? undefined,
      workspaceUri: optionalString('workspace_uri'),
      parentRunId: optionalString('parent_run_id'),
      agentChain: (chain as string[] | undefined) ?? [],
      permissions: (permissions as Record<string, PermissionValue> | undefined) ?? {},
      budget,
      canceled: (value.canceled as boolean | undefined) ?? false,
      metadata: (value.metadata as JsonObject | undefined) ?? {},
    });
  }

  /**
   * The task's context, created when absent and written to `task.metadata.run_context`. A legacy
   * `metadata.session_id` (and `trace_id`, `workspace_uri`) is upgraded into the typed context, and
   * `session_id` is mirrored back so older readers still find it. Mutates `task.metadata`.
   */
  static ensureTaskContext(task: Task, options: EnsureTaskContextOptions = {}): RunContext {
    if (!isRecord(task.metadata)) task.metadata = {};
    const metadata = task.metadata;
    const stored = metadata.run_context;
    let context: RunContext;
    const fallbackTraceId = options.traceId;
    if (stored instanceof RunContext) context = stored;
    else if (stored !== undefined && stored !== null) {
      context = RunContext.fromDict(stored);
      if (fallbackTraceId !== undefined && !(isRecord(stored) && isTraceId(stored.trace_id)))
        context = new RunContext({ ...context.toInit(), traceId: fallbackTraceId });
    } else {
      const legacy = (key: string): string | undefined =>
        typeof metadata[key] === 'string' ? (metadata[key] as string) : undefined;
      const legacyTrace = legacy('trace_id');
      // A fresh context starts with the agent in its chain: one construction instead of two.
      context = new RunContext({
        sessionId: legacy('session_id'),
        traceId: isTraceId(legacyTrace) ? legacyTrace : (fallbackTraceId ?? legacyTrace),
        workspaceUri: legacy('workspace_uri'),
        agentChain: options.agentName === undefined ? [] : [options.agentName],
      });
    }
    if (context.sessionId === null && typeof metadata.session_id === 'string') {
      context = new RunContext({ ...context.toInit(), sessionId: metadata.session_id });
    }
    if (options.agentName !== undefined) context = context.withAgent(options.agentName);
    metadata.run_context = context.toDict();
    if (context.sessionId !== null) metadata.session_id = context.sessionId;
    return context;
  }

  private toInit(): RunContextInit {
    return {
      runId: this.runId,
      sessionId: this.sessionId,
      traceId: this.traceId,
      workspaceUri: this.workspaceUri,
      parentRunId: this.parentRunId,
      agentChain: this.agentChain,
      permissions: this.permissions,
      budget: this.budget,
      canceled: this.canceled,
      metadata: this.metadata,
    };
  }
}

function isTraceId(value: unknown): value is string {
  return typeof value === 'string' && TRACE_ID.test(value) && value !== ALL_ZEROS;
}

function pointerOf(error: ValidationError): string {
  const data = error.data as { errors?: { pointer?: string }[] } | undefined;
  return data?.errors?.[0]?.pointer ?? '';
}

function invalid(pointer: string, message: string): ValidationError {
  return new ValidationError(`Invalid run_context: ${pointer || '/'} ${message}`, {
    data: { errors: [{ pointer: pointer || '/', message }] },
  });
}
