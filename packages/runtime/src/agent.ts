import { AsyncLocalStorage } from 'node:async_hooks';
import {
  AgentError,
  CLIENT_OPERATIONS,
  ConcurrencyLimit,
  createMessage,
  createTask,
  newId,
  TaskCanceledError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  validateTask,
  ValueError,
  InternalError,
  ValidationError,
  type AgentCard,
  type RunBudgetData,
  type CallContext,
  type JsonObject,
  type ListTasksQuery,
  type Message,
  type Task,
  type TaskEvent,
  type TaskHandler,
  type Transport,
  type GenAiMetricsSink,
  getDefaultLogger,
  type Logger,
} from '@agent/core';
import {
  checkOptionNames,
  copyPlainData,
  handOverEvents,
  isRecord,
  numberOption,
  offerPush,
  optionNames,
  type EventReceiver,
} from '@agent/core/internal';
import type { Authenticator } from '@agent/auth';
import {
  DEFAULT_OWNER,
  type ApprovalStore,
  type EventSink,
  type RunStore,
  type TaskOwner,
} from '@agent/events';
import { maxStreamedEventsOf, TaskTracing } from '@agent/events/internal';
import type { ApprovalHandler } from './approvals.js';
import { authorizeAction, performAction, runTool, type ActionScope } from './authorize.js';
import { BudgetTracker } from './budget-tracker.js';
import { CancellationToken, raceCancel } from './cancellation.js';
import { CapabilityPolicy, type Policy } from './capability-policy.js';
import { errorTypeOf, traced } from './error-type.js';
import { DONE, EventQueue } from './event-queue.js';
import type { LLM } from './llm/types.js';
import { isTransportName, loadTransport, TRANSPORT_NAMES, type TransportName } from './load-transport.js';
import {
  joinRegistry,
  loadRegistry,
  registryOption,
  type AgentRegistryOptions,
  type RegistrySeat,
} from './join-registry.js';
import { RunAction } from './run-action.js';
import { RunBudget, type RunBudgetInit } from './run-budget.js';
import { RunContext } from './run-context.js';
import { TaskRegistry } from './task-registry.js';
import { resultState, TaskRun, type RunHandle, type RunHost } from './task-run.js';
import type { RuntimeEventInput } from './run-events.js';
import { ToolRegistry, type RegisteredTool, type ToolDefinition } from './tools.js';

/** User logic: runs one task. Resolve with the task (or nothing: the runtime completes it). */
export type ExecuteFunction = (task: Task, run: RunHandle) => Promise<Task | void> | Task | void;

