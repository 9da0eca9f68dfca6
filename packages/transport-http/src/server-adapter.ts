/**
 * The task routes of the HTTP wire: each decodes a request into one pipeline operation and encodes
 * what comes back. Authentication, validation, dispatch, the stream rule and the error policy all
 * happen inside `ServerPipeline`; the request plumbing (opening the call, the path, the query, the
 * body) is the {@link Exchange} every route shares; nothing here decides a rule of its own.
 */
import type { ServerResponse } from 'node:http';
import { CLIENT_OPERATIONS, type AgentCard, type Task, type TaskEvent, type TaskList } from '@agent/core';
import type { EventFeed, ServerCall, ServerPipeline } from '@agent/server';
import {
  drained,
  StreamPacer,
  writeError,
  writeFrame,
  writeJson,
  type RequestScope,
} from '@agent/server/node';
import type { HttpEndpoint } from './backend.js';
import { EVENT_STREAM_HEADERS, encodeEvent } from './codec.js';
import { ExchangeRoute, type Exchange } from './exchange.js';

type Unary = (
  pipeline: ServerPipeline,
  call: ServerCall,
  payload: unknown,
) => Promise<Task | AgentCard | TaskList>;
type Feed = (pipeline: ServerPipeline, call: ServerCall, payload: unknown) => EventFeed;

/**
 * Where an operation's payload comes from: the JSON body, nothing, or the request line and headers
 * (the GET routes of the task API, decoded from the {@link Exchange}).
 */
type Source = 'body' | 'none' | ((exchange: Exchange) => unknown);

/** How a route answers: a JSON body, or a stream of events. */
type Operation =
  | {
      kind: 'unary';
      name: 'send_task' | 'cancel_task' | 'get_card' | 'get_task' | 'list_tasks';
      source: Source;
      run: Unary;
    }
  | { kind: 'stream'; name: 'stream_task' | 'subscribe_task'; source: Source; open: Feed };

const SEND: Operation = {
  kind: 'unary',
  name: 'send_task',
  source: 'body',
  run: (pipeline, call, body) => pipeline.send(call, body),
};
const CANCEL: Operation = {
  kind: 'unary',
  name: 'cancel_task',
  source: 'body',
  run: (pipeline, call, body) => pipeline.cancel(call, body),
};
const CARD: Operation = {
  kind: 'unary',
  name: 'get_card',
  source: 'none',
  run: (pipeline, call) => pipeline.card(call),
};
const STREAM: Operation = {
  kind: 'stream',
  name: 'stream_task',
  source: 'body',
  open: (pipeline, call, body) => pipeline.stream(call, body),
};
const GET_TASK: Operation = {
  kind: 'unary',
  name: 'get_task',
  source: (exchange) => ({ ...exchange.queryFields(), task_id: taskId(exchange) }),
  run: (pipeline, call, payload) => pipeline.get(call, payload),
};
const LIST_TASKS: Operation = {
  kind: 'unary',
  name: 'list_tasks',
  source: (exchange) => exchange.queryFields(),
  run: (pipeline, call, payload) => pipeline.list(call, payload),
};
const SUBSCRIBE: Operation = {
  kind: 'stream',
  name: 'subscribe_task',
  source: (exchange) => {
    const payload: Record<string, unknown> = { ...exchange.queryFields(), task_id: taskId(exchange) };
    // An EventSource that reconnects sends the last frame's id; it names the same position as `?after`.
    const lastEventId = exchange.req.headers['last-event-id'];
    if (lastEventId !== undefined && lastEventId !== '') payload.after = lastEventId;
    return payload;
  },
  open: (pipeline, call, payload) => pipeline.subscribe(call, payload),
};

/** The task id of a `/tasks/{id}…` path, percent-decoded (InvalidRequestError for a malformed escape). */
function taskId(exchange: Exchange): string {
  return exchange.pathParams().id ?? '';
}

/** The task routes of the HTTP wire over `pipeline`, below `basePath` (the transport URL's path). */
export function buildEndpoints(
  pipeline: ServerPipeline,
  basePath: string,
  maxBodyBytes: number,
): HttpEndpoint[] {
  const route = (
    spec: { method: HttpEndpoint['method']; path: string },
    operation: Operation,
  ): HttpEndpoint => new TaskRoute(spec.method, basePath + spec.path, operation, pipeline, maxBodyBytes);
  return [
    route(CLIENT_OPERATIONS.send_task, SEND),
    route(CLIENT_OPERATIONS.cancel_task, CANCEL),
    route(CLIENT_OPERATIONS.get_card, CARD),
    route(CLIENT_OPERATIONS.stream_task, STREAM),
    route(CLIENT_OPERATIONS.list_tasks, LIST_TASKS),
    route(CLIENT_OPERATIONS.get_task, GET_TASK),
    route(CLIENT_OPERATIONS.subscribe_task, SUBSCRIBE),
  ];
}

class TaskRoute extends ExchangeRoute {
  constructor(
    method: HttpEndpoint['method'],
    path: string,
    private readonly task: Operation,
    pipeline: ServerPipeline,
    maxBodyBytes: number,
  ) {
    super(method, path, task.name, pipeline, maxBodyBytes, task.source === 'body');
  }

  override decodeLine(exchange: Exchange): unknown {
    const source = this.task.source;
    return typeof source === 'function' ? source(exchange) : undefined;
  }

  answer(exchange: Exchange, call: ServerCall, line: unknown, body: unknown): void {
    const { task, pipeline } = this;
    const payload = this.readsBody ? body : line;
    const res = exchange.res;
    if (task.kind === 'stream') {
      answerStream(res, task.open(pipeline, call, payload), exchange.scope);
      return;
    }
    task.run(pipeline, call, payload).then(
      (value) => writeJson(res, 200, value),
      (error: unknown) => writeError(res, error),
    );
  }
}

/**
 * A stream is promised only once its first event exists: a failure before it (validation, a
 * handler that throws at once) is answered as a plain JSON error with its HTTP status. A client
 * that goes away ends the iteration, at any point; that is not a cancel. When the server gives up
 * on the request (`scope`: a caller that stopped reading, a stop past its grace) the connection is
 * closed: a stream already under way has no way left to say why.
 */
function answerStream(res: ServerResponse, stream: EventFeed, scope: RequestScope): void {
  const gone = (): void => void stream.return();
  const giveUp = (): void => void res.destroy();
  res.once('close', gone);
  if (scope.isAborted) giveUp();
  else scope.onAbort(giveUp);
  const settled = (): void => {
    res.off('close', gone);
    scope.offAbort(giveUp);
  };
  stream.next().then(
    (first) => void writeEvents(res, stream, first).finally(settled),
    (error: unknown) => {
      settled();
      writeError(res, error);
    },
  );
}

/**
 * Writes the events as they come, with back-pressure, and ends after the final status. A backlog
 * goes out in bursts (`StreamPacer`), so other requests are served between them.
 */
async function writeEvents(
  res: ServerResponse,
  stream: EventFeed,
  first: IteratorResult<TaskEvent>,
): Promise<void> {
  if (res.destroyed) return;
  res.writeHead(200, EVENT_STREAM_HEADERS);
  const pacer = new StreamPacer();
  try {
    for (let step = first; !step.done; step = await stream.next()) {
      if (res.destroyed) return;
      if (!writeFrame(res, encodeEvent(step.value))) await drained(res);
      else {
        const turn = pacer.pause();
        if (turn) await turn;
      }
    }
    res.end();
  } catch {
    // The stream rule turns handler failures into events, so this is a broken socket: nothing to tell.
    res.destroy();
  }
}
