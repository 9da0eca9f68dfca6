import {
  TaskNotCancelableError,
  TaskNotFoundError,
  createMessage,
  finalStatusEvent,
  messageText,
  type AgentCard,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
} from '@agent/core';

type Behaviour = (task: Task, ctx: CallContext) => Promise<Task>;

interface Running {
  task: Task;
  finish(task: Task): void;
}

/**
 * A real TaskHandler for transport tests: echoes by default, can hold a task open until it is
 * canceled or released, and records every call it receives.
 */
export class TestHandler implements TaskHandler {
  readonly calls: Array<{ task: Task; ctx: CallContext }> = [];
  readonly cancels: Array<{ taskId: string; reason: string | undefined }> = [];
  readonly finished = new Set<string>();
  private readonly running = new Map<string, Running>();
  private readonly waiters = new Map<string, () => void>();
  behaviour: Behaviour = async (task) => echo(task);

  constructor(
    private readonly card: AgentCard = { name: 'test-agent', description: 'a test agent', url: '' },
  ) {}

  async handleTask(task: Task, ctx: CallContext): Promise<Task> {
    this.calls.push({ task, ctx });
    const result = await this.behaviour(task, ctx);
    this.finished.add(task.id);
    return result;
  }

  async *handleTaskStreaming(task: Task, ctx: CallContext): AsyncIterable<TaskEvent> {
    yield finalStatusEvent(await this.handleTask(task, ctx));
  }

  async cancelTask(taskId: string, reason: string | undefined): Promise<Task> {
    this.cancels.push({ taskId, reason });
    const running = this.running.get(taskId);
    if (!running) {
      if (this.finished.has(taskId)) throw new TaskNotCancelableError(`Task ${taskId} is already finished`);
      throw new TaskNotFoundError(`Task ${taskId} is not active`);
    }
    const canceled: Task = {
      ...running.task,
      state: 'canceled',
      metadata: { ...running.task.metadata, ...(reason === undefined ? {} : { cancel_reason: reason }) },
    };
    running.finish(canceled);
    return canceled;
  }

  getAgentCard(): AgentCard {
    return this.card;
  }

  /** Makes the next tasks stay `working` until canceled or released with {@link release}. */
  holdTasks(): void {
    this.behaviour = (task) =>
      new Promise<Task>((resolve) => {
        this.running.set(task.id, {
          task: { ...task, state: 'working' },
          finish: (done) => {
            this.running.delete(task.id);
            resolve(done);
          },
        });
        this.waiters.get(task.id)?.();
      });
  }

  /** Resolves once the task is held by {@link holdTasks}. */
  whenRunning(taskId: string): Promise<void> {
    if (this.running.has(taskId)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(taskId, resolve));
  }

  release(taskId: string): void {
    const running = this.running.get(taskId);
    running?.finish(echo(running.task));
  }
}

export function echo(task: Task): Task {
  const text = messageText(task.messages[0]);
  return {
    ...task,
    state: 'completed',
    messages: [...task.messages, createMessage(text, { role: 'agent' })],
  };
}
