/**
 * `POST /tasks/stream`: the JSON-RPC `tasks/stream` request becomes `pipeline.stream` and
 * `tasks/resubscribe` becomes `pipeline.subscribe`; their events (each with its `sequence`, which is
 * the frame's `id:`) are written as `text/event-stream` frames. The response headers wait for the
 * first event, so that a request refused before it (an invalid task, an unknown id, a handler that
 * fails at once) is answered as a plain HTTP error; a stream that stays silent for `heartbeatMs` is
 * opened by its first heartbeat instead.
 */
import type { ServerResponse } from 'node:http';
import { isFinalEvent, MethodNotFoundError, type AgentError, type TaskEvent } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import type { EventFeed, RequestInfo, ServerCall, ServerPipeline } from '@agent/server';
import {
  ABORTED,
  AbortWatch,
  CLIENT_GONE,
  corkForTurn,
  drained,
  StreamPacer,
  writeError,
  writeFrame,
  type RequestScope,
} from '@agent/server/node';
import {
  encodeErrorFrame,
  encodeEventFrame,
  EVENT_STREAM_TYPE,
  HEARTBEAT_FRAME,
  isStreamingMethod,
  parseJsonRpcRequest,
  RESUBSCRIBE_METHOD,
  STREAM_METHOD,
  STREAMING_METHODS,
  type JsonRpcId,
  type StreamingMethod,
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

/** Writes the frames of one stream: headers on first use, frames by sequence, heartbeats, back-pressure. */
class EventStreamWriter {
  private lastSequence = 0;
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
  event(event: TaskEvent, scope: RequestScope): Promise<void> {
    this.open();
    this.heartbeat?.refresh();
    this.lastSequence = event.sequence ?? this.lastSequence;
    return writeText(this.res, encodeEventFrame(this.requestId, event), scope);
  }

  /** Before the stream opened: a plain HTTP error. After: one `event: error` frame. */
  fail(error: AgentError): void {
    if (!this.opened) {
      writeError(this.res, error);
      return;
    }
    if (!this.res.destroyed && !this.res.writableEnded) {
      this.res.write(encodeErrorFrame(this.lastSequence, this.requestId, error));
    }
  }

  /** A stream with nothing to send (a subscription after a finished task's last event) is still a stream. */
  end(): void {
    clearTimeout(this.heartbeat);
    if (!this.res.headersSent && !this.res.destroyed) this.open();
    if (!this.res.writableEnded) this.res.end();
  }

  private open(): void {
    if (this.opened) return;
    this.opened = true;
    // The head leaves at once, with the frames written in the same turn.
    corkForTurn(this.res);
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
function writeText(res: ServerResponse, text: string, scope: RequestScope): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  if (writeFrame(res, text)) return Promise.resolve();
  return drained(res, scope);
}

/** Serves one `tasks/stream` or `tasks/resubscribe` request whose body has been read; never rejects. */
export async function serveStream(
  pipeline: ServerPipeline,
  call: ServerCall,
  body: unknown,
  lastEventId: string | undefined,
  res: ServerResponse,
  scope: RequestScope,
  settings: StreamSettings,
): Promise<void> {
  let requestId: JsonRpcId;
  let method: StreamingMethod;
  let params: unknown;
  try {
    const request = parseJsonRpcRequest(body);
    if (!isStreamingMethod(request.method)) {
      throw new MethodNotFoundError(
        `POST /tasks/stream carries ${STREAM_METHOD} or ${RESUBSCRIBE_METHOD}, not ${request.method}`,
      );
    }
    requestId = request.id ?? null;
    method = request.method;
    params = request.params;
  } catch (error) {
    writeError(res, pipeline.wireError(error, 'stream_task', call));
    return;
  }

  const operation = STREAMING_METHODS[method];
  const events: EventFeed =
    method === STREAM_METHOD
      ? pipeline.stream(call, params)
      : pipeline.subscribe(call, withLastEventId(params, lastEventId));
  const out = new EventStreamWriter(res, requestId, settings.heartbeatMs);
  const watch = new AbortWatch(scope);
  // A stream with a backlog writes it in bursts, so a cancel or a probe never waits behind it.
  const pacer = new StreamPacer();
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
      await out.event(step.value, scope);
      const turn = pacer.pause();
      if (turn) await turn;
    }
  } catch (error) {
    // Only a failure before the first event gets here: the stream rule finishes later ones itself.
    out.fail(pipeline.wireError(error, operation, call));
  } finally {
    watch.dispose();
    // Ends the pipeline's part of a stream left early; a consumer that goes away is not a cancel.
    await events.return();
  }

  if (aborted && !sawFinal) {
    if (scope.reason !== CLIENT_GONE) {
      // The server gave up on the stream (a stop past its grace): say why it ends without a final status.
      out.fail(pipeline.wireError(scope.reason, operation, call));
    } else if (settings.cancelOnDisconnect && method === STREAM_METHOD) {
      // A subscriber only watches a task; the caller that streamed it is the one whose leaving cancels.
      await cancelForDisconnect(pipeline, call);
    }
  }
  out.end();
  // Given up on by the server with the socket still full (a caller that stopped reading): the error
  // frame would wait behind what it never read, holding the connection. Close it instead.
  if (aborted && scope.reason !== CLIENT_GONE && res.writableNeedDrain) res.destroy();
}

/**
 * `Last-Event-ID` (what an SSE client sends on reconnecting) stands in for `after` only when the
 * params name none: an explicit `after` wins. The pipeline decodes and checks it like `after`.
 */
function withLastEventId(params: unknown, lastEventId: string | undefined): unknown {
  if (lastEventId === undefined || !isRecord(params)) return params;
  if (params.after !== undefined && params.after !== null) return params;
  return { ...params, after: lastEventId };
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
