import {
  InvalidRequestError,
  MethodNotFoundError,
  UnavailableError,
  type AgentError,
  type TaskEvent,
} from '@agent/core';
import { raceAbort, ReleasingMap } from '@agent/core/internal';
import type { EventFeed, OperationName, RequestInfo, ServerCall, ServerPipeline } from '@agent/server';
import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { BoundedSender } from './bounded-sender.js';
import {
  callHeaders,
  checkRequestFrame,
  decodeJson,
  errorFrame,
  eventFrame,
  frameId,
  frameText,
  OPS_BY_KIND,
  operationOf,
  payloadOf,
  resultFrame,
  type CallFrame,
  type ConnectionKind,
  type RequestFrame,
} from './codec.js';
import { startKeepalive } from './keepalive.js';

export interface SocketSessionOptions {
  socket: WebSocket;
  kind: ConnectionKind;
  pipeline: ServerPipeline;
  /** The call the handshake opened: its security context covers every frame on this socket. */
  handshake: ServerCall;
  maxBufferedBytes: number;
  maxInFlight: number;
  pingIntervalMs: number;
}

/** One request frame being answered. */
interface InFlight {
  controller: AbortController;
  /** The server gave up on the call (a stop past its grace): its caller still gets an error frame. */
  answerOnAbort: boolean;
}

/**
 * Serves one accepted socket: decodes request frames, hands each to the pipeline as its own call
 * (many in flight, matched by `id`) and encodes what comes back. Every rule between the frame and
 * the handler is the pipeline's; this class only keeps the per-socket bookkeeping a WebSocket
 * needs (ids in flight, `call.abort`, the bounded send buffer, keepalive).
 */
export class SocketSession {
  /** Resolves once the socket has closed. */
  readonly closed: Promise<void>;
  /** A call's request and task hang off its entry: deleted, it must die young (ReleasingMap). */
  private readonly calls = new ReleasingMap<string, InFlight>();
  private idle: (() => void) | undefined;
  private readonly sender: BoundedSender;
  private readonly pipeline: ServerPipeline;