export interface AgentOptions {
  /** Discovery metadata; `name` is the agent's name in events and `agent_chain`. */
  card: Partial<AgentCard> & { name: string };
  /**
   * A transport the agent binds itself to, or its name: `'http'`, `'sse'`, `'ws'`, `'grpc'` (serving
   * `card.url`) or `'memory'`, which needs that transport's package (`@agent/transport-<name>`)
   * installed in the program's project.
   */
  transport?: Transport | TransportName;
  /**
   * A client-side transport for outgoing calls (`sendTaskTo`, `sendMessageTo`, `run.sendTaskTo` and
   * the cancels of their child tasks) in place of `transport`, e.g. an `A2ATransport` to call A2A
   * agents. It is never bound or started; `stop()` stops it (releasing its connections).
   */
  outbound?: Transport;
  /**
   * Most delegated calls in flight at once (`sendTaskTo`, `sendMessageTo`, `run.sendTaskTo`, over
   * `outbound` or `transport`): a number, or a ConcurrencyLimit several agents share. A call over it
   * is refused at once with UNAVAILABLE (`data: { retry_after_ms, limit: 'outbound calls' }`), never
   * queued, so a task waiting on peers cannot hold up the agent's inbound work. Default 64.
   */
  outboundLimit?: ConcurrencyLimit | number;
  /** Server-side authenticator: advertised in the card and handed to a transport given by name. */
  authenticator?: Authenticator;
  /** Client-side raw credential for outgoing calls, handed to a transport given by name. */
  credentials?: string;
  /** Capability policy, or its rule map. Default, by design: allow everything. */
  policy?: Policy | Record<string, 'allow' | 'deny' | 'require_approval' | boolean>;
  /**
   * Decides `require_approval` actions in process. Without one (and without `approvalStore`) such
   * actions fail with ApprovalRequiredError.
   */
  approvalHandler?: ApprovalHandler;
  /**
   * Durable approvals, for an agent without an `approvalHandler`: a run whose action needs approval
   * files the request here (owned by the task's owner) and waits until a reviewer decides it, from
   * any process sharing the store (e.g. over `approvalRoutes` of `@agent/transport-http`). Canceling
   * the task withdraws the request. Actions outside a task (`callToolInContext`) still need a handler.
   */
  approvalStore?: ApprovalStore;
  /** Model for the built-in inference loop (the default `execute` when none is given). */
  llm?: LLM;
  /** System prompt of the built-in loop. */
  instructions?: string;
  /** Where task snapshots and run reports go. */
  runStore?: RunStore;
  /**
   * How many streamed events (`task.artifact`, `llm.stream`, `task.progress`) a run report lists;
   * later ones are still folded into its artifacts and final task, and counted in `dropped_events`.
   * Every other event is always listed. A non-negative integer or `Infinity`. Default 1000.
   */
  reportMaxStreamedEvents?: number;
  /** Receives every event of every run as a RunEvent. */
  eventSink?: EventSink;
  /** Agent-level ceiling; a task's `run_context.budget` can only make it stricter. */
  budget?: RunBudget | RunBudgetInit | RunBudgetData;
  /** 0: streams carry only task.* events; 1 (default): every runtime event. Sinks always get all. */
  verbosity?: number;
  /** User logic; alternatively subclass Agent and override `execute`. */
  execute?: ExecuteFunction;
  /** Tools to register at construction. */
  tools?: ToolDefinition[];
  /** Fraction of a budget limit at which `budget.warning` fires. Default 0.8. */
  warningRatio?: number;
  /** Inference steps allowed when the budget sets no `max_steps`. Default 25. */
  maxSteps?: number;
  /** Events buffered per stream before the run waits for the consumer. Default 256. */
  streamBufferSize?: number;
  /** How long a finished task answers cancel with TaskNotCancelable (ms). Default 600000. */
  finishedTaskRetentionMs?: number;
  /**
   * A registry to register the card with on `start()` (needs `@agent/registry` installed in the
   * program's project): heartbeats while the agent runs, registers again after the registry lost
   * the entry, deregisters on `stop()`.
   */
  registry?: AgentRegistryOptions;
  /**
   * Called when a sink, recorder, run store, child cancel or the registry membership (`where` =
   * `'registry'`) fails; those never change a run's outcome.
   */
  onObserverError?: (error: unknown, where: string) => void;
  /**
   * Receives one line per unexpected failure of user logic (`err`, `error_id`, `task_id`); the failed
   * task itself says only `INTERNAL` / `Internal error` with the same `error_id`. Pino-compatible.
   * Default: JSON lines on stderr at `AGENT_LOG_LEVEL` (default `info`).
   */
  logger?: Logger;
  /**
   * OpenTelemetry spans and GenAI metrics of every run, through the global providers of
   * `@opentelemetry/api` when it is installed (nothing is recorded without an SDK registered).
   * `false` starts none; a delegated call still carries the trace. Default `true`.
   */
  tracing?: boolean;
  /**
   * Also receives the GenAI metrics of every model call (token usage by type, duration), with the
   * same values and attributes as the OpenTelemetry instruments, OpenTelemetry or not: e.g. the
   * server's `PipelineMetrics`, so `/metrics` shows them. A sink that throws changes nothing
   * (`onObserverError(error, 'genAiMetrics')`). Default: none.
   */
  genAiMetrics?: GenAiMetricsSink;
}

const OPTION_NAMES = optionNames<AgentOptions>({
  card: true,
  transport: true,
  outbound: true,
  outboundLimit: true,
  authenticator: true,
  credentials: true,
  policy: true,
  approvalHandler: true,
  approvalStore: true,
  llm: true,
  instructions: true,
  runStore: true,
  reportMaxStreamedEvents: true,
  eventSink: true,
  budget: true,
  verbosity: true,
  execute: true,
  tools: true,
  warningRatio: true,
  maxSteps: true,
  streamBufferSize: true,
  finishedTaskRetentionMs: true,
  registry: true,
  onObserverError: true,
  logger: true,
  tracing: true,
  genAiMetrics: true,
});

export interface CallToolOptions {
  signal?: AbortSignal;
  /** Receives the action's events (there is no task stream outside a task). */
  onEvent?: (event: RuntimeEventInput) => void;
}

interface Ambient {
  agent: Agent;
  run: TaskRun;
}

const ambient = new AsyncLocalStorage<Ambient>();

/** The budget of an agent without one (RunBudget is immutable, so one instance serves every run). */
const UNLIMITED = new RunBudget();

/**
 * An agent: runs tasks with a RunContext, budget, policy, approvals, cancellation and events, and
 * implements core's TaskHandler so any transport can serve it.
 */
