/** Realistic runtime task events for one run, as @agent/runtime emits them (events-runtime contract). */
import {
  createArtifact,
  createTask,
  textPart,
  type RunActionData,
  type RunContextData,
  type Task,
  type TaskEvent,
} from '@agent/core';

export const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImlhdCI6MTcwMDAwMDAwMH0.c2lnbmF0dXJlLWJ5dGVzLWhlcmU';

export function runContext(overrides: Partial<RunContextData> = {}): RunContextData {
  return {
    run_id: 'run-1',
    session_id: 'session-1',
    trace_id: '0af7651916cd43dd8448eb211c80319c',
    workspace_uri: null,
    parent_run_id: null,
    agent_chain: ['planner', 'writer'],
    permissions: {},
    budget: { max_input_tokens: 1000 },
    canceled: false,
    metadata: {},
    ...overrides,
  };
}

export function action(overrides: Partial<RunActionData> = {}): RunActionData {
  return {
    action_id: 'act-1',
    kind: 'tool.call',
    name: 'delete_record',
    payload: { arguments: { id: 7, api_key: 'sk-live-123' } },
    capabilities: ['records.delete'],
    artifacts: [],
    ...overrides,
  };
}

let clock = Date.parse('2026-01-01T00:00:00.000Z');
export function tick(): string {
  clock += 250;
  return new Date(clock).toISOString();
}

export interface RunScript {
  task: Task;
  context: RunContextData;
  events: TaskEvent[];
}

/** One complete run: a model call, an approved tool call, an artifact and the final status. */
export function completedRun(taskId = 'task-1', context = runContext()): RunScript {
  const task = createTask('delete record 7', { id: taskId, metadata: { run_context: context } });
  const ids = { run_id: context.run_id, agent_name: 'writer' };
  const act = action();
  const request = { request_id: 'req-1', action: act, created_at: tick() };
  const artifact = createArtifact([textPart('deleted 7')], { id: 'art-1' });
  const base = (type: string, extra: Record<string, unknown> = {}): TaskEvent =>
    ({ type, task_id: taskId, timestamp: tick(), ...ids, ...extra }) as unknown as TaskEvent;
  const manifest = {
    run_id: context.run_id,
    session_id: context.session_id,
    agent_name: 'writer',
    provider: 'scripted',
    model: 'test-model',
    system_tokens: 10,
    tool_prompt_tokens: 20,
    history_tokens: 0,
    user_tokens: 5,
    total_estimated_tokens: 35,
    context_window: 8000,
    context_items: [{ section: 'system', tokens: 10 }],
  };
  const finalTask: Task = { ...task, state: 'completed', artifacts: [artifact] };
  const events: TaskEvent[] = [
    { type: 'task.status', task_id: taskId, state: 'working', final: false, timestamp: tick() },
    base('context.prepared', { step: 1, manifest }),
    base('llm.call.started', { step: 1, span_id: 'span-llm-1', provider: 'scripted', model: 'test-model' }),
    base('llm.call.completed', {
      step: 1,
      span_id: 'span-llm-1',
      provider: 'scripted',
      model: 'test-model',
      usage: { input_tokens: 35, output_tokens: 12 },
      latency_ms: 40,
      finish_reason: 'tool_calls',
    }),
    base('action.requested', { step: 1, action_id: act.action_id, action: act }),
    base('action.policy', {
      step: 1,
      action_id: act.action_id,
      action: act,
      decision: {
        outcome: 'require_approval',
        capability: 'records.delete',
        rule: 'records.*',
        reason: 'rule',
      },
    }),
    base('approval.required', { action_id: act.action_id, request }),
    base('approval.decided', {
      action_id: act.action_id,
      request,
      decision: { request_id: 'req-1', approved: true, decided_by: 'alice' },
    }),
    base('action.started', { action_id: act.action_id, action: act, span_id: 'span-act-1' }),
    base('action.completed', {
      action_id: act.action_id,
      action: act,
      span_id: 'span-act-1',
      result: { deleted: 7 },
    }),
    base('task.progress', { progress: 0.9, message: 'almost there' }),
    { type: 'task.artifact', task_id: taskId, artifact, append: false, last_chunk: true, timestamp: tick() },
    {
      type: 'task.status',
      task_id: taskId,
      state: 'completed',
      final: true,
      timestamp: tick(),
      task: finalTask,
    },
  ];
  return { task, context, events };
}

/** A clock the test moves by hand, so ties and expiry are exact rather than timed. */
export function manualClock(start = Date.parse('2026-03-01T00:00:00.000Z')): {
  now: () => number;
  set(ms: number): void;
} {
  let current = start;
  return {
    now: () => current,
    set(ms: number) {
      current = ms;
    },
  };
}