  constructor(private readonly options: SocketSessionOptions) {
    const { socket } = options;
    this.pipeline = options.pipeline;
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
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        // Nobody is left to answer; the handlers see their signals abort (not a task cancel).
        this.abortAll(new UnavailableError('WebSocket connection closed'), false);
        resolve();
      }),
    );
    startKeepalive(socket, options.pingIntervalMs);
  }

  /**
   * Resolves once no call is running on this socket. After the pipeline has drained, what is left
   * is only writing its last frames (a stream's final event and its result).
   */
  whenIdle(): Promise<void> {
    if (this.calls.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.idle = resolve));
  }

  /**
   * Ends the connection once the pipeline has drained: a call still running gets an UNAVAILABLE
   * error frame, its signal aborts, and the socket closes with 1001 (going away).
   */
  shutdown(): Promise<void> {
    const { socket } = this.options;
    const error = new UnavailableError('The server is shutting down');
    if (socket.readyState === socket.OPEN) {
      for (const id of this.calls.keys()) socket.send(JSON.stringify(errorFrame(id, error)));
    }
    this.abortAll(error, false);
    if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING)
      socket.close(1001, 'server stopping');
    return this.closed;
  }

  /** Cuts the socket without a close handshake (a peer that did not answer the close frame). */
  terminate(): void {
    this.options.socket.terminate();
  }

  private abortAll(reason: AgentError, answer: boolean): void {
    for (const entry of this.calls.values()) {
      entry.answerOnAbort = answer;
      entry.controller.abort(reason);
    }
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    let value: unknown;
    let frame: RequestFrame;
    try {
      value = decodeJson(frameText(data, isBinary));
      frame = checkRequestFrame(value);
    } catch (error) {
      this.refuse(frameId(value), error, 'decode');
      return;
    }
    this.dispatch(frame);
  }

  private dispatch(frame: RequestFrame): void {
    const { kind } = this.options;
    if (!OPS_BY_KIND[kind].has(frame.op)) {
      const other = kind === 'data' ? 'control' : 'data';
      const error = new MethodNotFoundError(
        `op ${frame.op} is not served on the ${kind} connection; use the ${other} connection`,
      );
      this.refuse(frame.id, error, frame.op);
      return;
    }
    if (frame.op === 'call.abort') {
      this.calls.get(frame.id)?.controller.abort(new UnavailableError('Call aborted by the client'));
      return;
    }
    if (this.calls.has(frame.id)) {
      this.refuse(
        frame.id,
        new InvalidRequestError(`Request id ${frame.id} is already in flight on this socket`),
      );
      return;
    }
    if (this.calls.size >= this.options.maxInFlight) {
      const error = new UnavailableError(
        `Too many requests in flight on this socket (max ${this.options.maxInFlight})`,
      );
      this.refuse(frame.id, error);
      return;
    }
    const entry: InFlight = { controller: new AbortController(), answerOnAbort: false };
    let call: ServerCall;
    try {
      call = this.pipeline.openOn(this.options.handshake, this.requestOf(entry, frame));
    } catch (error) {
      this.refuse(frame.id, error, operationOf(frame));
      return;
    }
    this.calls.set(frame.id, entry);
    void this.run(frame, call, entry).finally(() => {
      this.calls.delete(frame.id);
      if (this.calls.size === 0) this.idle?.();
    });
  }

  /**
   * What the pipeline knows of one frame: the handshake's headers (with the frame's own trace
   * context), query and tenant, the frame's own signal.
   */
  private requestOf(entry: InFlight, frame: CallFrame): RequestInfo {
    const { headers, query, remoteAddress, tenant } = this.options.handshake.request;
    return {
      headers: callHeaders(headers, frame),
      query,
      remoteAddress,
      tenant,
      signal: entry.controller.signal,
      abort: (reason) => {
        entry.answerOnAbort = true;
        entry.controller.abort(reason);
        // The pipeline gave up on the call (a stream cut off for not reading) and the peer is not
        // draining this socket: the error frame would only wait behind what it did not take, and
        // every other call on the socket is stuck the same way. Cut it, as the HTTP transports close
        // a response nobody drains, so its buffers go now rather than when the peer leaves.
        if (this.sender.isBackedUp) this.terminate();
      },
    };
  }

  private async run(frame: CallFrame, call: ServerCall, entry: InFlight): Promise<void> {
    const operation = operationOf(frame);
    const signal = entry.controller.signal;
    try {
      const feed = this.feedOf(operation, call, payloadOf(frame));
      if (feed) {
        await this.pump(frame.id, operation, feed, signal);
        return;
      }
      // The pipeline keeps tracking a handler that ignores its signal; the caller is not kept waiting.
      const answer = await raceAbort(this.pipeline.unary(call, operation, payloadOf(frame)), signal);
      await this.sender.send(resultFrame(frame.id, operation, answer), signal);
    } catch (error) {
      // A caller that went away is owed nothing.
      if (signal.aborted && !entry.answerOnAbort) return;
      await this.reply(errorFrame(frame.id, this.pipeline.wireError(error, operation, call)));
    }
  }

  /** The event feed of a streaming operation (a new task's stream, or a subscription); undefined for a unary one. */
  private feedOf(operation: OperationName, call: ServerCall, payload: unknown): EventFeed | undefined {
    if (operation === 'stream_task') return this.pipeline.stream(call, payload);
    if (operation === 'subscribe_task') return this.pipeline.subscribe(call, payload);
    return undefined;
  }

  /**
   * Sends a feed's events as the pipeline yields them, each with its `sequence` (it ends after the
   * final status), then the `result` frame with the final status's task. A failure before the first
   * event (an unknown id, a refused request) rejects the first read: the caller gets an `error` frame.
   */
  private async pump(
    id: string,
    operation: OperationName,
    stream: EventFeed,
    signal: AbortSignal,
  ): Promise<void> {
    let last: TaskEvent | undefined;
    let ended = false;
    try {
      for (;;) {
        const step = await raceAbort(stream.next(), signal);
        if (step.done) break;
        last = step.value;
        // Awaiting the sender bounds what waits for a slow peer: the task runs on in the pipeline,
        // its events wait in its record, not in this socket's buffer.
        await this.sender.send(eventFrame(id, step.value), signal);
      }
      ended = true;
    } finally {
      // A consumer that went away is not a cancel: it only detaches, the task runs on.
      if (!ended) void stream.return();
    }
    const task = last?.type === 'task.status' ? last.task : undefined;
    await this.sender.send(resultFrame(id, operation, task), signal);
  }

  private refuse(id: string | null, error: unknown, operation = 'decode'): void {
    void this.reply(errorFrame(id, this.pipeline.wireError(error, operation)));
  }

  private async reply(frame: object): Promise<void> {
    try {
      await this.sender.send(frame);
    } catch {
      // The socket closed: nobody is left to tell.
    }
  }
}
