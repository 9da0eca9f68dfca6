import {
  TaskNotCancelableError,
  TaskNotFoundError,
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
 * A small hand-written agent: `echo` replies with the text, `wait` holds the task until it is
 * canceled or released, and every call's context is recorded for assertions.
 */
export class EchoAgent implements TaskHandler {
  readonly card: AgentCard;
  readonly contexts: CallContext[] = [];
  readonly received: Task[] = [];
  private readonly waiting = new Map<string, { task: Task; release: (task: Task) => void }>();
  private readonly finished = new Set<string>();

  constructor(name: string) {
    this.card = { name, description: `${name} test agent`, url: `runtime://${name}` };
  }

  async handleTask(task: Task, ctx: CallContext): Promise<Task> {
    this.contexts.push(ctx);
    this.received.push(task);
    const text = messageText(task.messages[0]);
    if (text === 'boom') throw new Error('handler exploded');
    if (text === 'wait') {
      return new Promise<Task>((resolve) => this.waiting.set(task.id, { task, release: resolve }));
    }
    this.finished.add(task.id);
    return {
      ...task,
      state: 'completed',
      messages: [...task.messages, createMessage(`${this.card.name}: ${text}`, { role: 'agent' })],
    };
  }

  async *handleTaskStreaming(task: Task, ctx: CallContext): AsyncIterable<TaskEvent> {
    this.contexts.push(ctx);
    yield { type: 'task.status', task_id: task.id, state: 'working', final: false, timestamp: nowIso() };
    for (const word of messageText(task.messages[0]).split(' ')) {
      yield { type: 'llm.stream', task_id: task.id, delta: word, timestamp: nowIso() };
    }
    yield finalStatusEvent({ ...task, state: 'completed' });
  }

  async cancelTask(taskId: string, reason: string | undefined, ctx: CallContext): Promise<Task> {
    this.contexts.push(ctx);
    const entry = this.waiting.get(taskId);
    if (!entry) {
      if (this.finished.has(taskId)) throw new TaskNotCancelableError(`Task ${taskId} already finished`);
      throw new TaskNotFoundError(`Task ${taskId} is not active`);
    }
    this.waiting.delete(taskId);
    const canceled: Task = {
      ...entry.task,
      state: 'canceled',
      metadata: { ...entry.task.metadata, cancel_reason: reason ?? null },
    };
    entry.release(canceled);
    return canceled;
  }

  getAgentCard(ctx: CallContext): AgentCard {
    this.contexts.push(ctx);
    return this.card;
  }

  /** Resolves once a `wait` task has arrived (the handler has been entered). */
  async waitingFor(taskId: string): Promise<void> {
    while (!this.waiting.has(taskId)) await new Promise((resolve) => setImmediate(resolve));
  }
}
