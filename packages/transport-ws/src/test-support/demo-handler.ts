/**
 * A small TaskHandler for tests, driven by the first text of the task (like the reference server's
 * demo agent): `echo <text>`, `stream <n>`, `sleep` (runs until canceled), `hang` (runs until the
 * call's signal aborts), `flood <n> <bytes>` (large artifacts, counts what it produced), `fail <text>`.
 * Cancel uses an AbortController registry, as a runtime does.
 */
import {
  createArtifact,
  createMessage,
  finalStatusEvent,
  messageText,
  nowIso,
  TaskNotFoundError,
  ValueError,
  type AgentCard,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
} from '@agent/core';

export interface DemoHandler extends TaskHandler {
  /** Events the `flood` command has produced so far. */
  produced: number;
  /** Calls whose CallContext.signal aborted. */
  abortedCalls: number;
  /** Contexts seen, newest last. */
  contexts: CallContext[];
  /** Resolves once a task with this id is registered as running. */
  whenRunning(taskId: string): Promise<void>;
}

export function createDemoHandler(
  card: AgentCard = { name: 'demo', description: 'test agent', url: '' },
): DemoHandler {
  const running = new Map<string, { controller: AbortController; task: Task }>();
  const runningWaiters = new Map<string, Array<() => void>>();

  const register = (task: Task): AbortController => {
    const controller = new AbortController();
    running.set(task.id, { controller, task });
    for (const resolve of runningWaiters.get(task.id) ?? []) resolve();
    runningWaiters.delete(task.id);
    return controller;
  };

  const command = (task: Task): string[] => messageText(task.messages[0]).split(' ');

  const complete = (task: Task, text: string): Task => ({
    ...task,
    state: 'completed',
    messages: [...task.messages, createMessage(text, { role: 'agent' })],
  });

  const handler: DemoHandler = {
    produced: 0,
    abortedCalls: 0,
    contexts: [],

    whenRunning(taskId) {
      if (running.has(taskId)) return Promise.resolve();
      return new Promise((resolve) =>
        runningWaiters.set(taskId, [...(runningWaiters.get(taskId) ?? []), resolve]),
      );
    },

    async handleTask(task, ctx) {
      handler.contexts.push(ctx);
      const [verb, ...rest] = command(task);
      if (verb === 'echo') return complete(task, rest.join(' '));
      if (verb === 'fail') throw new ValueError(rest.join(' ') || 'failed on purpose');
      if (verb === 'hang') {
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        handler.abortedCalls += 1;
        return task;
      }
      throw new ValueError(`unknown command ${verb ?? ''}`);
    },

    async *handleTaskStreaming(task, ctx): AsyncGenerator<TaskEvent> {
      handler.contexts.push(ctx);
      ctx.signal.addEventListener('abort', () => (handler.abortedCalls += 1), { once: true });
      const [verb, arg, arg2] = command(task);
      const status = (state: Task['state']): TaskEvent => ({
        type: 'task.status',
        task_id: task.id,
        state,
        final: false,
        timestamp: nowIso(),
      });
      yield status('working');
      if (verb === 'stream') {
        const n = Number(arg);
        for (let i = 0; i < n; i += 1) {
          yield {
            type: 'task.artifact',
            task_id: task.id,
            artifact: createArtifact(`chunk ${i}`),
            append: false,
            last_chunk: i === n - 1,
            timestamp: nowIso(),
          };
        }
        yield finalStatusEvent(complete(task, `streamed ${n}`));
        return;
      }
      if (verb === 'flood') {
        const n = Number(arg);
        const text = 'x'.repeat(Number(arg2));
        for (let i = 0; i < n; i += 1) {
          handler.produced += 1;
          yield {
            type: 'task.artifact',
            task_id: task.id,
            artifact: createArtifact(text, { id: `a${i}` }),
            append: false,
            last_chunk: false,
            timestamp: nowIso(),
          };
        }
        yield finalStatusEvent(complete(task, `flooded ${n}`));
        return;
      }
      if (verb === 'sleep') {
        const controller = register(task);
        try {
          while (!controller.signal.aborted) {
            yield { type: 'task.progress', task_id: task.id, timestamp: nowIso() };
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 20);
              controller.signal.addEventListener(
                'abort',
                () => {
                  clearTimeout(timer);
                  resolve();
                },
                { once: true },
              );
            });
          }
          const reason = String(controller.signal.reason ?? '');
          yield finalStatusEvent({
            ...task,
            state: 'canceled',
            metadata: { ...task.metadata, cancel_reason: reason },
          });
        } finally {
          running.delete(task.id);
        }
        return;
      }
      if (verb === 'hang') {
        register(task);
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        running.delete(task.id);
        return;
      }
      throw new ValueError(`unknown command ${verb ?? ''}`);
    },

    async cancelTask(taskId, reason, ctx) {
      handler.contexts.push(ctx);
      const entry = running.get(taskId);
      if (!entry) throw new TaskNotFoundError(`Task ${taskId} is not active`);
      entry.controller.abort(reason ?? 'canceled');
      return {
        ...entry.task,
        state: 'canceled',
        metadata: { ...entry.task.metadata, cancel_reason: reason ?? 'canceled' },
      };
    },

    getAgentCard(ctx) {
      handler.contexts.push(ctx);
      return card;
    },
  };
  return handler;
}
