import {
  ActionDeniedError,
  AgentError,
  ApprovalRequiredError,
  TaskCanceledError,
  type JsonObject,
} from '@agent/core';
import { raceAbort } from '@agent/core/internal';
import type { ApprovalStore, TaskOwner } from '@agent/events';
import type { TaskTrace } from '@agent/events/internal';
import {
  createApprovalRequest,
  decisionOfRecord,
  normalizeDecision,
  type ApprovalHandler,
  type ApprovalRequest,
} from './approvals.js';
import type { BudgetTracker } from './budget-tracker.js';
import { abortError, type CancellationToken } from './cancellation.js';
import { evaluatePolicy, type Policy, type PolicyDecision } from './capability-policy.js';
import { traced } from './error-type.js';
import type { RunAction } from './run-action.js';
import type { RunContext } from './run-context.js';
import type { EmitFunction } from './run-events.js';
import type { RegisteredTool } from './tools.js';

/** Everything the authorization flow needs from its run. */
export interface ActionScope {
  policy: Policy | null;
  approvalHandler: ApprovalHandler | null;
  context: RunContext | null;
  token: CancellationToken;
  emit: EmitFunction;
  /** Present inside a task: counts tool calls against `max_tool_calls`. */
  tracker?: BudgetTracker | null;
  /** Extra ids for every event of the action (e.g. `delegation_id`). */
  eventFields?: JsonObject;
  /** Present inside a task whose agent has an approval store: where approvals wait without a handler. */
  durableApprovals?: DurableApprovals | null;
  /** Present inside a task: each tool execution gets an `execute_tool` span under the task's. */
  trace?: TaskTrace | null;
}

/** Where a run files its approval requests and waits for a reviewer (the Agent's `approvalStore`). */
export interface DurableApprovals {
  store: ApprovalStore;
  /** The task's owner: only its tenant and principal see and decide the request. */
  owner: TaskOwner;
  taskId: string;
  /** A failure that must not change the run's outcome (withdrawing a request it stopped waiting for). */
  reportError(error: unknown): void;
}

/**
 * The action authorization flow for a prepared action: `action.requested`, policy
 * (`action.policy`), then allow, deny (`action.denied` + ActionDeniedError) or approval
 * (`approval.required`, the handler, `approval.decided`). Resolves only when the action may run;
 * nothing has been performed when it rejects.
 */
export async function authorizeAction(action: RunAction, scope: ActionScope): Promise<PolicyDecision> {
  const ids = { action_id: action.actionId, ...scope.eventFields };
  const actionData = action.toDict();
  await scope.emit({
    type: 'action.requested',
    ...ids,
    action: actionData,
    summary: `${action.kind} ${action.name} requested`,
  });
  scope.token.raiseIfCancelled();
  const decision = await raceAbort(
    evaluatePolicy(scope.policy, action, scope.context),
    scope.token.signal,
    abortError,
  );
  await scope.emit({
    type: 'action.policy',
    ...ids,
    action: actionData,
    decision: { ...decision },
    summary: `policy: ${decision.outcome}`,
  });
  scope.token.raiseIfCancelled();
  if (decision.outcome === 'deny') {
    throw await denied(action, scope, `Action "${action.name}" denied: ${decision.reason}`, {
      decision: { ...decision },
    });
  }
  if (decision.outcome === 'require_approval') {
    let request = createApprovalRequest(action);
    const durable = scope.approvalHandler ? null : (scope.durableApprovals ?? null);
    let answer: unknown;
    if (durable) {
      // The handler in process wins when both are set: the store is for runs nobody here can decide.
      ({ request, answer } = await awaitDurableDecision(durable, request, scope, {
        ...ids,
        action: actionData,
      }));
    } else {
      await scope.emit({
        type: 'approval.required',
        ...ids,
        action: actionData,
        request,
        summary: `approval required for ${action.name}`,
      });
      if (!scope.approvalHandler) throw ApprovalRequiredError.forRequest(request);
      const handler = scope.approvalHandler;
      const asked = request;
      try {
        answer = await raceAbort(
          Promise.resolve().then(() =>
            handler(structuredClone(asked), { signal: scope.token.signal, context: scope.context }),
          ),
          scope.token.signal,
          abortError,
        );
      } catch (error) {
        if (scope.token.isCancelled || error instanceof TaskCanceledError) throw error;
        // An approver that crashes has not approved: fail closed.
        const message = error instanceof Error ? error.message : String(error);
        throw await denied(
          action,
          scope,
          `Action "${action.name}" denied: approval handler failed: ${message}`,
          {
            decision: { ...decision },
          },
        );
      }
    }
    const { decision: approval, approved, reason } = normalizeDecision(request, answer);
    await scope.emit({
      type: 'approval.decided',
      ...ids,
      action: actionData,
      request,
      decision: approval,
      summary: reason,
    });
    if (!approved) {
      throw await denied(action, scope, `Action "${action.name}" denied: ${reason}`, {
        decision: { ...decision },
        approval,
      });
    }
    // A cancel that arrived while a human was deciding wins over the approval.
    scope.token.raiseIfCancelled();
  }
  return decision;
}

