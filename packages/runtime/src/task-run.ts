import {
  type GenAiMetricsSink,
  type Logger,
  isTerminalState,
  nowIso,
  TaskCanceledError,
  ValueError,
  type Artifact,
  type JsonObject,
  type Message,
  type RunContextData,
  type Task,
  type TaskEvent,
  type TaskState,
} from '@agent/core';
import {
  checkOptionNames,
  finalStatusEvent,
  isRecord,
  optionNames,
  snapshot,
  toWireError,
} from '@agent/core/internal';
import {
  RunRecorder,
  type ApprovalStore,
  type EventSink,
  type RunStore,
  type TaskOwner,
} from '@agent/events';
import { recordTaskEventOnly, type TaskTrace } from '@agent/events/internal';
import type { ApprovalHandler } from './approvals.js';
import { runTool, type ActionScope } from './authorize.js';
import type { BudgetTracker } from './budget-tracker.js';
import { sleepUnlessCanceled, type CancellationToken } from './cancellation.js';
import type { Policy } from './capability-policy.js';
import { SETTLED, type EventQueue } from './event-queue.js';
import { withGenAiSink } from './llm/gen-ai-sink.js';
import { runInferenceLoop, type InferenceResult } from './llm/inference-loop.js';
import type { LLM, LLMMessage } from './llm/types.js';
import type { RunContext } from './run-context.js';
import type { RuntimeEventInput } from './run-events.js';
import type { ActiveTask, Delegation, TaskRegistry } from './task-registry.js';
import type { ToolRegistry } from './tools.js';

/** Options of `run.infer()`. */
export interface InferOptions {
  /** System prompt; default: the agent's `instructions`. */
  instructions?: string;
  /** The prompt; default: the task's messages (user → user, agent → assistant, system → system). */
  messages?: LLMMessage[];
  /** Tool names the model may call; default: every registered tool. */
  tools?: readonly string[];
  /** Stream the model's output as `llm.stream` events; default: true on streaming runs. */
  stream?: boolean;
}

const INFER_OPTION_NAMES = optionNames<InferOptions>({
  instructions: true,
  messages: true,
  tools: true,
  stream: true,
});

/** The `run` handed to user logic: the context, the cancel switch and the run's effects. */
export interface RunHandle {
  readonly taskId: string;
  readonly context: RunContext;
  readonly token: CancellationToken;
  /** Aborts when the task is canceled. */
  readonly signal: AbortSignal;
  readonly budget: BudgetTracker;
  /** Emits an event; the runtime fills `task_id`, `timestamp`, `run_id`, `agent_name`. Awaiting it applies back-pressure. */
  emit(event: RuntimeEventInput): Promise<void>;
  /** `task.progress` with `progress` (0..1) and `message`. */
  progress(progress: number | null, message?: string): Promise<void>;
  /** Calls a registered tool through validation, policy and approvals; rejects with the typed error. */
  callTool(name: string, args?: JsonObject): Promise<unknown>;
  /** Attaches an artifact and emits `task.artifact`. With `append`, parts extend the artifact with the same id. */
  addArtifact(artifact: Artifact, options?: { append?: boolean; lastChunk?: boolean }): Promise<void>;
  /** Appends a message to the task and emits a non-final `task.status` carrying it. */
  addMessage(message: Message): Promise<void>;
  /** Waits `ms` milliseconds; rejects with TaskCanceledError when the task is canceled. */
  sleep(ms: number): Promise<void>;
  /** Runs the built-in inference loop on the agent's LLM. */
  infer(options?: InferOptions): Promise<InferenceResult>;
  /** Delegates a task to another agent (policy-checked `agent.call`; canceled with this task). */
  sendTaskTo(target: string, task: Task): Promise<Task>;
}

