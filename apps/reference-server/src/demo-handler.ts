/**
 * The demo agent as the transports' TaskHandler, plus one deliberately broken path that lets any
 * client see the server's stream rule at work: the stream of `unfinished <n>` yields `n` artifact
 * events and then ends without a final status, as a buggy handler would. The server finishes it
 * with one `task.error` (code INTERNAL) and one final `failed` status. Everything else is the agent.
 */
import {
  createArtifact,
  messageText,
  nowIso,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
} from '@agent/core';
import type { RunStore } from '@agent/events';
import type { Agent } from '@agent/runtime';
import { MAX_STREAM_CHUNKS } from './demo-agent.js';

const UNFINISHED = /^unfinished\s+(\d+)\s*$/i;

function unfinishedCount(task: Task): number | undefined {
  const user = [...task.messages].reverse().find((message) => message.role === 'user');
  const match = UNFINISHED.exec(user ? messageText(user).trim() : '');
  if (!match) return undefined;
  return Math.min(Number(match[1]), MAX_STREAM_CHUNKS);
}

async function* unfinishedStream(task: Task, n: number, signal: AbortSignal): AsyncIterable<TaskEvent> {
  for (let i = 1; i <= n && !signal.aborted; i++) {
    yield {
      type: 'task.artifact',
      task_id: task.id,
      artifact: createArtifact(`chunk ${i}`, { name: 'unfinished' }),
      append: false,
      last_chunk: false,
      timestamp: nowIso(),
    };
  }
}

/**
 * The agent's `runStore` rides along because a transport's server pipeline records every task in
 * its handler's run store: without it the tasks would go to a store of the pipeline's own, not the
 * configured one (SQLite, bounds), and the agent and the task API would read different stores.
 */
export function createDemoHandler(agent: Agent): TaskHandler & { readonly runStore: RunStore | null } {
  return {
    runStore: agent.runStore,
    runTask: (task: Task, ctx: CallContext) => agent.runTask(task, ctx),
    handleTask: (task: Task, ctx: CallContext) => agent.handleTask(task, ctx),
    handleTaskStreaming(task: Task, ctx: CallContext): AsyncIterable<TaskEvent> {
      const n = unfinishedCount(task);
      return n === undefined ? agent.handleTaskStreaming(task, ctx) : unfinishedStream(task, n, ctx.signal);
    },
    cancelTask: (taskId: string, reason: string | undefined, ctx: CallContext) =>
      agent.cancelTask(taskId, reason, ctx),
    getAgentCard: (ctx: CallContext) => agent.getAgentCard(ctx),
    getTask: (taskId: string, ctx: CallContext) => agent.getTask(taskId, ctx),
    listTasks: (query, ctx: CallContext) => agent.listTasks(query, ctx),
  };
}