export class Agent implements TaskHandler {
  readonly transport: Transport | null;
  /** Where outgoing calls go: `outbound` when set, else `transport`. */
  readonly outbound: Transport | null;
  /** Bounds the delegated calls in flight (the `outboundLimit` option). */
  readonly outboundLimit: ConcurrencyLimit;
  readonly policy: Policy | null;
  readonly approvalHandler: ApprovalHandler | null;
  readonly approvalStore: ApprovalStore | null;
  readonly llm: LLM | null;
  readonly instructions: string | null;
  readonly runStore: RunStore | null;
  readonly eventSink: EventSink | null;
  readonly budget: RunBudget | null;
  readonly verbosity: number;
  readonly defaultMaxSteps: number;
  private readonly tools = new ToolRegistry();
  private readonly registry: TaskRegistry;
  /** What a TaskRun reads of its agent; kept apart so the run's plumbing stays off the public API. */
  private readonly host: RunHost;
  private readonly authenticator: Authenticator | null;
  private readonly executeOption: ExecuteFunction | null;
  private readonly warningRatio: number;
  private readonly streamBufferSize: number;
  private readonly onObserverError: ((error: unknown, where: string) => void) | null;
  /** Where unexpected failures of user logic are logged. */
  private readonly logger: Logger;
  private baseCard: AgentCard;
  /**
   * Work left behind that never rejects, held until it settles, for `stop()` to wait for: cancels
   * sent to child tasks, and run reports being written after their runs ended (runs a server records).
   */
  private readonly leftovers = new Set<Promise<void>>();
  private readonly registryOptions: AgentRegistryOptions | null;
  /** The registry membership while the agent runs. */
  private registrySeat: RegistrySeat | null = null;
  private readonly tracing: TaskTracing;

  constructor(options: AgentOptions) {
    if (
      !isRecord(options) ||
      !isRecord(options.card) ||
      typeof options.card.name !== 'string' ||
      options.card.name === ''
    ) {
      throw new ValueError('new Agent({ card }) needs a card with a non-empty name');
    }
    checkOptionNames('Agent', options, OPTION_NAMES);
    this.baseCard = { description: '', ...options.card, url: options.card.url ?? '' } as AgentCard;
    this.authenticator = options.authenticator ?? null;
    this.policy =
      options.policy === undefined
        ? null
        : isPolicy(options.policy)
          ? options.policy
          : new CapabilityPolicy(options.policy);
    this.approvalHandler = options.approvalHandler ?? null;
    if (this.approvalHandler !== null && typeof this.approvalHandler !== 'function')
      throw new ValueError('approvalHandler must be a function');
    this.approvalStore = approvalStoreOption(options.approvalStore);
    this.llm = options.llm ?? null;
    this.instructions = options.instructions ?? null;
    this.runStore = options.runStore ?? null;
    const reportMaxStreamedEvents = maxStreamedEventsOf(
      options.reportMaxStreamedEvents,
      'reportMaxStreamedEvents',
    );
    this.eventSink = options.eventSink ?? null;
    this.budget = RunBudget.from(options.budget);
    this.verbosity = options.verbosity ?? 1;
    this.executeOption = options.execute ?? null;
    if (this.executeOption !== null && typeof this.executeOption !== 'function')
      throw new ValueError('execute must be a function');
    this.warningRatio = options.warningRatio ?? 0.8;
    this.defaultMaxSteps = numberOption('maxSteps', options.maxSteps ?? 25, 25, { min: 1, integer: true });
    this.streamBufferSize = numberOption('streamBufferSize', options.streamBufferSize ?? 256, 256, {
      min: 1,
      integer: true,
    });
    this.onObserverError = options.onObserverError ?? null;
    this.registryOptions = registryOption(options.registry);
    this.outboundLimit = outboundLimitOption(options.outboundLimit);
    this.logger = options.logger ?? getDefaultLogger();
    if (options.tracing !== undefined && typeof options.tracing !== 'boolean')
      throw new ValueError('tracing must be a boolean');
    this.tracing = new TaskTracing({ enabled: options.tracing ?? true });
    const genAiMetrics = genAiMetricsOption(options.genAiMetrics);
    this.registry = new TaskRegistry({
      retentionMs: options.finishedTaskRetentionMs,
      keepTasks: this.runStore === null,
    });
    if (typeof this.warningRatio !== 'number' || !(this.warningRatio >= 0 && this.warningRatio <= 1)) {
      throw new ValueError('warningRatio must be a number between 0 and 1');
    }
    for (const tool of options.tools ?? []) this.registerTool(tool);
    this.host = {
      name: this.name,
      policy: this.policy,
      approvalHandler: this.approvalHandler,
      approvalStore: this.approvalStore,
      tools: this.tools,
      llm: this.llm,
      instructions: this.instructions,
      defaultMaxSteps: this.defaultMaxSteps,
      verbosity: this.verbosity,
      eventSink: this.eventSink,
      runStore: this.runStore,
      reportMaxStreamedEvents,
      registry: this.registry,
      logger: this.logger,
      genAiMetrics,
      delegate: (target, task, run) => this.delegate(target, task, run),
      reportObserverError: (error, where) => this.reportObserverError(error, where),
      afterRun: (write) => this.holdUntilSettled(write),
    };
    this.transport = resolveTransport(options, this.baseCard.url);
    this.transport?.bind(this);
    this.outbound = outboundOption(options.outbound) ?? this.transport;
  }

