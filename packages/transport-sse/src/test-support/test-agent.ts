/**
 * A small TaskHandler for the tests. Each task runs on its own, independent of who watches it (as a
 * real agent does), so a stream consumer that goes away does not stop the task. Commands, by the
 * first message text: `echo <text>`, `stream <n>`, `sleep <ms>` (progress every 20 ms, cancellable),
 * `idle <ms>` (no events until done), `explode` (the stream throws after one event), `truncate`
 * (the stream ends without a final status).
 */
import {
  createArtifact,
  createMessage,
  finalStatusEvent,
  isFinalEvent,
  messageText,
  nowIso,
  PermissionDeniedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  type AgentCard,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
} from '@agent/core';

interface Run {
  task: Task;
  controller: AbortController;
  events: TaskEvent[];
  waiters: Array<() => void>;
  done: Promise<Task>;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class TestAgent implements TaskHandler {
  readonly card: AgentCard = { name: 'test-agent', description: 'answers the SSE tests', url: '' };
  readonly runs = new Map<string, Run>();
  readonly finished = new Map<string, Task>();
  readonly contexts: CallContext[] = [];
  readonly cancelCalls: Array<{ taskId: string; reason: string | undefined }> = [];
  streamCalls = 0;

  async handleTask(task: Task, ctx: CallContext): Promise<Task> {
    this.contexts.push(ctx);
    if (messageText(task.messages[0]) === 'hang') {
      // Never answers on its own; only the call's signal (server stop) ends it.
      return new Promise((_, reject) =>
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
      );
    }
    return this.start(task).done;
  }

  handleTaskStreaming(task: Task, ctx: CallContext): AsyncIterable<TaskEvent> {
    this.contexts.push(ctx);
    this.streamCalls += 1;
    const command = messageText(task.messages[0]);
    if (command === 'explode') return this.explode(task);
    if (command === 'truncate') return this.truncate(task);
    return this.follow(this.start(task), ctx.signal);
  }

  async cancelTask(taskId: string, reason: string | undefined, ctx: CallContext): Promise<Task> {
    this.contexts.push(ctx);
    this.cancelCalls.push({ taskId, reason });
    if (this.finished.has(taskId)) throw new TaskNotCancelableError(`Task ${taskId} already ended`);
    const run = this.runs.get(taskId);
    if (!run) throw new TaskNotFoundError(`Task ${taskId} is not active`);
    run.controller.abort(reason ?? 'canceled');
    return run.done;
  }

  getAgentCard(ctx: CallContext): AgentCard {
    this.contexts.push(ctx);
    return this.card;
  }

  /** Resolves with the task once it ended, however it ended. */
  whenDone(taskId: string): Promise<Task> {
    const run = this.runs.get(taskId);
    const finished = this.finished.get(taskId);
    if (finished) return Promise.resolve(finished);
    if (!run) return Promise.reject(new Error(`unknown task ${taskId}`));
    return run.done;
  }

  private start(task: Task): Run {
    const run: Run = {
      task: { ...task, state: 'working', artifacts: [...task.artifacts] },
      controller: new AbortController(),
      events: [],
      waiters: [],
      done: Promise.resolve(task),
    };
    this.runs.set(task.id, run);
    run.done = this.execute(run);
    return run;
  }

  private emit(run: Run, event: TaskEvent): void {
    run.events.push(event);
    for (const wake of run.waiters.splice(0)) wake();
  }

  private async execute(run: Run): Promise<Task> {
    const { task, controller } = run;
    const [command = '', argument = ''] = messageText(task.messages[0]).split(' ');
    const signal = controller.signal;
    if (command === 'echo') {
      task.messages.push(createMessage(argument, { role: 'agent' }));
    } else if (command === 'stream') {
      for (let index = 0; index < Number(argument) && !signal.aborted; index += 1) {
        await pause(0, signal);
        const artifact = createArtifact(`chunk ${index}`, { metadata: { index } });
        task.artifacts.push(artifact);
        this.emit(run, {
          type: 'task.artifact',
          task_id: task.id,
          artifact,
          append: false,
          last_chunk: index === Number(argument) - 1,
          timestamp: nowIso(),
        });
      }
    } else if (command === 'sleep') {
      const until = Date.now() + Number(argument);
      while (!signal.aborted && Date.now() < until) {
        this.emit(run, { type: 'task.progress', task_id: task.id, timestamp: nowIso(), summary: 'working' });
        await pause(20, signal);
      }
    } else if (command === 'idle') {
      await pause(Number(argument), signal);
    }
    const final: Task = signal.aborted
      ? { ...task, state: 'canceled', metadata: { ...task.metadata, cancel_reason: String(signal.reason) } }
      : { ...task, state: 'completed' };
    this.finished.set(task.id, final);
    this.runs.delete(task.id);
    this.emit(run, finalStatusEvent(final));
    return final;
  }

  private async *follow(run: Run, signal: AbortSignal): AsyncGenerator<TaskEvent> {
    let index = 0;
    while (!signal.aborted) {
      while (index < run.events.length) {
        const event = run.events[index++]!;
        yield event;
        if (isFinalEvent(event)) return;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          resolve();
        };
        run.waiters.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  private async *explode(task: Task): AsyncGenerator<TaskEvent> {
    yield { type: 'task.progress', task_id: task.id, timestamp: nowIso() };
    throw new PermissionDeniedError('The handler refused to go on', { data: { rule: 'test' } });
  }

  private async *truncate(task: Task): AsyncGenerator<TaskEvent> {
    yield { type: 'task.progress', task_id: task.id, timestamp: nowIso() };
  }
}
