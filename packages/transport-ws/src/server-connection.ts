import {
  InternalError,
  InvalidRequestError,
  isFinalEvent,
  MethodNotFoundError,
  parseCancelRequest,
  UnavailableError,
  validateTask,
  type CallContext,
  type SecurityContextLike,
  type TaskHandler,
  type TaskStatusEvent,
} from '@agent/core';
import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { raceAbort } from '@agent/core';
import { BoundedSender } from './bounded-sender.js';
import {
  checkRequestFrame,
  decodeJson,
  errorFrame,
  frameId,
  type ConnectionKind,
  type RequestFrame,
  type TaskCancelFrame,
  type TaskSendFrame,
} from './frames.js';
import { startKeepalive } from './keepalive.js';

export interface ServerConnectionOptions {
  socket: WebSocket;
  kind: ConnectionKind;
  handler: TaskHandler;
  security?: SecurityContextLike;
  headers: Record<string, string>;
  maxBufferedBytes: number;
  maxInFlight: number;
  pingIntervalMs: number;
}

const OPS_BY_KIND: Record<ConnectionKind, ReadonlySet<string>> = {
  data: new Set(['task.send', 'agent.card', 'call.abort']),
  control: new Set(['task.cancel', 'agent.card', 'call.abort']),
};

/** Serves one accepted socket: decodes request frames, runs them concurrently, answers by `id`. */
export class ServerConnection {
  private readonly calls = new Map<string, AbortController>();
  private readonly sender: BoundedSender;
  private readonly idleWaiters: Array<() => void> = [];
  private accepting = true;

  constructor(private readonly options: ServerConnectionOptions) {
    const { socket } = options;
    this.sender = new BoundedSender(socket, options.maxBufferedBytes, (congested) => {
      if (!congested && socket.isPaused) socket.resume();
    });
    socket.on('message', (data, isBinary) => {
      this.onMessage(data, isBinary);
      // A peer that sends while it does not read would make every reply wait in memory: stop
      // reading until it drains. Frames already read in the same chunk are still answered.
      if (this.sender.isCongested && !socket.isPaused) socket.pause();
    });
    // ws emits 'close' after every 'error'; the close handler does the cleanup.
    socket.on('error', () => undefined);
    socket.once('close', () => this.abortAll(new UnavailableError('WebSocket connection closed')));
    startKeepalive(socket, options.pingIntervalMs);
  }

  /** Resolves once no call is running on this socket. */
  whenIdle(): Promise<void> {
    if (this.calls.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * New task requests are refused with UNAVAILABLE from now on; running calls continue. A control
   * socket keeps accepting cancels, which help the drain finish.
   */
  stopAccepting(): void {
    if (this.options.kind === 'data') this.accepting = false;
  }

  /**
   * Ends the connection for shutdown: every running call gets an UNAVAILABLE error frame, its signal
   * aborts (not a task cancel), and the socket closes with 1001 (going away).
   */
  shutdown(): void {
    const { socket } = this.options;
    const error = new UnavailableError('Server is shutting down');
    for (const id of this.calls.keys()) {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(errorFrame(id, error)));
    }
    this.abortAll(error);
    if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING)
      socket.close(1001, 'server stopping');
  }

  /** Cuts the socket without a close handshake (a peer that did not answer the close frame). */
  terminate(): void {
    this.options.socket.terminate();
  }

