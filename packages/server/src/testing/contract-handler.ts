import {
  createArtifact,
  createMessage,
  messageText,
  nowIso,
  TaskNotFoundError,
  type AgentCard,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
  type TaskStatusEvent,
} from '@agent/core';

/** What a handler that leaks its internals would put in an error message. */
export const SECRET_MESSAGE = 'db password rejected by 10.0.0.5:5432';

interface Running {
  task: Task;
  finish(reason: string): Task;
}

/**
 * The contract suite's handler, driven by the first word of the first message:
 * `echo <text>`, `ticks <n>` (streams `n` artifacts 10 ms apart, then completes), `echo-tenant` (answers `String(ctx.tenant)`, so a missing tenant reads
 * `undefined`), `throw` (a plain Error carrying {@link SECRET_MESSAGE}), `throw-later` (streams one
 * event first), `missing` (an AgentError of its own), `unfinished` (a stream that ends without a
 * final status), `wait <ms>` and `hold` (runs until canceled; both honour the call's signal).
 * Every call is recorded, so a case can assert that the handler was never reached.
 */
export class ContractHandler implements TaskHandler {
  readonly calls: string[] = [];
  private readonly running = new Map<string, Running>();
  private readonly waiters = new Map<string, (() => void)[]>();

  constructor(private readonly card: AgentCard = contractCard()) {}

  /** Resolves once a task with this id is running (a stop or a cancel can then find it). */
  whenRunning(taskId: string): Promise<void> {
    if (this.running.has(taskId)) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.waiters.get(taskId) ?? [];
      list.push(resolve);
      this.waiters.set(taskId, list);
    });
  }

  async handleTask(task: Task, ctx: CallContext): Promise<Task> {
    this.calls.push('handleTask');
    const [command, text] = split(task);
    switch (command) {
      case 'throw':
      case 'throw-later':
        throw new Error(SECRET_MESSAGE);
      case 'missing':
        throw new TaskNotFoundError('No task named missing');
      case 'wait':
      case 'hold':
        return this.run(task, ctx, command === 'wait' ? Number(text) : undefined);
      case 'ticks':
        await delay(10 * Number(text));
        return completed(task, `ticked ${text}`);
      case 'echo-tenant':
        return completed(task, String(ctx.tenant));
      default:
        return completed(task, text);
    }
  }

  async *handleTaskStreaming(task: Task, ctx: CallContext): AsyncGenerator<TaskEvent> {
    this.calls.push('handleTaskStreaming');
    const [command, text] = split(task);
    if (command === 'throw') throw new Error(SECRET_MESSAGE);
    yield status(task, 'working', false);
    switch (command) {
      case 'throw-later':
        throw new Error(SECRET_MESSAGE);
      case 'unfinished':
        yield {
          type: 'task.artifact',
          task_id: task.id,
          artifact: createArtifact('partial'),
          append: false,
          last_chunk: true,
          timestamp: nowIso(),
        };
        return;
      case 'ticks': {
        for (let i = 1; i <= Number(text); i++) {
          await delay(10);
          yield {
            type: 'task.artifact',
            task_id: task.id,
            artifact: createArtifact(`tick ${i}`),
            append: false,
            last_chunk: true,
            timestamp: nowIso(),
          };
        }
        yield status(completed(task, `ticked ${text}`), 'completed', true);
        return;
      }
      case 'wait':
      case 'hold': {
        const finished = await this.run(task, ctx, command === 'wait' ? Number(text) : undefined);
        yield status(finished, finished.state, true);
        return;
      }
      default: {
        const answer = command === 'echo-tenant' ? String(ctx.tenant) : text;
        yield {
          type: 'task.artifact',
          task_id: task.id,
          artifact: createArtifact(answer),
          append: false,
          last_chunk: true,
          timestamp: nowIso(),
        };
        const done = completed(task, answer);
        yield status(done, 'completed', true);
      }
    }
  }

  cancelTask(taskId: string, reason: string | undefined): Promise<Task> {
    this.calls.push('cancelTask');
    const entry = this.running.get(taskId);
    if (!entry) return Promise.reject(new TaskNotFoundError(`Task ${taskId} not found`));
    return Promise.resolve(entry.finish(reason ?? 'canceled'));
  }

  getAgentCard(): AgentCard {
    this.calls.push('getAgentCard');
    return this.card;
  }

  /** Runs until `ms` elapsed (completed), a cancel (canceled) or the call's signal aborts (rejects). */
  private run(task: Task, ctx: CallContext, ms: number | undefined): Promise<Task> {
    return new Promise<Task>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        this.running.delete(task.id);
        ctx.signal.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        done();
        reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('aborted'));
      };
      this.running.set(task.id, {
        task,
        finish: (reason) => {
          done();
          const canceled: Task = {
            ...task,
            state: 'canceled',
            metadata: { ...task.metadata, cancel_reason: reason },
          };
          resolve(canceled);
          return canceled;
        },
      });
      if (ms !== undefined) {
        timer = setTimeout(() => {
          done();
          resolve(completed(task, `waited ${ms}`));
        }, ms);
      }
      if (ctx.signal.aborted) onAbort();
      else ctx.signal.addEventListener('abort', onAbort, { once: true });
      for (const wake of this.waiters.get(task.id) ?? []) wake();
      this.waiters.delete(task.id);
    });
  }
}

export function contractCard(): AgentCard {
  return { name: 'contract', description: 'The transport contract suite agent', url: 'http://127.0.0.1' };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function split(task: Task): [string, string] {
  const text = messageText(task.messages[0]).trim();
  const space = text.indexOf(' ');
  return space === -1 ? [text, ''] : [text.slice(0, space), text.slice(space + 1)];
}

function completed(task: Task, text: string): Task {
  return {
    ...task,
    state: 'completed',
    messages: [...task.messages, createMessage(text, { role: 'agent' })],
  };
}

function status(task: Task, state: Task['state'], final: boolean): TaskStatusEvent {
  const event: TaskStatusEvent = { type: 'task.status', task_id: task.id, state, final, timestamp: nowIso() };
  if (final) event.task = task;
  return event;
}