/**
 * Files the request in the store, announces it (`approval.required`, its request carrying the
 * `action_hash` a reviewer decides with) and parks until a reviewer decides it. A run that stops
 * waiting (canceled, or the store failed) withdraws the request, so nobody approves an action no
 * run will perform. Resolves with the request as announced and the decision in the shape an
 * approval handler returns.
 */
async function awaitDurableDecision(
  durable: DurableApprovals,
  request: ApprovalRequest,
  scope: ActionScope,
  fields: JsonObject,
): Promise<{ request: ApprovalRequest & { action_hash: string }; answer: unknown }> {
  const { store, owner, taskId } = durable;
  scope.token.raiseIfCancelled();
  const record = await store.createApproval(owner, request, { taskId });
  const announced = { ...request, action_hash: record.action_hash };
  try {
    await scope.emit({
      type: 'approval.required',
      ...fields,
      request: announced,
      summary: `approval required for ${request.action.name}`,
    });
    scope.token.raiseIfCancelled();
    const decided = await raceAbort(
      store.waitForDecision(owner, request.request_id, scope.token.signal),
      scope.token.signal,
      abortError,
    );
    return { request: announced, answer: decisionOfRecord(decided) };
  } catch (error) {
    const reason = scope.token.isCancelled ? (scope.token.reason ?? 'canceled') : 'the run stopped waiting';
    try {
      await store.withdrawApproval(owner, request.request_id, reason);
    } catch (withdrawError) {
      durable.reportError(withdrawError);
    }
    throw error;
  }
}

async function denied(
  action: RunAction,
  scope: ActionScope,
  message: string,
  data: JsonObject,
): Promise<ActionDeniedError> {
  const error = new ActionDeniedError(message, { data: { action_id: action.actionId, ...data } });
  await scope.emit({
    type: 'action.denied',
    action_id: action.actionId,
    ...scope.eventFields,
    action: action.toDict(),
    error: error.toJSON(),
    summary: message,
  });
  return error;
}

/**
 * Runs a prepared, authorized side effect with `action.started` / `action.completed` /
 * `action.failed`, checking the cancel token before it starts and after it returns. A
 * cancellation is not an action failure: it propagates without `action.failed`.
 */
export async function performAction<T>(
  action: RunAction,
  scope: ActionScope,
  work: (signal: AbortSignal) => Promise<T>,
  describeResult: (result: T) => unknown = toJsonResult,
): Promise<T> {
  const ids = { action_id: action.actionId, ...scope.eventFields };
  scope.token.raiseIfCancelled();
  await scope.emit({
    type: 'action.started',
    ...ids,
    action: action.toDict(),
    summary: `${action.name} started`,
  });
  // Checkpoint: nothing runs for a task canceled while `action.started` was delivered.
  scope.token.raiseIfCancelled();
  let result: T;
  try {
    result = await raceAbort(work(scope.token.signal), scope.token.signal, abortError);
  } catch (error) {
    if (scope.token.isCancelled || error instanceof TaskCanceledError) throw error;
    const failure = AgentError.from(error);
    await scope.emit({
      type: 'action.failed',
      ...ids,
      action: action.toDict(),
      error: failure.toJSON(),
      summary: `${action.name} failed: ${failure.message}`,
    });
    throw error;
  }
  scope.token.raiseIfCancelled();
  await scope.emit({
    type: 'action.completed',
    ...ids,
    action: action.toDict(),
    result: toJsonResult(describeResult(result)),
    summary: `${action.name} completed`,
  });
  return result;
}

/**
 * A tool call end to end: arguments validated, action prepared (builder + declared capabilities),
 * authorized, arguments validated again, tool budget reserved, then executed.
 */
export function runTool(tool: RegisteredTool, rawArgs: unknown, scope: ActionScope): Promise<unknown> {
  if (!scope.trace) return executeTool(tool, rawArgs, scope);
  const callId = scope.eventFields?.tool_call_id;
  const span = scope.trace.tool(tool.definition.name, typeof callId === 'string' ? callId : undefined);
  return traced(span, () => executeTool(tool, rawArgs, scope));
}

async function executeTool(tool: RegisteredTool, rawArgs: unknown, scope: ActionScope): Promise<unknown> {
  scope.token.raiseIfCancelled();
  const args = tool.validate(rawArgs);
  // The handler gets its own copy, so nothing done to the arguments during approval can reach it.
  const frozenArgs = structuredClone(args);
  const action = await raceAbort(
    tool.buildAction(structuredClone(args), scope.context),
    scope.token.signal,
    abortError,
  );
  await authorizeAction(action, scope);
  const checked = tool.validate(frozenArgs);
  if (scope.tracker) await scope.tracker.reserveToolCall();
  return performAction(action, scope, async (signal) =>
    tool.definition.handler(checked, {
      context: scope.context,
      action,
      signal,
      token: scope.token,
      emit: (event) => scope.emit({ action_id: action.actionId, ...event }),
    }),
  );
}

/** Tool results travel in events and stores: keep them JSON (undefined becomes null). */
export function toJsonResult(value: unknown): unknown {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return String(value);
  }
}