  get name(): string {
    return this.baseCard.name;
  }

  /** The card, with `securitySchemes` when an authenticator is configured. */
  get card(): AgentCard {
    const card: AgentCard = structuredClone(this.baseCard);
    card.capabilities = { streaming: true, ...card.capabilities };
    if (this.authenticator) {
      const scheme = this.authenticator.securityScheme;
      card.securitySchemes = { ...card.securitySchemes, [scheme.authType]: scheme.toDict() };
    }
    return card;
  }

  /**
   * Changes card fields after construction, e.g. the `url` once a transport bound to port 0 knows
   * its real address. The name is fixed: tools, events and stores are keyed by it.
   */
  updateCard(patch: Partial<Omit<AgentCard, 'name'>>): void {
    this.baseCard = { ...this.baseCard, ...structuredClone(patch), name: this.baseCard.name };
  }

  /** Ids of the tasks running now, of every owner. */
  get activeTaskIds(): string[] {
    return this.registry.ids;
  }

  getAgentCard(_ctx?: CallContext): AgentCard {
    return this.card;
  }

  /**
   * Starts the transport, when one is set. The card's `url` then follows the address the transport
   * really serves (a port 0 becomes the port listened on) unless the card names another address,
   * e.g. a public one in front of a proxy. With `registry`, then registers that card: a refused or
   * failed first registration stops the transport again and rejects with the registry's error.
   */
  async start(): Promise<void> {
    // Loaded before anything listens, so a missing package leaves nothing to undo.
    const registry = this.registryOptions ? loadRegistry() : null;
    const transport = this.transport;
    if (transport) {
      const configured = addressOf(transport);
      await transport.start();
      const actual = addressOf(transport);
      if (actual !== undefined && (this.baseCard.url === '' || this.baseCard.url === configured))
        this.baseCard = { ...this.baseCard, url: actual };
    }
    if (!registry || !this.registryOptions || this.registrySeat) return;
    let seat: RegistrySeat | null = null;
    try {
      if (this.baseCard.url === '')
        throw new ValueError(
          'registry needs an address to advertise: give the agent a transport or a card.url',
        );
      seat = joinRegistry(
        registry,
        this.registryOptions,
        () => this.getAgentCard(),
        (error) => this.reportObserverError(error, 'registry'),
      );
      // Held before the registration settles: a stop() meanwhile leaves it (and this start rejects).
      this.registrySeat = seat;
      await seat.joined;
    } catch (error) {
      if (seat) {
        if (this.registrySeat === seat) this.registrySeat = null;
        await seat.leave().catch((leaveError: unknown) => this.reportObserverError(leaveError, 'registry'));
      }
      await transport?.stop();
      throw error;
    }
  }

  /**
   * Deregisters from the registry now and stops heartbeating, without stopping anything else: what a
   * server does first when a graceful stop begins, so nobody discovers it while it drains. `stop()`
   * does it too. Idempotent; a failure goes to `onObserverError` (`'registry'`).
   */
  async leaveRegistry(): Promise<void> {
    const seat = this.registrySeat;
    this.registrySeat = null;
    if (!seat) return;
    try {
      await seat.leave();
    } catch (error) {
      this.reportObserverError(error, 'registry');
    }
  }

  /**
   * Deregisters from the registry (when `registry` is set), cancels running tasks (reason `agent
   * stopping`), waits for them and for the run reports still being written, then stops the
   * transport. Idempotent.
   */
  async stop(): Promise<void> {
    // Leave the registry first: nobody should discover an agent that is going away.
    await this.leaveRegistry();
    const running = this.registry.entries;
    for (const entry of running) if (entry.finalState === null) entry.token.cancel('agent stopping');
    await Promise.all(running.map((entry) => entry.done));
    await Promise.all([...this.leftovers]);
    await this.transport?.stop();
    if (this.outbound !== this.transport) await this.outbound?.stop();
  }

  registerTool<TArgs extends JsonObject = JsonObject>(definition: ToolDefinition<TArgs>): RegisteredTool {
    return this.tools.register(definition);
  }

  /** The live token of an active task of the caller's owner, or undefined. */
  getCancellationToken(taskId: string, ctx?: CallContext): CancellationToken | undefined {
    return this.registry.get(taskOwner(ctx), taskId)?.token;
  }

  handleTask(task: Task, ctx?: CallContext): Promise<Task> {
    return this.runTask(task, ctx);
  }

  /**
   * Runs a task with active-task registration and resolves with the finished task: completed,
   * failed (with `metadata.error`) or canceled. Rejects only for input that is not a task or a
   * task id that is already running.
   */
  runTask(task: Task, ctx?: CallContext): Promise<Task> {
    let run: TaskRun;
    try {
      run = this.startRun(task, null, ctx);
    } catch (error) {
      return Promise.reject(error);
    }
    void this.drive(run);
    // The run's own promise, not an async wrapper around it (one promise and three ticks less).
    return run.done;
  }