  private abortAll(reason: Error): void {
    for (const controller of this.calls.values()) controller.abort(reason);
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      void this.reply(
        errorFrame(null, new InvalidRequestError('Binary frames are not supported; send JSON text frames')),
      );
      return;
    }
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.from(data as ArrayBuffer).toString('utf8');
    let value: unknown;
    let frame: RequestFrame;
    try {
      value = decodeJson(text);
      frame = checkRequestFrame(value);
    } catch (error) {
      void this.reply(errorFrame(frameId(value), error));
      return;
    }
    this.dispatch(frame);
  }

  private dispatch(frame: RequestFrame): void {
    const { kind } = this.options;
    if (!OPS_BY_KIND[kind].has(frame.op)) {
      const where = kind === 'data' ? '/ws/control' : '/ws';
      void this.reply(
        errorFrame(
          frame.id,
          new MethodNotFoundError(`op ${frame.op} is not served on the ${kind} connection; use ${where}`),
        ),
      );
      return;
    }
    if (frame.op === 'call.abort') {
      this.calls.get(frame.id)?.abort(new UnavailableError('Call aborted by the client'));
      return;
    }
    if (!this.accepting) {
      void this.reply(errorFrame(frame.id, new UnavailableError('Server is shutting down')));
      return;
    }
    if (this.calls.has(frame.id)) {
      void this.reply(
        errorFrame(
          frame.id,
          new InvalidRequestError(`Request id ${frame.id} is already in flight on this socket`),
        ),
      );
      return;
    }
    if (this.calls.size >= this.options.maxInFlight) {
      void this.reply(
        errorFrame(
          frame.id,
          new UnavailableError(
            `Too many requests in flight on this socket (max ${this.options.maxInFlight})`,
          ),
        ),
      );
      return;
    }
    const controller = new AbortController();
    this.calls.set(frame.id, controller);
    const ctx: CallContext = {
      signal: controller.signal,
      headers: this.options.headers,
      transport: 'ws',
      ...(this.options.security ? { security: this.options.security } : {}),
    };
    void this.run(frame, ctx).finally(() => {
      this.calls.delete(frame.id);
      if (this.calls.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }

  private async run(frame: Exclude<RequestFrame, { op: 'call.abort' }>, ctx: CallContext): Promise<void> {
    const { handler } = this.options;
    try {
      switch (frame.op) {
        case 'task.send':
          await this.runTask(frame, ctx);
          return;
        case 'agent.card': {
          const card = await raceAbort(Promise.resolve(handler.getAgentCard(ctx)), ctx.signal);
          await this.sender.send({ op: 'result', id: frame.id, card });
          return;
        }
        case 'task.cancel': {
          const { taskId, reason } = cancelRequestOf(frame);
          const task = await raceAbort(handler.cancelTask(taskId, reason, ctx), ctx.signal);
          await this.sender.send({ op: 'result', id: frame.id, task });
          return;
        }
      }
    } catch (error) {
      // An aborted call has nobody to answer (client gone) or was answered by shutdown().
      if (ctx.signal.aborted) return;
      await this.reply(errorFrame(frame.id, error));
    }
  }

  private async runTask(frame: TaskSendFrame, ctx: CallContext): Promise<void> {
    const task = validateTask(frame.task);
    const { handler } = this.options;
    if (frame.stream !== true) {
      const result = await raceAbort(handler.handleTask(task, ctx), ctx.signal);
      await this.sender.send({ op: 'result', id: frame.id, task: result });
      return;
    }
    const iterator = handler.handleTaskStreaming(task, ctx)[Symbol.asyncIterator]();
    let final: TaskStatusEvent | undefined;
    let exhausted = false;
    try {
      for (;;) {
        const next = await raceAbort(iterator.next(), ctx.signal);
        if (next.done) {
          exhausted = true;
          break;
        }
        // Awaiting the sender is the back-pressure: the handler is not pulled while the peer is slow.
        await this.sender.send({ op: 'event', id: frame.id, event: next.value }, ctx.signal);
        if (isFinalEvent(next.value)) {
          final = next.value;
          break;
        }
      }
    } finally {
      if (!exhausted) void Promise.resolve(iterator.return?.()).catch(() => undefined);
    }
    if (!final) throw new InternalError('The task stream ended without a final task.status');
    if (!final.task) throw new InternalError('The final task.status carries no task');
    await this.sender.send({ op: 'result', id: frame.id, task: final.task });
  }

  private async reply(frame: object): Promise<void> {
    try {
      await this.sender.send(frame);
    } catch {
      // The socket closed: nobody is left to tell.
    }
  }
}

function cancelRequestOf(frame: TaskCancelFrame): { taskId: string; reason?: string } {
  // The frame's own `id` is the request id, so it must not be read as the task id.
  const { task_id, reason, metadata } = frame as TaskCancelFrame & { metadata?: unknown };
  return parseCancelRequest({ task_id, reason, metadata });
}