/** What a run needs from its agent. */
export interface RunHost {
  readonly name: string;
  readonly policy: Policy | null;
  readonly approvalHandler: ApprovalHandler | null;
  /** Where approvals wait for a reviewer when there is no handler. */
  readonly approvalStore: ApprovalStore | null;
  readonly tools: ToolRegistry;
  readonly llm: LLM | null;
  readonly instructions: string | null;
  readonly defaultMaxSteps: number;
  readonly verbosity: number;
  readonly eventSink: EventSink | null;
  readonly runStore: RunStore | null;
  /** The recorder's `maxStreamedEvents`: streamed events a run report lists. */
  readonly reportMaxStreamedEvents: number;
  readonly registry: TaskRegistry;
  delegate(target: string, task: Task, run: TaskRun | null): Promise<Task>;
  reportObserverError(error: unknown, where: string): void;
  /** Holds a write a run left behind when it ended (never rejects): the agent's `stop()` waits for it. */
  afterRun(write: Promise<void>): void;
  /** Where an unexpected failure of user logic is logged (its message never reaches the task). */
  readonly logger: Logger;
  /** Also gets each model call's GenAI metrics (the `genAiMetrics` option), or null. */
  readonly genAiMetrics: GenAiMetricsSink | null;
}

const LIFECYCLE_EVENTS = new Set(['task.status', 'task.artifact', 'task.progress', 'task.error']);

/**
 * One execution of one task: owns the live task copy, its events (stream queue, sink, recorder)
 * and the final bookkeeping. The final part cannot be canceled and runs exactly once.
 */
export class TaskRun implements ActiveTask {
  readonly taskId: string;
  readonly delegations = new Set<Delegation>();
  finalState: TaskState | null = null;
  registryKey?: string;
  readonly done: Promise<Task>;
  private resolveDone!: (task: Task) => void;
  private closed = false;
  private currentStep: number | null = null;
  /** `context.toDict()` of the context it was made from, for the recorder (which only reads its ids). */
  private contextDict: RunContextData | null = null;
  private contextDictOf: RunContext | null = null;
  private readonly recorder: RunRecorder | null;
  readonly handle: RunHandle;

  constructor(
    readonly host: RunHost,
    readonly task: Task,
    public context: RunContext,
    readonly token: CancellationToken,
    readonly tracker: BudgetTracker,
    private readonly queue: EventQueue<TaskEvent> | null,
    readonly owner: TaskOwner,
    /** The run's spans (the task's, its model calls', tools' and delegations'). */
    readonly trace: TaskTrace,
    /** The server records this task's snapshots in the same store: only the run report is ours to save. */
    private readonly snapshotsByServer = false,
  ) {
    this.taskId = task.id;
    // With a run store, the run's events are recorded for its run report.
    this.recorder = host.runStore
      ? new RunRecorder({
          agentName: host.name,
          context: this.contextData(),
          maxStreamedEvents: host.reportMaxStreamedEvents,
        })
      : null;
    this.done = new Promise<Task>((resolve) => {
      this.resolveDone = resolve;
    });
    this.handle = this.createHandle();
  }

  get streaming(): boolean {
    return this.queue !== null;
  }

  /**
   * True when the run's events reach nobody but the recorder, which copies each one as it records
   * it: an event may then carry the run's own copies (of a message, an artifact, the final task)
   * instead of copies of its own. A stream or a sink may hold an event past the next mutation.
   */
  private get onlyRecorded(): boolean {
    return this.queue === null && this.host.eventSink === null;
  }

  /** True when anything receives the run's events: a stream, the sink or the recorder. */
  private get observed(): boolean {
    return this.queue !== null || this.host.eventSink !== null || this.recorder !== null;
  }

  /** A copy for an event's payload, or the value itself when only the recorder (which copies) sees it. */
  private forEvent<T>(value: T): T {
    return this.onlyRecorded ? value : jsonClone(value);
  }

  /** The current context as a dict, made once per context (the run's own; handed only to the recorder). */
  private contextData(): RunContextData {
    if (this.contextDictOf !== this.context || this.contextDict === null) {
      this.contextDict = this.context.toDict();
      this.contextDictOf = this.context;
    }
    return this.contextDict;
  }

  /** True when this run saves task snapshots itself (a run store is set and no server records them). */
  get savesSnapshots(): boolean {
    return this.host.runStore !== null && !this.snapshotsByServer;
  }

