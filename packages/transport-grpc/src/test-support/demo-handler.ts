import {
  createArtifact,
  createMessage,
  finalStatusEvent,
  messageText,
  nowIso,
  TaskNotCancelableError,
  TaskNotFoundError,
  textPart,
  ValueError,
  type AgentCard,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
} from '@agent/core';

/**
 * A small TaskHandler driven by the first message's text, like the reference server's demo agent:
 * `echo <text>`, `sleep <ms>` (cancellable), `stream <n>`, `fail <text>`, `throw <text>` (handler error).
 */
export class DemoHandler implements TaskHandler {
  readonly contexts: CallContext[] = [];
  private readonly active = new Map<string, { controller: AbortController; task: Task }>();
  private readonly finished = new Set<string>();
  /** Resolves each time a streaming call has started its work (after authentication). */
  readonly streamStarted: Array<(taskId: string) => void> = [];

  constructor(private readonly card: AgentCard = { name: 'demo', description: 'demo agent', url: '' }) {}

  get activeTaskIds(): string[] {
    return [...this.active.keys()];
  }

  async handleTask(task: Task, ctx: CallContext): Promise<Task> {
    const events: TaskEvent[] = [];
    for await (const event of this.handleTaskStreaming(task, ctx)) events.push(event);
    const final = events[events.length - 1];
    if (!final || final.type !== 'task.status' || !final.task) throw new ValueError('no final status');
    return final.task;
  }

  async *handleTaskStreaming(input: Task, ctx: CallContext): AsyncIterable<TaskEvent> {
    this.contexts.push(ctx);
    const task: Task = structuredClone(input);
    const [command = '', ...rest] = (task.messages[0] ? messageText(task.messages[0]) : '').split(' ');
    const argument = rest.join(' ');
    if (command === 'throw') throw new ValueError(argument || 'bad input');
    const controller = new AbortController();
    this.active.set(task.id, { controller, task });
    for (const notify of this.streamStarted.splice(0)) notify(task.id);
    try {
      task.state = 'working';
      yield { type: 'task.status', task_id: task.id, state: 'working', final: false, timestamp: nowIso() };
      if (command === 'echo') {
        task.messages.push(createMessage(argument, { role: 'agent' }));
        task.artifacts.push(createArtifact([textPart(argument)]));
        task.state = 'completed';
      } else if (command === 'stream') {
        for (let index = 0; index < Number(argument); index += 1) {
          const artifact = createArtifact([textPart(`chunk ${index}`)], { metadata: { index } });
          task.artifacts.push(artifact);
          yield {
            type: 'task.artifact',
            task_id: task.id,
            artifact,
            append: false,
            last_chunk: index === Number(argument) - 1,
            timestamp: nowIso(),
          };
          yield {
            type: 'task.progress',
            task_id: task.id,
            timestamp: nowIso(),
            step: index,
            run_id: 'run-1',
          };
        }
        task.state = 'completed';
      } else if (command === 'sleep') {
        const canceled = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), Number(argument));
          controller.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
        task.state = canceled ? 'canceled' : 'completed';
        if (canceled) task.metadata.cancel_reason = String(controller.signal.reason ?? '');
      } else if (command === 'fail') {
        task.state = 'failed';
        task.metadata.error = { code: 'INTERNAL', message: argument };
        yield {
          type: 'task.error',
          task_id: task.id,
          timestamp: nowIso(),
          error: { code: 'INTERNAL', message: argument },
        };
      } else {
        task.state = 'completed';
      }
      yield finalStatusEvent(task);
    } finally {
      this.active.delete(task.id);
      this.finished.add(task.id);
    }
  }

  async cancelTask(taskId: string, reason: string | undefined, ctx: CallContext): Promise<Task> {
    this.contexts.push(ctx);
    const entry = this.active.get(taskId);
    if (!entry) {
      if (this.finished.has(taskId)) throw new TaskNotCancelableError(`Task ${taskId} is finished`);
      throw new TaskNotFoundError(`Task ${taskId} is not active`);
    }
    entry.controller.abort(reason ?? '');
    return {
      ...structuredClone(entry.task),
      state: 'canceled',
      metadata: { ...entry.task.metadata, cancel_reason: reason ?? '' },
    };
  }

  getAgentCard(ctx: CallContext): AgentCard {
    this.contexts.push(ctx);
    return this.card;
  }

  /** Ends every task still running (a test's cleanup: no timer outlives it). */
  cancelAll(): void {
    for (const entry of this.active.values()) entry.controller.abort('test cleanup');
  }

  /** The next streaming call's task id, once its handler runs. */
  nextStream(): Promise<string> {
    return new Promise((resolve) => this.streamStarted.push(resolve));
  }
}
