import {
  TaskNotFoundError,
  createArtifact,
  createMessage,
  finalStatusEvent,
  messageText,
  nowIso,
  type AgentCard,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
} from '@agent/core';

/**
 * A hand-written agent for client tests, by the first message's text: `wait` holds the task until
 * canceled, `fail <text>` fails it with an ACTION_DENIED error, `silent` completes without a reply,
 * anything else is echoed. Streaming sends one artifact per word.
 */
export class EchoAgent implements TaskHandler {
  readonly card: AgentCard = { name: 'echo', description: 'echo test agent', url: 'runtime://echo' };
  readonly received: Task[] = [];
  readonly signals: AbortSignal[] = [];
  private readonly waiting = new Map<string, { task: Task; release: (task: Task) => void }>();

  async handleTask(task: Task, ctx: CallContext): Promise<Task> {
    this.received.push(task);
    this.signals.push(ctx.signal);
    const text = messageText(task.messages.at(-1));
    if (text === 'wait') return new Promise((release) => this.waiting.set(task.id, { task, release }));
    if (text.startsWith('fail ')) {
      return {
        ...task,
        state: 'failed',
        metadata: { ...task.metadata, error: { code: 'ACTION_DENIED', message: text.slice(5) } },
      };
    }
    if (text === 'silent') return { ...task, state: 'completed' };
    const reply = createMessage(`echo: ${text}`, { role: 'agent' });
    return { ...task, state: 'completed', messages: [...task.messages, reply] };
  }

  async *handleTaskStreaming(task: Task): AsyncIterable<TaskEvent> {
    yield { type: 'task.status', task_id: task.id, state: 'working', final: false, timestamp: nowIso() };
    const artifacts = [];
    for (const word of messageText(task.messages.at(-1)).split(' ')) {
      const artifact = createArtifact(word);
      artifacts.push(artifact);
      yield {
        type: 'task.artifact',
        task_id: task.id,
        artifact,
        append: false,
        last_chunk: true,
        timestamp: nowIso(),
      };
    }
    yield finalStatusEvent({ ...task, state: 'completed', artifacts });
  }

  async cancelTask(taskId: string, reason: string | undefined): Promise<Task> {
    const entry = this.waiting.get(taskId);
    if (!entry) throw new TaskNotFoundError(`Task ${taskId} is not active`);
    this.waiting.delete(taskId);
    const canceled: Task = {
      ...entry.task,
      state: 'canceled',
      metadata: { ...entry.task.metadata, cancel_reason: reason ?? null },
    };
    entry.release(canceled);
    return canceled;
  }

  getAgentCard(): AgentCard {
    return this.card;
  }

  async waitingFor(taskId: string): Promise<void> {
    while (!this.waiting.has(taskId)) await new Promise((resolve) => setImmediate(resolve));
  }
}