  /**
   * Fills the ids, feeds sink and recorder, then the stream (waiting while a bounded stream is full).
   * Not an async function: an event that only sinks and the recorder see settles with one shared
   * resolved promise instead of a new one per event.
   */
  emit(input: RuntimeEventInput): Promise<void> {
    try {
      if (this.closed) return SETTLED;
      if (!isRecord(input) || typeof input.type !== 'string')
        throw new ValueError('An event needs a string "type"');
      if (input.type === 'task.status' && input.final === true)
        throw new ValueError('Only the runtime emits the final task.status');
      // Nobody listens (no stream, sink or recorder): the event is never built.
      if (!this.observed) return SETTLED;
      const event = this.fill(input);
      this.observe(event);
      if (this.queue && (this.host.verbosity >= 1 || LIFECYCLE_EVENTS.has(event.type)))
        return this.stream(this.queue, event);
      return SETTLED;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private stream(queue: EventQueue<TaskEvent>, event: TaskEvent): Promise<void> {
    const pushed = queue.push(event, { token: this.token });
    // A push that did not wait saw no cancel come meanwhile: nothing to check, no promise to make.
    // One that waits was made with a token not yet canceled, so any cancel came during the wait.
    if (pushed === SETTLED) return SETTLED;
    return pushed.then(this.raiseIfCancelled);
  }

  /**
   * A cancel that arrived while an emit waited for stream space stops the caller there, before it
   * goes on to the side effect or model call the event announced. Made once per run.
   */
  private readonly raiseIfCancelled = (): void => this.token.raiseIfCancelled();

  /** An action scope for this run; `fields` are added to each of its events. */
  scope(fields: JsonObject = {}): ActionScope {
    return {
      policy: this.host.policy,
      approvalHandler: this.host.approvalHandler,
      context: this.context,
      token: this.token,
      tracker: this.tracker,
      emit: (event) => this.emit(event),
      eventFields: fields,
      trace: this.trace,
      durableApprovals: this.host.approvalStore
        ? {
            store: this.host.approvalStore,
            owner: this.owner,
            taskId: this.taskId,
            reportError: (error) => this.host.reportObserverError(error, 'approvalStore'),
          }
        : null,
    };
  }

  /**
   * Ends the run. The state is decided synchronously (a cancel seen here wins), then the
   * bookkeeping runs to the end whatever happens: registry entry removed, `task.error` when
   * failed, stores written, exactly one final `task.status`.
   */
  async finish(outcome: { state: TaskState; error?: unknown }): Promise<Task> {
    if (this.finalState !== null) return this.done;
    let state = outcome.state;
    if (this.token.isCancelled) state = 'canceled';
    this.finalState = state;
    try {
      await this.finalize(state, outcome.error);
    } catch (error) {
      // Last resort (e.g. user code left uncopyable values in the task): the run still ends.
      this.host.reportObserverError(error, 'finish');
      this.closed = true;
      this.trace.end(state);
      const task = jsonClone(this.task);
      this.host.registry.complete(this, task);
      if (this.queue) {
        await this.queue.push(
          { ...finalStatusEvent(task), run_id: this.context.runId, agent_name: this.host.name } as TaskEvent,
          { force: true },
        );
        this.queue.close();
      }
      this.resolveDone(task);
    }
    return this.done;
  }

  private async finalize(state: TaskState, cause: unknown): Promise<void> {
    const task = this.task;
    task.state = state;
    let errorEvent: RuntimeEventInput | null = null;
    if (state === 'canceled') {
      const reason = this.token.reason ?? cancelReasonOf(cause) ?? 'canceled';
      task.metadata.cancel_reason = reason;
      this.context = this.context.cancel(reason);
      delete task.metadata.error;
    } else if (state === 'failed') {
      // An AgentError is the agent's own word; anything else may carry a host, a path or a secret:
      // the task says INTERNAL / `Internal error` with an error_id, the log has the real error.
      const error =
        cause === undefined
          ? null
          : toWireError(cause, { operation: 'execute', taskId: this.taskId }, this.host.logger);
      if (error) task.metadata.error = jsonClone(error.toJSON());
      const body = isRecord(task.metadata.error)
        ? task.metadata.error
        : { code: 'INTERNAL', message: 'Task failed' };
      errorEvent = {
        type: 'task.error',
        error: body,
        summary: typeof body.message === 'string' ? body.message : 'Task failed',
      };
    }
    task.metadata.run_context = this.context.toDict();
    if (errorEvent && this.observed) {
      const event = this.fill(errorEvent);
      this.observe(event);
      await this.queue?.push(event, { force: true });
    }
    this.closed = true;
    const finalTask = jsonClone(task);
    this.host.registry.complete(this, finalTask);
    const finalEvent = this.observed
      ? ({
          ...finalStatusEvent(this.forEvent(finalTask)),
          run_id: this.context.runId,
          agent_name: this.host.name,
        } as TaskEvent)
      : null;
    if (finalEvent) this.observe(finalEvent);
    // Ended once the sinks saw the final event: an OpenTelemetryBridge among them skips this run's
    // spans only while the run is marked as traced here.
    this.trace.end(state, state === 'failed' ? errorCodeOf(finalTask) : undefined);
    const persisted = this.persist(finalTask);
    // A server that records this task answers its callers once the store holds the task's ending,
    // and the report is written beside that ending (for a store that groups writes, in the same
    // commit) instead of before it, a commit earlier. Without a server, the run ends once saved.
    if (this.snapshotsByServer) this.host.afterRun(persisted);
    else await persisted;
    if (this.queue && finalEvent) {
      await this.queue.push(finalEvent, { force: true });
      this.queue.close();
    }
    // The caller gets a task of its own to change: a copy while anything else may hold `finalTask`.
    this.resolveDone(this.finalTaskHeld ? jsonClone(finalTask) : finalTask);
  }

  /**
   * True when something besides the caller may still hold the final task: the registry (for
   * `getTask`), or a run store given it as a snapshot. A stream or a sink gets a copy in its final
   * event ({@link forEvent}), and the recorder copies what it keeps of that event.
   */
  private get finalTaskHeld(): boolean {
    return this.host.registry.keepsTasks || this.savesSnapshots;
  }

  /**
   * Saves a snapshot (and, when final, the run report) to the run store; failures are reported, not
   * thrown. `snapshot` may be null when {@link savesSnapshots} is false.
   */
  async persist(snapshot: Task | null): Promise<void> {
    const store = this.host.runStore;
    if (!store) return;
    try {
      if (snapshot !== null && !this.snapshotsByServer) {
        await store.saveTaskSnapshot(snapshot, {
          owner: this.owner,
          runContext: this.context.toDict(),
          agentName: this.host.name,
        });
      }
      if (this.recorder && this.finalState !== null)
        await store.saveRunReport(this.recorder.toReport({ metadata: { task_id: this.taskId } }));
    } catch (error) {
      this.host.reportObserverError(error, 'runStore');
    }
  }

  private fill(input: RuntimeEventInput): TaskEvent {
    const { type, ...payload } = input;
    const event: JsonObject = {
      type,
      task_id: this.taskId,
      timestamp: nowIso(),
      run_id: this.context.runId,
      agent_name: this.host.name,
    };
    if (this.currentStep !== null) event.step = this.currentStep;
    Object.assign(event, payload);
    event.task_id = this.taskId;
    if (typeof event.timestamp !== 'string') event.timestamp = nowIso();
    return event as unknown as TaskEvent;
  }

  private observe(event: TaskEvent): void {
    if (this.recorder) {
      try {
        recordTaskEventOnly(this.recorder, event, {
          context: this.contextData(),
          agentName: this.host.name,
        });
      } catch (error) {
        this.host.reportObserverError(error, 'recorder');
      }
    }
    if (this.host.eventSink) {
      try {
        this.host.eventSink.emitTaskEvent(event, {
          context: this.context.toDict(),
          agentName: this.host.name,
        });
      } catch (error) {
        this.host.reportObserverError(error, 'eventSink');
      }
    }
  }

  private checkOpen(): void {
    this.token.raiseIfCancelled();
    if (this.closed) throw new TaskCanceledError('Task already finished');
  }

  private createHandle(): RunHandle {
    // The handle outlives `this` binding in user code (destructured methods), so it closes over the run.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const run = this;
    return new LiveRunHandle(run, {
      emit: (event) => run.emit(event),
      progress: (progress, message) => {
        if (progress !== null && (typeof progress !== 'number' || !(progress >= 0 && progress <= 1))) {
          return Promise.reject(new ValueError('progress must be a number between 0 and 1, or null'));
        }
        const event: RuntimeEventInput = { type: 'task.progress', message: message ?? '' };
        if (progress !== null) event.progress = progress;
        if (message) event.summary = message;
        return run.emit(event);
      },
      callTool: async (name, args) => {
        run.checkOpen();
        return runTool(run.host.tools.require(name), args ?? {}, run.scope());
      },
      // Not async: a run streams an artifact chunk by chunk, and the emit's own promise (shared when
      // nothing waits) is all a chunk needs.
      addArtifact: (artifact, options = {}) => {
        try {
          run.checkOpen();
          if (!isRecord(artifact) || typeof artifact.id !== 'string' || !Array.isArray(artifact.parts)) {
            throw new ValueError('addArtifact needs an Artifact (use createArtifact from @agent/core)');
          }
          const index = run.task.artifacts.findIndex((entry) => entry.id === artifact.id);
          // `append` extends an artifact sent before; without it, the same id replaces the old one.
          const append = options.append === true && index >= 0;
          if (append) {
            const parts = run.task.artifacts[index].parts;
            // One part at a time: spreading a chunk of very many parts into push overflows the stack.
            for (const part of jsonClone(artifact.parts)) parts.push(part);
          } else if (index >= 0) run.task.artifacts[index] = jsonClone(artifact);
          else run.task.artifacts.push(jsonClone(artifact));
          return run.emit({
            type: 'task.artifact',
            artifact: run.forEvent(artifact),
            append,
            last_chunk: options.lastChunk ?? options.append !== true,
          });
        } catch (error) {
          return Promise.reject(error);
        }
      },
      addMessage: async (message) => {
        run.checkOpen();
        if (!isRecord(message) || !Array.isArray(message.parts))
          throw new ValueError('addMessage needs a Message (use createMessage from @agent/core)');
        const copy = jsonClone(message);
        run.task.messages.push(copy);
        await run.emit({
          type: 'task.status',
          state: run.task.state,
          final: false,
          // The task's own copy when only the recorder sees the event (it copies it at once).
          message: run.onlyRecorded ? copy : jsonClone(message),
        });
      },
      sleep: (ms) => sleepUnlessCanceled(ms, run.token),
      infer: (options) => run.infer(options),
      sendTaskTo: (target, task) => run.host.delegate(target, task, run),
    });
  }

  private async infer(options: InferOptions = {}): Promise<InferenceResult> {
    this.checkOpen();
    checkOptionNames('run.infer', options, INFER_OPTION_NAMES);
    const llm = this.host.llm;
    if (!llm) throw new ValueError('This agent has no llm: pass one to new Agent({ llm })');
    const instructions = options.instructions ?? this.host.instructions;
    const messages: LLMMessage[] = [];
    if (instructions) messages.push({ role: 'system', content: instructions });
    messages.push(...(options.messages ?? taskToLLMMessages(this.task)));
    const toolNames = options.tools ?? this.host.tools.names;
    const tools = toolNames.map((name) => this.host.tools.require(name).declaration);
    try {
      return await runInferenceLoop({
        llm,
        messages,
        tools,
        context: this.context,
        agentName: this.host.name,
        token: this.token,
        tracker: this.tracker,
        emit: (event) => {
          this.currentStep = typeof event.step === 'number' ? event.step : this.currentStep;
          return this.emit(event);
        },
        stream: options.stream ?? this.streaming,
        defaultMaxSteps: this.host.defaultMaxSteps,
        trace: withGenAiSink(this.trace, this.host.genAiMetrics, (error) =>
          this.host.reportObserverError(error, 'genAiMetrics'),
        ),
        invokeTool: (call) => {
          const tool = this.host.tools.require(call.name);
          if (!toolNames.includes(call.name))
            throw new ValueError(`Tool "${call.name}" is not offered to the model in this call`);
          return runTool(tool, call.arguments, this.scope({ tool_call_id: call.id }));
        },
      });
    } finally {
      this.currentStep = null;
    }
  }
}

/** What a run's handle does besides its two live reads: the run's own closures. */
type HandleMethods = Omit<RunHandle, 'taskId' | 'context' | 'token' | 'signal' | 'budget'>;

/**
 * The RunHandle given to `execute`. `context` and `signal` are read live, through getters on this
 * class's prototype. Written as getters in an object literal they were new closures per run, and V8
 * cannot keep a fast shape for such an object: every handle was a dictionary-mode object, and every
 * finished run behind one (its task copies, events, recorder) survived the young generation's
 * collections until a full one, ~8 KB per run copied into the old generation.
 */
class LiveRunHandle implements RunHandle {
  readonly taskId: string;
  readonly token: CancellationToken;
  readonly budget: BudgetTracker;
  readonly emit: HandleMethods['emit'];
  readonly progress: HandleMethods['progress'];
  readonly callTool: HandleMethods['callTool'];
  readonly addArtifact: HandleMethods['addArtifact'];
  readonly addMessage: HandleMethods['addMessage'];
  readonly sleep: HandleMethods['sleep'];
  readonly infer: HandleMethods['infer'];
  readonly sendTaskTo: HandleMethods['sendTaskTo'];
  readonly #run: { readonly context: RunContext };

  constructor(run: TaskRun, methods: HandleMethods) {
    this.taskId = run.taskId;
    this.token = run.token;
    this.budget = run.tracker;
    this.emit = methods.emit;
    this.progress = methods.progress;
    this.callTool = methods.callTool;
    this.addArtifact = methods.addArtifact;
    this.addMessage = methods.addMessage;
    this.sleep = methods.sleep;
    this.infer = methods.infer;
    this.sendTaskTo = methods.sendTaskTo;
    this.#run = run;
  }

  get context(): RunContext {
    return this.#run.context;
  }

  /** Read on demand: the token makes its AbortController only for a run that uses the signal. */
  get signal(): AbortSignal {
    return this.token.signal;
  }
}

/** Task messages as chat messages: text parts joined, data parts as JSON. */
export function taskToLLMMessages(task: Task): LLMMessage[] {
  return task.messages.map((message) => ({
    role: message.role === 'agent' ? 'assistant' : message.role === 'system' ? 'system' : 'user',
    content: message.parts
      .map((part) =>
        part.type === 'text' && typeof part.content === 'string'
          ? part.content
          : JSON.stringify(part.content ?? null),
      )
      .join('\n'),
  }));
}

/** The code a failed task's `metadata.error` names. */
function errorCodeOf(task: Task): string | undefined {
  const error = task.metadata.error;
  return isRecord(error) && typeof error.code === 'string' ? error.code : undefined;
}

function cancelReasonOf(error: unknown): string | null {
  if (error instanceof TaskCanceledError && isRecord(error.data) && typeof error.data.reason === 'string')
    return error.data.reason;
  return error instanceof TaskCanceledError ? error.message : null;
}

/** Decides the terminal state of a task that `execute` returned. */
export function resultState(state: TaskState): TaskState {
  if (state === 'submitted' || state === 'working') return 'completed';
  return isTerminalState(state) || state === 'input-required' || state === 'auth-required'
    ? state
    : 'completed';
}

/** A deep copy that survives values JSON cannot carry (they are dropped, as on the wire). */
export function jsonClone<T>(value: T): T {
  try {
    return snapshot(value);
  } catch {
    return value;
  }
}
