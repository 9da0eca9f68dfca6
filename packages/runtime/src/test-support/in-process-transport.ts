/**
 * A minimal in-process Transport for delegation tests: `send` routes by agent name through core's
 * `dispatchOperation`, as the real RuntimeTransport does (which this package must not depend on).
 */
import {
  NotFoundError,
  UnsupportedOperationError,
  type CallContext,
  type ClientRequestSpec,
  type SecurityContextLike,
  type SendOptions,
  type Task,
  type TaskEvent,
  type TaskFunction,
  type TaskHandler,
  type Transport,
} from '@agent/core';
import { dispatchOperation } from '@agent/core/internal';

export class InProcessNetwork {
  readonly handlers = new Map<string, TaskHandler>();
  /** Every request sent, in order: `{from, operation, target}`. */
  readonly log: { from: string; operation: string; target: string; data: unknown }[] = [];

  transport(name: string): InProcessTransport {
    return new InProcessTransport(this, name);
  }
}

export class InProcessTransport implements Transport {
  readonly kind = 'memory' as const;
  started = false;
  stopped = false;

  constructor(
    private readonly network: InProcessNetwork,
    private readonly name: string,
  ) {}

  bind(handler: TaskHandler): void {
    this.network.handlers.set(this.name, handler);
  }

  onTaskReceived(_handler: TaskFunction): void {
    throw new UnsupportedOperationError('bind a TaskHandler instead');
  }

  async start(): Promise<void> {
    this.started = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  async send<TResult = unknown>(
    spec: ClientRequestSpec,
    baseUrl: string,
    data?: unknown,
    _params?: Record<string, string>,
    options: SendOptions = {},
  ): Promise<TResult> {
    const target = baseUrl.replace(/^runtime:\/\//, '');
    this.network.log.push({ from: this.name, operation: spec.name, target, data });
    const handler = this.network.handlers.get(target);
    if (!handler) throw new NotFoundError(`No agent named ${target}`);
    const ctx: CallContext = {
      signal: options.signal ?? new AbortController().signal,
      headers: {},
      transport: 'memory',
    };
    return (await dispatchOperation(handler, spec.name, data, ctx)) as TResult;
  }

  async *subscribe(agentUrl: string, task: Task): AsyncIterable<TaskEvent> {
    const handler = this.network.handlers.get(agentUrl.replace(/^runtime:\/\//, ''));
    if (!handler) throw new NotFoundError(`No agent named ${agentUrl}`);
    yield* handler.handleTaskStreaming(task, {
      signal: new AbortController().signal,
      headers: {},
      transport: 'memory',
    });
  }

  async authenticate(_credentials: string): Promise<SecurityContextLike> {
    throw new UnsupportedOperationError('no authenticator');
  }

  validateUrl(): boolean {
    return true;
  }
}
