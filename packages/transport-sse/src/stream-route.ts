/**
 * `POST /tasks/stream`: the request is read and checked first (errors get a plain HTTP error body),
 * then the event stream opens and carries the handler's TaskEvents until the final status.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AgentError,
  InternalError,
  isFinalEvent,
  MethodNotFoundError,
  PayloadTooLargeError,
  readTaskPayload,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
  UnavailableError,
} from '@agent/core';
import { parseJson, readBody, sendError } from './http-io.js';
import { parseJsonRpcRequest, STREAM_METHOD, type JsonRpcId } from './json-rpc.js';
import { encodeErrorFrame, encodeEventFrame, HEARTBEAT_FRAME } from './sse-frames.js';

export interface StreamRouteOptions {
  handler: TaskHandler;
  maxBodyBytes: number;
  heartbeatMs: number;
  cancelOnDisconnect: boolean;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Reverse proxies (nginx) buffer responses unless told not to.
  'x-accel-buffering': 'no',
} as const;

/** The abort reason of a call whose client went away; one shared instance so it can be recognized. */
export const CLIENT_GONE = new UnavailableError('The client disconnected');

/** The cancel reason recorded when `cancelOnDisconnect` cancels a task. */
export const DISCONNECT_CANCEL_REASON = 'client disconnected';

const ABORTED = Symbol('aborted');

/**
 * The handler's events, or ABORTED as soon as the signal fires; a pending `next()` is then left to
 * settle on its own. One abort listener serves the whole stream (per-event listeners cost throughput).
 */
class AbortableEvents<T> {
  private wake: ((value: typeof ABORTED) => void) | undefined;
  private readonly onAbort = () => this.wake?.(ABORTED);

  constructor(
    private readonly iterator: AsyncIterator<T>,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  next(): Promise<IteratorResult<T> | typeof ABORTED> {
    if (this.signal.aborted) return Promise.resolve(ABORTED);
    return new Promise((resolve, reject) => {
      this.wake = resolve;
      this.iterator.next().then(resolve, reject);
    });
  }

  dispose(): void {
    this.wake = undefined;
    this.signal.removeEventListener('abort', this.onAbort);
  }
}

/** Writes and, when the socket buffer is full, waits for it to drain so a slow client holds back the handler. */
function writeText(res: ServerResponse, text: string, signal: AbortSignal): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  // Frames written in the same tick leave in one socket write.
  if (!res.writableCorked) {
    res.cork();
    process.nextTick(() => res.uncork());
  }
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

interface StreamRequest {
  id: JsonRpcId;
  task: Task;
}

async function readStreamRequest(req: IncomingMessage, maxBodyBytes: number): Promise<StreamRequest> {
  const request = parseJsonRpcRequest(parseJson(await readBody(req, maxBodyBytes)));
  if (request.method !== STREAM_METHOD) {
    throw new MethodNotFoundError(`POST /tasks/stream carries ${STREAM_METHOD}, not ${request.method}`);
  }
  return { id: request.id ?? null, task: readTaskPayload(request.params) };
}

export async function serveStream(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: CallContext,
  options: StreamRouteOptions,
): Promise<void> {
  let request: StreamRequest;
  try {
    request = await readStreamRequest(req, options.maxBodyBytes);
  } catch (error) {
    sendError(res, error, error instanceof PayloadTooLargeError ? { connection: 'close' } : {});
    return;
  }
  const { signal } = ctx;
  if (signal.aborted) {
    sendError(res, signal.reason);
    return;
  }

  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  let frameId = 0;
  let sawFinal = false;
  const heartbeat =
    options.heartbeatMs > 0
      ? setTimeout(function beat() {
          if (res.destroyed || res.writableEnded) return;
          res.write(HEARTBEAT_FRAME);
          heartbeat?.refresh();
        }, options.heartbeatMs)
      : undefined;
  heartbeat?.unref();
  const write = (text: string) => {
    heartbeat?.refresh();
    return writeText(res, text, signal);
  };

  let iterator: AsyncIterator<TaskEvent> | undefined;
  let events: AbortableEvents<TaskEvent> | undefined;
  try {
    iterator = options.handler.handleTaskStreaming(request.task, ctx)[Symbol.asyncIterator]();
    events = new AbortableEvents(iterator, signal);
    for (;;) {
      const step = await events.next();
      if (step === ABORTED) break;
      if (step.done) {
        await write(
          encodeErrorFrame(
            ++frameId,
            request.id,
            new InternalError('The task handler ended the stream without a final status'),
          ),
        );
        break;
      }
      await write(encodeEventFrame(++frameId, request.id, step.value));
      if (isFinalEvent(step.value)) {
        sawFinal = true;
        break;
      }
    }
  } catch (error) {
    if (!signal.aborted) await write(encodeErrorFrame(++frameId, request.id, error));
  } finally {
    clearTimeout(heartbeat);
    events?.dispose();
    // Lets the handler's generator run its cleanup; it may still be awaiting, so do not wait for it.
    const pending = iterator;
    if (pending?.return)
      void Promise.resolve()
        .then(() => pending.return?.())
        .catch(() => undefined);
  }

  const clientGone = signal.aborted && signal.reason === CLIENT_GONE;
  if (signal.aborted && !clientGone && !sawFinal) {
    // The server is stopping: tell the client why its stream ends before the final status.
    res.write(encodeErrorFrame(frameId + 1, request.id, AgentError.from(signal.reason)));
  }
  res.end();

  if (clientGone && !sawFinal && options.cancelOnDisconnect) {
    const cancelCtx: CallContext = { ...ctx, signal: new AbortController().signal };
    // The task may have ended meanwhile (not found / not cancelable): nothing left to do then.
    await Promise.resolve()
      .then(() => options.handler.cancelTask(request.task.id, DISCONNECT_CANCEL_REASON, cancelCtx))
      .catch(() => undefined);
  }
}