  /**
   * Runs a task and yields its events as they happen, ending with exactly one final `task.status`.
   * As with a generator, the run starts at the first `next()` (which rejects when the task cannot
   * start), and an iterable never read runs nothing. Leaving early detaches the stream (the run goes
   * on): it is not a cancel. The events come straight from the run's queue, one promise each, rather
   * than through a generator re-yielding another.
   */
  handleTaskStreaming(task: Task, ctx?: CallContext): AsyncIterable<TaskEvent> {
    let events: AsyncIterator<TaskEvent> | null = null;
    let over = false;
    /** Starts the run on its first read, by pull or by push; throws when it cannot start. */
    const start = (receiver: EventReceiver<TaskEvent> | null): AsyncIterator<TaskEvent> => {
      try {
        const queue = new EventQueue<TaskEvent>(this.streamBufferSize);
        if (receiver !== null) queue.deliverTo(receiver);
        const run = this.startRun(task, queue, ctx);
        void this.drive(run);
        return (events = queue[Symbol.asyncIterator]());
      } catch (error) {
        over = true;
        throw error;
      }
    };
    const iterator: AsyncIterableIterator<TaskEvent> = {
      next: () => {
        if (events !== null) return events.next();
        if (over) return Promise.resolve(DONE);
        let started: AsyncIterator<TaskEvent>;
        try {
          started = start(null);
        } catch (error) {
          return Promise.reject(error);
        }
        return started.next();
      },
      return: () => {
        over = true;
        return events?.return ? events.return() : Promise.resolve(DONE);
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    // A reader that attaches a receiver gets each event from inside the run's emit, with no
    // promise or turn per event; the run waits only when the receiver asks it to.
    offerPush<AsyncIterableIterator<TaskEvent>, TaskEvent>(iterator, (receiver) => {
      if (events !== null || over) throw new ValueError('This event stream is already being read');
      start(receiver);
    });
    // Each event is built for the queue and copied by the recorder; a sink may keep what it is
    // given, so only without one does the reader get events nobody else holds.
    return this.eventSink === null ? handOverEvents(iterator) : iterator;
  }

  /**
   * Cancels one of the caller's own tasks. Another owner's task, running or finished, is answered
   * exactly as an unknown id is, so a cancel never tells a stranger that an id exists.
   */
  async cancelTask(taskId: string, reason?: string, ctx?: CallContext): Promise<Task> {
    if (typeof taskId !== 'string' || taskId === '') throw new ValueError('cancelTask needs a task id');
    const owner = taskOwner(ctx);
    const entry = this.registry.get(owner, taskId);
    if (!entry) {
      if (this.registry.finishedState(owner, taskId) !== undefined)
        throw new TaskNotCancelableError(`Task ${taskId} has already finished`, {
          data: { task_id: taskId },
        });
      throw new TaskNotFoundError(`Task ${taskId} is not active`, { data: { task_id: taskId } });
    }
    if (entry.finalState !== null) {
      throw new TaskNotCancelableError(`Task ${taskId} is already ${entry.finalState}`, {
        data: { task_id: taskId, state: entry.finalState },
      });
    }
    const why = typeof reason === 'string' && reason !== '' ? reason : 'canceled';
    for (const delegation of entry.delegations)
      this.cancelChild(delegation.target, delegation.childTaskId, why);
    entry.token.cancel(why);
    return entry.done;
  }

  /** One of the caller's own tasks; `null` for an unknown id and for another owner's task. */
  async getTask(taskId: string, ctx?: CallContext): Promise<Task | null> {
    const owner = taskOwner(ctx);
    const entry = this.registry.get(owner, taskId);
    if (entry) return structuredClone(entry.task);
    const finished = this.registry.finishedTask(owner, taskId);
    if (finished) return structuredClone(finished);
    const record = this.runStore ? await this.runStore.getTaskRecord(taskId, owner) : null;
    return record ? record.task : null;
  }

  /** The caller's own tasks: from the run store when there is one, else those running now. */
  async listTasks(query: ListTasksQuery, ctx?: CallContext): Promise<Task[]> {
    const owner = taskOwner(ctx);
    if (this.runStore)
      return (await this.runStore.listTaskRecords({ ...query, owner })).map((record) => record.task);
    const tasks = this.registry.entries
      .filter((entry) => sameOwner(entry.owner, owner))
      .map((entry) => entry.task);
    return tasks
      .filter((task) => query.state === undefined || task.state === query.state)
      .slice(0, query.limit ?? tasks.length)
      .map((task) => structuredClone(task));
  }

  /**
   * Runs a tool outside a task, with the same validation, policy and approval handling. `context`
   * supplies permissions (a RunContext, its dict form, or null). Rejects with the typed error.
   */
  async callToolInContext(
    name: string,
    context: RunContext | JsonObject | null,
    args: JsonObject = {},
    options: CallToolOptions = {},
  ): Promise<unknown> {
    const runContext =
      context === null || context === undefined
        ? null
        : context instanceof RunContext
          ? context
          : RunContext.fromDict(context);
    const token = new CancellationToken();
    const onAbort = (): void =>
      token.cancel(typeof options.signal?.reason === 'string' ? options.signal.reason : 'aborted');
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const scope: ActionScope = {
      policy: this.policy,
      approvalHandler: this.approvalHandler,
      context: runContext,
      token,
      emit: async (event) => {
        options.onEvent?.({
          ...event,
          agent_name: this.name,
          ...(runContext ? { run_id: runContext.runId } : {}),
        });
      },
    };
    try {
      return await runTool(this.tools.require(name), args, scope);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Sends a task to another agent (URL or name) over this agent's transport and resolves with the
   * finished task. Inside a run it is a policy-checked `agent.call` action with capability
   * `agent.call`, the child gets `context.child()`, and canceling this task cancels the child.
   */
  sendTaskTo(target: string, task: Task): Promise<Task> {
    const current = ambient.getStore();
    return this.delegate(target, task, current?.agent === this ? current.run : null);
  }

  /** Sends a message as a new task and resolves with the other agent's last reply message. */
  async sendMessageTo(target: string, message: Message | string): Promise<Message> {
    const outgoing = typeof message === 'string' ? createMessage(message) : message;
    const result = await this.sendTaskTo(target, createTask(outgoing));
    if (result.state === 'failed') throw AgentError.fromJSON(result.metadata.error);
    if (result.state === 'canceled')
      throw new TaskCanceledError(`Task ${result.id} was canceled`, {
        data: { reason: result.metadata.cancel_reason ?? null },
      });
    const reply = [...result.messages].reverse().find((entry) => entry.role === 'agent');
    if (!reply)
      throw new InternalError(`Agent ${target} answered without a message`, {
        data: { task_id: result.id, state: result.state },
      });
    return reply;
  }

  /** Delegation, used by `sendTaskTo` and `run.sendTaskTo`. */
  private async delegate(target: string, task: Task, run: TaskRun | null): Promise<Task> {
    const transport = this.outbound;
    if (!transport)
      throw new ValueError('sendTaskTo needs a transport: pass new Agent({ transport }) or { outbound }');
    if (typeof target !== 'string' || target === '')
      throw new ValueError('sendTaskTo needs a target URL or agent name');
    const child = validateTask(cloneInput(task));
    const limit = this.outboundLimit;
    if (!run) {
      RunContext.ensureTaskContext(child);
      return limit.run(() => transport.send<Task>(CLIENT_OPERATIONS.send_task, target, child));
    }
    run.token.raiseIfCancelled();
    if (child.metadata.run_context === undefined) child.metadata.run_context = run.context.child().toDict();
    RunContext.ensureTaskContext(child);
    const delegationId = newId();
    const action = new RunAction({
      kind: 'agent.call',
      name: target,
      payload: { target, task_id: child.id },
      capabilities: ['agent.call'],
      description: `Delegate task ${child.id} to ${target}`,
    });
    const scope = run.scope({ delegation_id: delegationId });
    await authorizeAction(action, scope);
    const delegation = { delegationId, target, childTaskId: child.id };
    run.delegations.add(delegation);
    try {
      return await performAction(
        action,
        scope,
        (signal) => {
          // The other agent's task span becomes a child of this call's span, in this task's trace.
          const span = run.trace.delegation(target, child.id, run.context.traceId);
          // The slot is taken after policy and approval (a reviewer may take hours) and held
          // until the call settles; over the limit the action fails at once.
          return traced(span, () =>
            limit.run(() =>
              transport.send<Task>(CLIENT_OPERATIONS.send_task, target, child, undefined, {
                signal,
                ...span.outgoing,
              }),
            ),
          );
        },
        (result) => ({
          task_id: result.id,
          state: result.state,
        }),
      );
    } finally {
      run.delegations.delete(delegation);
    }
  }

  /**
   * User logic. The default runs the built-in inference loop on `llm` and answers with its final
   * text; override it in a subclass or pass `execute`.
   */
  protected async execute(task: Task, run: RunHandle): Promise<Task | void> {
    if (this.executeOption) return this.executeOption(task, run);
    if (!this.llm)
      throw new UnsupportedOperationError(`Agent ${this.name} has neither an execute function nor an llm`);
    const result = await run.infer();
    await run.addMessage(createMessage(result.content, { role: 'agent' }));
  }

  /** Hands a failure of a sink, recorder, run store, child cancel or the registry to `onObserverError`. */
  private reportObserverError(error: unknown, where: string): void {
    try {
      this.onObserverError?.(error, where);
    } catch {
      // An error handler that throws must not change the run either.
    }
  }

  private startRun(input: Task, queue: EventQueue<TaskEvent> | null, ctx: CallContext | undefined): TaskRun {
    const owner = taskOwner(ctx);
    // A server that records this task in our own store saves its snapshots: saving them again here
    // would copy and redact the task twice more per run for nothing.
    const snapshotsByServer = this.runStore !== null && ctx?.taskStore === this.runStore;
    const task = validateTask(cloneInput(input));
    const trace = this.tracing.start({
      taskId: task.id,
      agentName: this.name,
      headers: ctx?.headers,
      served: ctx !== undefined,
    });
    // The task's own run_context trace id wins (a delegated, resubmitted or continued task keeps
    // its trace); else the caller's `traceparent`, else the task span's new trace.
    const context = RunContext.ensureTaskContext(task, { agentName: this.name, traceId: trace.traceId });
    trace.bind({ runId: context.runId, traceId: context.traceId, sessionId: context.sessionId });
    const budget = (this.budget ?? UNLIMITED).combine(context.budget);
    const token = new CancellationToken();
    let run: TaskRun | null = null;
    const tracker = new BudgetTracker(budget, {
      warningRatio: this.warningRatio,
      emit: (event) => run?.emit(event),
    });
    task.state = 'working';
    run = new TaskRun(this.host, task, context, token, tracker, queue, owner, trace, snapshotsByServer);
    try {
      this.registry.register(run);
    } catch (error) {
      trace.end('rejected', errorTypeOf(error));
      throw error;
    }
    return run;
  }

  private async drive(run: TaskRun): Promise<void> {
    try {
      // The first snapshot, when this run saves it (not when the server records it): before the
      // end, persisting saves nothing else.
      if (run.savesSnapshots) await run.persist(structuredClone(run.task));
      run.token.raiseIfCancelled();
      await run.emit({ type: 'task.status', state: 'working', final: false });
      run.token.raiseIfCancelled();
      // Under the task span: model calls, tools, delegations and instrumented user code nest in it.
      const execute = (): Promise<Task | void> =>
        run.trace.run(() => Promise.resolve().then(() => this.execute(run.task, run.handle)));
      // The ambient run only serves `sendTaskTo`, which needs an outbound transport. Without one (and
      // outside another agent's run) it is skipped: an AsyncLocalStorage in use puts async hooks on
      // every promise the process makes afterwards.
      const work =
        this.outbound !== null || ambient.getStore() !== undefined
          ? ambient.run({ agent: this, run }, execute)
          : execute();
      const result = await raceCancel(work, run.token);
      run.token.raiseIfCancelled();
      if (isRecord(result) && result !== run.task) adoptResult(run.task, result as Task);
      await run.finish({ state: resultState(run.task.state) });
    } catch (error) {
      await run.finish({ state: isCancellation(error, run.token) ? 'canceled' : 'failed', error });
    }
  }

  /**
   * Child cancels do not take a slot of `outboundLimit`: there is at most one per delegation in
   * flight (which held a slot), and refusing one would leave the child running for nothing.
   */
  private cancelChild(target: string, childTaskId: string, reason: string): void {
    const transport = this.outbound;
    if (!transport) return;
    const pending = transport
      .send(CLIENT_OPERATIONS.cancel_task, target, { task_id: childTaskId, reason })
      .then(
        () => undefined,
        (error: unknown) => {
          // The child may have finished already; anything else is reported, never thrown.
          if (!(
            error instanceof AgentError &&
            (error.code === 'TASK_NOT_FOUND' || error.code === 'TASK_NOT_CANCELABLE')
          )) {
            this.reportObserverError(error, 'childCancel');
          }
        },
      );
    this.holdUntilSettled(pending);
  }

  /** Keeps `work` (which never rejects) in {@link leftovers} until it settles. */
  private holdUntilSettled(work: Promise<void>): void {
    this.leftovers.add(work);
    void work.finally(() => this.leftovers.delete(work));
  }
}

/**
 * Whom a call acts for: its tenant and authenticated principal. A call without a context (direct
 * library use) acts for the default owner, as does a call that names no tenant and has no principal.
 */
function taskOwner(ctx: CallContext | undefined): TaskOwner {
  if (!ctx) return { ...DEFAULT_OWNER };
  return {
    tenant: ctx.tenant ?? DEFAULT_OWNER.tenant,
    principal_id: ctx.security?.principalId ?? DEFAULT_OWNER.principal_id,
  };
}

function sameOwner(a: TaskOwner, b: TaskOwner): boolean {
  return a.tenant === b.tenant && a.principal_id === b.principal_id;
}

function isCancellation(error: unknown, token: CancellationToken): boolean {
  return token.isCancelled || error instanceof TaskCanceledError;
}

/** Copies what `execute` returned into the live task; reserved runtime keys stay the runtime's. */
function adoptResult(task: Task, result: Task): void {
  if (Array.isArray(result.messages)) task.messages = structuredClone(result.messages);
  if (Array.isArray(result.artifacts)) task.artifacts = structuredClone(result.artifacts);
  if (isRecord(result.metadata)) {
    const runContext = task.metadata.run_context;
    task.metadata = { ...structuredClone(result.metadata), run_context: runContext };
  }
  if (typeof result.state === 'string') task.state = result.state;
}

/** The transport of `new Agent({ transport })`: an instance as it is, a name loaded from its package. */
function resolveTransport(options: AgentOptions, url: string): Transport | null {
  const transport: unknown = options.transport;
  if (transport === undefined || transport === null) return null;
  if (isTransportName(transport)) {
    return loadTransport(transport, {
      url,
      authenticator: options.authenticator,
      credentials: options.credentials,
    });
  }
  const methods = ['bind', 'start', 'stop', 'send'] as const;
  if (!isRecord(transport) || methods.some((method) => typeof transport[method] !== 'function')) {
    throw new ValueError(
      `transport must be a Transport or one of ${TRANSPORT_NAMES.map((name) => `'${name}'`).join(', ')}; got ${
        typeof transport === 'string' ? `'${transport}'` : typeof transport
      }`,
    );
  }
  return transport as unknown as Transport;
}

/** The `outbound` option: a client-side Transport (it only needs `send` and `stop`). */
function outboundOption(outbound: unknown): Transport | null {
  if (outbound === undefined || outbound === null) return null;
  if (!isRecord(outbound) || typeof outbound.send !== 'function' || typeof outbound.stop !== 'function') {
    throw new ValueError('outbound must be a Transport (with send and stop)');
  }
  return outbound as unknown as Transport;
}

/** Delegated calls in flight at once when `outboundLimit` is not given. */
export const DEFAULT_OUTBOUND_LIMIT = 64;

/** The name the overload error of `outboundLimit` gives (`data.limit`). */
export const OUTBOUND_LIMIT_NAME = 'outbound calls';

/** The `outboundLimit` option: a whole number from 1, or a ConcurrencyLimit (shared as it is). */
function outboundLimitOption(value: unknown): ConcurrencyLimit {
  if (value instanceof ConcurrencyLimit) return value;
  const max = value ?? DEFAULT_OUTBOUND_LIMIT;
  if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 1) {
    throw new ValueError(
      `outboundLimit must be a whole number from 1 or a ConcurrencyLimit, got ${String(value)}`,
      { data: { option: 'outboundLimit' } },
    );
  }
  return new ConcurrencyLimit(max, { name: OUTBOUND_LIMIT_NAME });
}

/** The address a transport serves, when it has one (network transports and the in-process one do). */
function addressOf(transport: Transport): string | undefined {
  const url = (transport as { url?: unknown }).url;
  return typeof url === 'string' && url !== '' ? url : undefined;
}

/** The `genAiMetrics` option: anything with `recordTokenUsage` and `recordOperationDuration`. */
function genAiMetricsOption(sink: unknown): GenAiMetricsSink | null {
  if (sink === undefined || sink === null) return null;
  if (
    !isRecord(sink) ||
    typeof sink.recordTokenUsage !== 'function' ||
    typeof sink.recordOperationDuration !== 'function'
  ) {
    throw new ValueError(
      'genAiMetrics must be a GenAiMetricsSink (recordTokenUsage, recordOperationDuration)',
    );
  }
  return sink as unknown as GenAiMetricsSink;
}

const APPROVAL_STORE_METHODS = [
  'createApproval',
  'getApproval',
  'listApprovals',
  'decideApproval',
  'withdrawApproval',
  'waitForDecision',
  'close',
] as const;

/** The `approvalStore` option: anything with the ApprovalStore methods. */
function approvalStoreOption(store: unknown): ApprovalStore | null {
  if (store === undefined || store === null) return null;
  if (!isRecord(store) || APPROVAL_STORE_METHODS.some((method) => typeof store[method] !== 'function')) {
    throw new ValueError(`approvalStore must be an ApprovalStore (${APPROVAL_STORE_METHODS.join(', ')})`);
  }
  return store as unknown as ApprovalStore;
}

function isPolicy(value: unknown): value is Policy {
  return isRecord(value) && typeof (value as { evaluate?: unknown }).evaluate === 'function';
}

/**
 * A private copy of an incoming task; something that cannot be copied is not a task. Plain JSON-like
 * data (what every transport hands over) is copied by a direct walk; anything else goes through
 * structuredClone as before, with its rules and its refusals.
 */
function cloneInput(task: Task): Task {
  const plain = copyPlainData(task);
  if (plain) return plain.copy;
  try {
    return structuredClone(task);
  } catch (error) {
    throw new ValidationError(`Invalid task: ${(error as Error).message}`, {
      data: { errors: [{ pointer: '/', message: 'must be JSON data' }] },
    });
  }
}
