/**
 * One configurable TaskHandler for every transport's tests, driven by the first word of a message's
 * text (like the reference server's demo agent). Cancel goes through an AbortController registry, as a
 * runtime does: the running command sees the abort, returns, and the agent emits exactly one final
 * `canceled` status. Every call is recorded so tests can assert on what the transport delivered.
 */
import {
  createArtifact,
  createMessage,
  isFinalEvent,
  messageText,
  nowIso,
  PermissionDeniedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  ValueError,
  type AgentCard,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
} from '@agent/core';
import { finalStatusEvent } from '@agent/core/internal';

/** What a command gets: the working copy of the task it may change, its argument and its signals. */
export interface CommandRun {
  /** A copy of the task in state `working`; changes to it end up in the final status. */
  task: Task;
  /** The message text after the command word. */
  args: string;
  /** Aborts when the task is canceled (or {@link TestAgent.cancelAll} runs). */
  signal: AbortSignal;
  /** The CallContext signal of the call that started the task. */
  callSignal: AbortSignal;
  agent: TestAgent;
}

/**
 * Yields the task's events and returns the finished task, or `undefined` to end without a final
 * status. A command that sees {@link CommandRun.signal} abort just returns: the agent writes the
 * canceled status.
 */
export type TestCommand = (run: CommandRun) => AsyncGenerator<TaskEvent, Task | undefined>;

export interface TestAgentOptions {
  card?: AgentCard;
  /** The reply text for `echo <text>` and for a text without a known command. Default: the text. */
  reply?: (text: string, task: Task) => string;
  /**
   * A text whose first word is no command: `'echo'` it whole (default), `'complete'` without a
   * reply, or `'reject'` with a ValueError.
   */
  unknown?: 'echo' | 'complete' | 'reject';
  /** Which message carries the command. Default `'first'`. */
  commandFrom?: 'first' | 'last';
  /** The error code a `fail` command writes to `metadata.error`. Default `'INTERNAL'`. */
  failCode?: string;
  /** How an echo streams its words before the final status. Default `'none'`. */
  echoStream?: 'none' | 'tokens' | 'artifacts';
  /** Also attach the echo reply as an artifact. Default false. */
  echoArtifact?: boolean;
  /** A `task.progress` after each `stream` chunk. Default false. */
  streamProgress?: boolean;
  /** Keep streamed artifacts on the task, so the final status carries them. Default true. */
  collectArtifacts?: boolean;
  /** Cancel of a task that already ended: `'not-cancelable'` (default) or `'not-found'`. */
  cancelFinished?: 'not-cancelable' | 'not-found';
  /** Start streams with a `working` status. Default true. */
  announceWorking?: boolean;
  /**
   * Run each task on its own, independent of who watches it (as a real agent does): a stream
   * consumer that goes away does not stop the task. Default false: the consumer drives the task, so
   * back-pressure reaches the producer.
   */
  detached?: boolean;
  /** `sleep` reports a `task.progress` every {@link tickMs}. Default true. */
  sleepProgress?: boolean;
  /** Milliseconds between `sleep` progress events. Default 20. */
  tickMs?: number;
  /** Extra or replacing commands, by first word. */
  commands?: Record<string, TestCommand>;
}

export interface TestAgentCounts {
  handleTask: number;
  handleTaskStreaming: number;
  cancelTask: number;
  getAgentCard: number;
}

export interface TestAgent extends TaskHandler {
  readonly card: AgentCard;
  /** Every CallContext seen, newest last. */
  readonly contexts: CallContext[];
  /** Every task call (`handleTask` and `handleTaskStreaming`) with the task as received. */
  readonly calls: Array<{ task: Task; ctx: CallContext }>;
  /** Every `cancelTask` call, including refused ones. */
  readonly cancels: Array<{ taskId: string; reason: string | undefined }>;
  readonly counts: TestAgentCounts;
  /** Events the `flood` command has produced so far. */
  readonly produced: number;
  /** Calls whose CallContext signal aborted while they ran. */
  readonly abortedCalls: number;
  /** Ids of the tasks running now. */
  readonly activeTaskIds: string[];
  /** When set, a task call answers with it (streams: as one final status) instead of a command. */
  behaviour: ((task: Task, ctx: CallContext) => Promise<Task>) | undefined;
  /** Makes every following task behave as `hold`, whatever its text. */
  holdTasks(): void;
  /** Resolves once a task with this id is running. */
  whenRunning(taskId: string): Promise<void>;
  /** Resolves with the id of the next task that starts running, once its first event is taken. */
  nextStarted(): Promise<string>;
  /** Resolves with the task once it ended, however it ended. */
  whenDone(taskId: string): Promise<Task>;
  /** Completes a held task with the echo reply. */
  release(taskId: string): void;
  /** Ends every running task (a test's cleanup: no timer outlives it). */
  cancelAll(): void;
}

