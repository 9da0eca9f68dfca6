/**
 * `POST /tasks/stream`: the JSON-RPC `tasks/stream` request becomes `pipeline.stream`, whose events
 * (under the pipeline's stream rule: exactly one final status) are written as `text/event-stream`
 * frames. The response headers wait for the first event, so that a request refused before it (an
 * invalid task, a handler that fails at once) is answered as a plain HTTP error; a stream that stays
 * silent for `heartbeatMs` is opened by its first heartbeat instead.
 */
import type { ServerResponse } from 'node:http';
import { isFinalEvent, MethodNotFoundError, type AgentError, type TaskEvent } from '@agent/core';
import type { RequestInfo, ServerCall, ServerPipeline } from '@agent/server';
import { CLIENT_GONE, writeError, type RequestScope } from '@agent/server/node';
import {
  encodeErrorFrame,
  encodeEventFrame,
  EVENT_STREAM_TYPE,
  HEARTBEAT_FRAME,
  parseJsonRpcRequest,
  STREAM_METHOD,
  type JsonRpcId,
} from './codec.js';

export interface StreamSettings {
  /** A stream that wrote nothing for this many ms gets a heartbeat comment; 0 disables. */
  heartbeatMs: number;
  /** A client that leaves before the final status cancels the task. */
  cancelOnDisconnect: boolean;
}

/** The cancel reason recorded when `cancelOnDisconnect` cancels a task. */
export const DISCONNECT_CANCEL_REASON = 'client disconnected';

const SSE_HEADERS = {
  'content-type': `${EVENT_STREAM_TYPE}; charset=utf-8`,
  'cache-control': 'no-cache, no-transform',
  // Reverse proxies (nginx) buffer responses unless told not to.
  'x-accel-buffering': 'no',
} as const;

const ABORTED = Symbol('aborted');

/**
 * Races each `next()` against the request's signal with one abort listener for the whole stream
 * (a listener per event costs throughput). A `next()` left pending settles on its own.
 */
class AbortWatch {
  private wake: ((value: typeof ABORTED) => void) | undefined;
  private readonly onAbort = (): void => this.wake?.(ABORTED);

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  race<T>(promise: Promise<T>): Promise<T | typeof ABORTED> {
    if (this.signal.aborted) return Promise.resolve(ABORTED);
    return new Promise((resolve, reject) => {
      this.wake = resolve;
      promise.then(resolve, reject);
    });
  }

  dispose(): void {
    this.wake = undefined;
    this.signal.removeEventListener('abort', this.onAbort);
  }
}

/** Writes the frames of one stream: headers on first use, numbered frames, heartbeats, back-pressure. */
class EventStreamWriter {
  private frameId = 0;
  private opened = false;
  private readonly heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly requestId: JsonRpcId,
    heartbeatMs: number,
  ) {
    if (heartbeatMs > 0) {
      this.heartbeat = setTimeout(this.beat, heartbeatMs);
      this.heartbeat.unref();
    }
  }

  /** Writes one event; resolves once the socket can take more, so a slow client holds back the handler. */
  event(event: TaskEvent, signal: AbortSignal): Promise<void> {
    this.open();
    this.heartbeat?.refresh();
    return writeText(this.res, encodeEventFrame(++this.frameId, this.requestId, event), signal);
  }

  /** Before the stream opened: a plain HTTP error. After: one `event: error` frame. */
  fail(error: AgentError): void {
    if (!this.opened) {
      writeError(this.res, error);
      return;
    }
    if (!this.res.destroyed && !this.res.writableEnded) {
      this.res.write(encodeErrorFrame(++this.frameId, this.requestId, error));
    }
  }

  end(): void {
    clearTimeout(this.heartbeat);
    if (!this.res.writableEnded) this.res.end();
  }

  private open(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.writeHead(200, SSE_HEADERS);
    this.res.flushHeaders();
  }

  private readonly beat = (): void => {
    if (this.res.destroyed || this.res.writableEnded) return;
    this.open();
    this.res.write(HEARTBEAT_FRAME);
    this.heartbeat?.refresh();
  };
}

/** Writes and, when the socket buffer is full, waits for it to drain (or the request to abort). */
function writeText(res: ServerResponse, text: string, signal: AbortSignal): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  // Frames written in the same tick leave in one socket write.
  if (!res.writableCorked) {
    res.cork();
    process.nextTick(() => res.uncork());
  }
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
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

/** Serves one `tasks/stream` request whose body has been read; never rejects. */
export async function serveStream(
  pipeline: ServerPipeline,
  call: ServerCall,
  body: unknown,
  res: ServerResponse,
  scope: RequestScope,
  settings: StreamSettings,
): Promise<void> {
  let requestId: JsonRpcId;
  let params: unknown;
  try {
    const request = parseJsonRpcRequest(body);
    if (request.method !== STREAM_METHOD) {
      throw new MethodNotFoundError(`POST /tasks/stream carries ${STREAM_METHOD}, not ${request.method}`);
    }
    requestId = request.id ?? null;
    params = request.params;
  } catch (error) {
    writeError(res, pipeline.wireError(error, 'stream_task', call));
    return;
  }

  const events = pipeline.stream(call, params);
  const out = new EventStreamWriter(res, requestId, settings.heartbeatMs);
  const signal = scope.signal;
  const watch = new AbortWatch(signal);
  let sawFinal = false;
  let aborted = false;
  try {
    for (;;) {
      const step = await watch.race(events.next());
      if (step === ABORTED) {
        aborted = true;
        break;
      }
      if (step.done) break;
      sawFinal = isFinalEvent(step.value);
      await out.event(step.value, signal);
    }
  } catch (error) {
    // Only a failure before the first event gets here: the stream rule finishes later ones itself.
    out.fail(pipeline.wireError(error, 'stream_task', call));
  } finally {
    watch.dispose();
    // Ends the pipeline's part of a stream left early; a consumer that goes away is not a cancel.
    await events.return();
  }

  if (aborted && !sawFinal) {
    if (signal.reason !== CLIENT_GONE) {
      // The server gave up on the stream (a stop past its grace): say why it ends without a final status.
      out.fail(pipeline.wireError(signal.reason, 'stream_task', call));
    } else if (settings.cancelOnDisconnect) {
      await cancelForDisconnect(pipeline, call);
    }
  }
  out.end();
}

/** `cancelOnDisconnect`: cancels through the pipeline under the caller's identity, with a signal of its own. */
async function cancelForDisconnect(pipeline: ServerPipeline, call: ServerCall): Promise<void> {
  const request: RequestInfo = {
    headers: call.request.headers,
    query: call.request.query,
    signal: new AbortController().signal,
  };
  const detached = pipeline.openOn(call, request);
  // The task may have ended meanwhile (not found / not cancelable): nothing left to do then.
  await pipeline
    .cancel(detached, { task_id: call.taskId, reason: DISCONNECT_CANCEL_REASON })
    .catch(() => undefined);
}
