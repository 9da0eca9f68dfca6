import { AgentError, NotFoundError, TaskCanceledError, type Message, type Task } from '@agent/core';
import { isRecord } from '@agent/core/internal';

/**
 * The agent's answer to `sendMessage`: the last agent-role message of the returned task. A failed
 * task rethrows the typed error the runtime recorded in `metadata.error`; a canceled one throws
 * TaskCanceledError; a task without any agent message is a NotFoundError.
 */
export function agentReply(task: Task): Message {
  if (task.state === 'failed') {
    const recorded = task.metadata.error;
    throw isRecord(recorded) && typeof recorded.code === 'string'
      ? AgentError.fromJSON(recorded)
      : new AgentError('INTERNAL', `Task ${task.id} failed`, { data: { task_id: task.id } });
  }
  if (task.state === 'canceled') {
    const reason = typeof task.metadata.cancel_reason === 'string' ? `: ${task.metadata.cancel_reason}` : '';
    throw new TaskCanceledError(`Task ${task.id} was canceled${reason}`, { data: { task_id: task.id } });
  }
  const reply = [...task.messages].reverse().find((message) => message.role === 'agent');
  if (!reply) {
    throw new NotFoundError(`Task ${task.id} ended ${task.state} without an agent message`, {
      data: { task_id: task.id, state: task.state },
    });
  }
  return reply;
}