interface Entry {
  task: Task;
  controller: AbortController;
  reason: string | undefined;
  release?: () => void;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Resolves when any of the signals aborts (or `release` is called), and never before. */
function aborted(signals: AbortSignal[], onRelease?: (release: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const cleanup = (): void => {
      for (const signal of signals) signal.removeEventListener('abort', cleanup);
      resolve();
    };
    if (signals.some((signal) => signal.aborted)) return resolve();
    for (const signal of signals) signal.addEventListener('abort', cleanup, { once: true });
    onRelease?.(cleanup);
  });
}

export function createTestAgent(options: TestAgentOptions = {}): TestAgent {
  const card = options.card ?? { name: 'test-agent', description: 'a test agent', url: '' };
  const reply = options.reply ?? ((text: string) => text);
  const tickMs = options.tickMs ?? 20;
  const failCode = options.failCode ?? 'INTERNAL';
  const running = new Map<string, Entry>();
  const finished = new Map<string, Task>();
  const runningWaiters = new Map<string, Array<() => void>>();
  const startWaiters: Array<(taskId: string) => void> = [];
  const doneWaiters = new Map<string, Array<(task: Task) => void>>();
  let holdAll = false;
  let produced = 0;
  let abortedCalls = 0;

  const commandText = (task: Task): string =>
    messageText(options.commandFrom === 'last' ? task.messages.at(-1) : task.messages[0]);

  const replyTo = (run: CommandRun, text: string): Task => {
    const answer = reply(text, run.task);
    run.task.messages.push(createMessage(answer, { role: 'agent' }));
    if (options.echoArtifact) run.task.artifacts.push(createArtifact(answer));
    return { ...run.task, state: 'completed' };
  };

  const artifactEvent = (task: Task, text: string, lastChunk: boolean, extra = {}): TaskEvent => {
    const artifact = createArtifact(text, extra);
    if (options.collectArtifacts ?? true) task.artifacts.push(artifact);
    return {
      type: 'task.artifact',
      task_id: task.id,
      artifact,
      append: false,
      last_chunk: lastChunk,
      timestamp: nowIso(),
    };
  };

  async function* echoWith(run: CommandRun, text: string): AsyncGenerator<TaskEvent, Task> {
    const words = text.split(' ');
    if (options.echoStream === 'tokens') {
      for (const delta of words)
        yield { type: 'llm.stream', task_id: run.task.id, delta, timestamp: nowIso() };
    } else if (options.echoStream === 'artifacts') {
      for (const word of words) yield artifactEvent(run.task, word, true);
    }
    return replyTo(run, text);
  }

  // eslint-disable-next-line require-yield
  async function* complete(run: CommandRun): AsyncGenerator<TaskEvent, Task> {
    return { ...run.task, state: 'completed' };
  }

  /** Holds the task until it is canceled, released (echo reply) or `ms` passed (no reply). */
  // eslint-disable-next-line require-yield
  async function* hold(run: CommandRun): AsyncGenerator<TaskEvent, Task | undefined> {
    const ms = run.args === '' ? Number.NaN : Number(run.args);
    const entry = running.get(run.task.id);
    const timeout = new AbortController();
    const timer = Number.isFinite(ms) ? setTimeout(() => timeout.abort(), ms) : undefined;
    let released = false;
    await aborted([run.signal, timeout.signal], (release) => {
      if (entry) {
        entry.release = () => {
          released = true;
          release();
        };
      }
    });
    clearTimeout(timer);
    if (run.signal.aborted) return undefined;
    return released ? replyTo(run, commandText(run.task)) : { ...run.task, state: 'completed' };
  }

  const builtIn: Record<string, TestCommand> = {
    async *echo(run) {
      return yield* echoWith(run, run.args);
    },
    async *stream(run) {
      const n = Number(run.args);
      for (let index = 0; index < n && !run.signal.aborted; index += 1) {
        // Detached, each chunk is its own macrotask turn, so watchers see a stream, not a burst.
        if (options.detached) await pause(0, run.signal);
        if (run.signal.aborted) break;
        yield artifactEvent(run.task, `chunk ${index}`, index === n - 1, { metadata: { index } });
        if (options.streamProgress) {
          yield {
            type: 'task.progress',
            task_id: run.task.id,
            timestamp: nowIso(),
            step: index,
            run_id: 'run-1',
          };
        }
      }
      return { ...run.task, state: 'completed' };
    },
    async *flood(run) {
      const [count = '0', bytes = '0'] = run.args.split(' ');
      const text = 'x'.repeat(Number(bytes));
      for (let index = 0; index < Number(count); index += 1) {
        produced += 1;
        const artifact = createArtifact(text, { id: `a${index}` });
        yield {
          type: 'task.artifact',
          task_id: run.task.id,
          artifact,
          append: false,
          last_chunk: false,
          timestamp: nowIso(),
        };
      }
      run.task.messages.push(createMessage(`flooded ${count}`, { role: 'agent' }));
      return { ...run.task, state: 'completed' };
    },
    async *sleep(run) {
      const ms = run.args === '' ? Number.POSITIVE_INFINITY : Number(run.args);
      const until = Date.now() + ms;
      while (!run.signal.aborted && Date.now() < until) {
        if (options.sleepProgress ?? true) {
          yield { type: 'task.progress', task_id: run.task.id, timestamp: nowIso(), summary: 'working' };
        }
        await pause(Math.min(tickMs, Math.max(0, until - Date.now())), run.signal);
      }
      return { ...run.task, state: 'completed' };
    },
    hold,
    wait: hold,
    idle: hold,
    // eslint-disable-next-line require-yield
    async *hang(run) {
      await aborted([run.callSignal, run.signal]);
      return undefined;
    },
    async *fail(run) {
      const error = { code: failCode, message: run.args };
      run.task.metadata = { ...run.task.metadata, error };
      yield { type: 'task.error', task_id: run.task.id, timestamp: nowIso(), error };
      return { ...run.task, state: 'failed' };
    },
    // eslint-disable-next-line require-yield
    async *throw(run) {
      throw new ValueError(run.args || 'failed on purpose');
    },
    async *explode(run) {
      yield { type: 'task.progress', task_id: run.task.id, timestamp: nowIso() };
      throw new PermissionDeniedError('The handler refused to go on', { data: { rule: 'test' } });
    },
    async *truncate(run) {
      yield { type: 'task.progress', task_id: run.task.id, timestamp: nowIso() };
      return undefined;
    },
  };
  const commands: Record<string, TestCommand> = { ...builtIn, ...options.commands };

  const pick = (task: Task): { command: TestCommand; args: string } => {
    if (holdAll) return { command: hold, args: '' };
    const text = commandText(task);
    const space = text.indexOf(' ');
    const word = space === -1 ? text : text.slice(0, space);
    const args = space === -1 ? '' : text.slice(space + 1);
    const command = Object.hasOwn(commands, word) ? commands[word] : undefined;
    if (command) return { command, args };
    if (options.unknown === 'reject') throw new ValueError(`unknown command ${word}`);
    if (options.unknown === 'complete') return { command: complete, args: text };
    return { command: (run) => echoWith(run, text), args: text };
  };

  const settle = (task: Task): void => {
    finished.set(task.id, task);
    for (const resolve of doneWaiters.get(task.id) ?? []) resolve(task);
    doneWaiters.delete(task.id);
  };

  /** Runs one task; the generator ends with its one final status (unless the command gave none). */
  async function* execute(input: Task, callSignal: AbortSignal): AsyncGenerator<TaskEvent> {
    const { command, args } = pick(input);
    const task: Task = { ...structuredClone(input), state: 'working' };
    const entry: Entry = { task, controller: new AbortController(), reason: undefined };
    running.set(task.id, entry);
    for (const resolve of runningWaiters.get(task.id) ?? []) resolve();
    runningWaiters.delete(task.id);
    const signal = entry.controller.signal;
    let final: Task | undefined;
    try {
      if (options.announceWorking ?? true) {
        yield { type: 'task.status', task_id: task.id, state: 'working', final: false, timestamp: nowIso() };
      }
      // Announced once the consumer asks for more: the first event has reached the transport.
      for (const notify of startWaiters.splice(0)) notify(task.id);
      const steps = command({ task, args, signal, callSignal, agent });
      for (;;) {
        const step = await steps.next();
        if (step.done) {
          final = step.value;
          break;
        }
        yield step.value;
      }
      if (signal.aborted) {
        final = {
          ...task,
          state: 'canceled',
          metadata: { ...task.metadata, cancel_reason: entry.reason ?? null },
        };
      }
      if (final) yield finalStatusEvent(final);
    } finally {
      running.delete(task.id);
      settle(final ?? task);
    }
  }

  /** Records the call and counts it as aborted if its signal fires before it ends. */
  const track = (ctx: CallContext): (() => void) => {
    const onAbort = (): void => {
      abortedCalls += 1;
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    return () => ctx.signal.removeEventListener('abort', onAbort);
  };

  /** Detached mode: the task runs to its end on its own; watchers follow its buffered events. */
  const startDetached = (task: Task, callSignal: AbortSignal) => {
    const run = { events: [] as TaskEvent[], waiters: [] as Array<() => void>, ended: false };
    const steps = execute(task, callSignal);
    const wake = (): void => {
      for (const resolve of run.waiters.splice(0)) resolve();
    };
    const done = (async () => {
      try {
        for await (const event of steps) {
          run.events.push(event);
          wake();
        }
      } finally {
        run.ended = true;
        wake();
      }
    })();
    // The watcher that awaits it reports the error; a task nobody watches any more must not crash.
    done.catch(() => undefined);
    return { run, done };
  };

  async function* follow(
    run: { events: TaskEvent[]; waiters: Array<() => void>; ended: boolean },
    done: Promise<void>,
    signal: AbortSignal,
  ): AsyncGenerator<TaskEvent> {
    let index = 0;
    while (!signal.aborted) {
      while (index < run.events.length) {
        const event = run.events[index++]!;
        yield event;
        if (isFinalEvent(event)) return;
      }
      if (run.ended) {
        await done;
        return;
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          signal.removeEventListener('abort', wake);
          resolve();
        };
        run.waiters.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  const drain = async (events: AsyncIterable<TaskEvent>, callSignal: AbortSignal): Promise<Task> => {
    let last: TaskEvent | undefined;
    for await (const event of events) last = event;
    if (last && isFinalEvent(last) && last.type === 'task.status' && last.task) return last.task;
    if (callSignal.aborted) throw callSignal.reason;
    throw new ValueError('The task ended without a final status');
  };

  const agent: TestAgent = {
    card,
    contexts: [],
    calls: [],
    cancels: [],
    counts: { handleTask: 0, handleTaskStreaming: 0, cancelTask: 0, getAgentCard: 0 },
    get produced() {
      return produced;
    },
    get abortedCalls() {
      return abortedCalls;
    },
    get activeTaskIds() {
      return [...running.keys()];
    },
    behaviour: undefined,

    async handleTask(task, ctx) {
      agent.contexts.push(ctx);
      agent.calls.push({ task, ctx });
      agent.counts.handleTask += 1;
      const untrack = track(ctx);
      try {
        if (agent.behaviour) {
          const result = await agent.behaviour(task, ctx);
          settle(result);
          return result;
        }
        if (options.detached) {
          const { run, done } = startDetached(task, ctx.signal);
          return await drain(follow(run, done, new AbortController().signal), ctx.signal);
        }
        return await drain(execute(task, ctx.signal), ctx.signal);
      } finally {
        untrack();
      }
    },

    async *handleTaskStreaming(task, ctx) {
      agent.contexts.push(ctx);
      agent.calls.push({ task, ctx });
      agent.counts.handleTaskStreaming += 1;
      const untrack = track(ctx);
      try {
        if (agent.behaviour) {
          const result = await agent.behaviour(task, ctx);
          settle(result);
          yield finalStatusEvent(result);
        } else if (options.detached) {
          const { run, done } = startDetached(task, ctx.signal);
          yield* follow(run, done, ctx.signal);
        } else {
          yield* execute(task, ctx.signal);
        }
      } finally {
        untrack();
      }
    },

    async cancelTask(taskId, reason, ctx) {
      agent.contexts.push(ctx);
      agent.cancels.push({ taskId, reason });
      agent.counts.cancelTask += 1;
      const entry = running.get(taskId);
      if (!entry) {
        if (finished.has(taskId) && options.cancelFinished !== 'not-found')
          throw new TaskNotCancelableError(`Task ${taskId} already ended`);
        throw new TaskNotFoundError(`Task ${taskId} is not active`);
      }
      if (!entry.controller.signal.aborted) {
        entry.reason = reason;
        entry.controller.abort(reason ?? 'canceled');
      }
      return {
        ...structuredClone(entry.task),
        state: 'canceled',
        metadata: { ...entry.task.metadata, cancel_reason: reason ?? null },
      };
    },

    getAgentCard(ctx) {
      agent.contexts.push(ctx);
      agent.counts.getAgentCard += 1;
      return card;
    },

    holdTasks() {
      holdAll = true;
    },

    whenRunning(taskId) {
      if (running.has(taskId)) return Promise.resolve();
      return new Promise((resolve) =>
        runningWaiters.set(taskId, [...(runningWaiters.get(taskId) ?? []), resolve]),
      );
    },

    nextStarted() {
      return new Promise((resolve) => startWaiters.push(resolve));
    },

    whenDone(taskId) {
      const done = finished.get(taskId);
      if (done) return Promise.resolve(done);
      return new Promise((resolve) => doneWaiters.set(taskId, [...(doneWaiters.get(taskId) ?? []), resolve]));
    },

    release(taskId) {
      running.get(taskId)?.release?.();
    },

    cancelAll() {
      for (const entry of running.values()) entry.controller.abort('test cleanup');
    },
  };
  return agent;
}
