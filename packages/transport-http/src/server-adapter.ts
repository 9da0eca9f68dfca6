/**
 * The server side of the HTTP wire: each route decodes a request into one pipeline operation and
 * encodes what comes back. Authentication, validation, dispatch, the stream rule and the error
 * policy all happen inside `ServerPipeline`; nothing here decides a rule of its own.
 *
 * The per-request path is written for the fast path (the `node` backend): one exchange object, the
 * shared `onOpened` step (the exchange rides on the call as its request), the callback body reader.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CLIENT_OPERATIONS, type AgentCard, type Task, type TaskEvent } from '@agent/core';
import type { HeaderBag, RequestInfo, ServerCall, ServerPipeline, TaskEventStream } from '@agent/server';
import {
  answerAfterDrain,
  isRouteMiss,
  readJsonBody,
  requestPath,
  unsupportedEncoding,
  writeError,
  writeJson,
  type RequestScope,
  type RouteTable,
} from '@agent/server/node';
import type { HttpEndpoint } from './backend.js';
import { EVENT_STREAM_HEADERS, encodeEvent } from './codec.js';

type Unary = (pipeline: ServerPipeline, call: ServerCall, body: unknown) => Promise<Task | AgentCard>;

/** How a route answers: a JSON body, or a stream of events. */
type Operation =
  | { kind: 'unary'; name: 'send_task' | 'cancel_task' | 'get_card'; readsBody: boolean; run: Unary }
  | { kind: 'stream'; name: 'stream_task'; readsBody: true };

const SEND: Operation = {
  kind: 'unary',
  name: 'send_task',
  readsBody: true,
  run: (pipeline, call, body) => pipeline.send(call, body),
};
const CANCEL: Operation = {
  kind: 'unary',
  name: 'cancel_task',
  readsBody: true,
  run: (pipeline, call, body) => pipeline.cancel(call, body),
};
const CARD: Operation = {
  kind: 'unary',
  name: 'get_card',
  readsBody: false,
  run: (pipeline, call) => pipeline.card(call),
};
const STREAM: Operation = { kind: 'stream', name: 'stream_task', readsBody: true };

/** The routes of the HTTP wire over `pipeline`, below `basePath` (the transport URL's path). */
export function buildEndpoints(
  pipeline: ServerPipeline,
  basePath: string,
  maxBodyBytes: number,
): HttpEndpoint[] {
  const route = (spec: { method: 'GET' | 'POST'; path: string }, operation: Operation): HttpEndpoint =>
    new PipelineRoute(spec.method, basePath + spec.path, operation, pipeline, maxBodyBytes);
  return [
    route(CLIENT_OPERATIONS.send_task, SEND),
    route(CLIENT_OPERATIONS.cancel_task, CANCEL),
    route(CLIENT_OPERATIONS.get_card, CARD),
    route(CLIENT_OPERATIONS.stream_task, STREAM),
  ];
}

/**
 * Routes one request for a backend: the endpoint that takes it, or the 404/405 JSON error (after
 * the unread body was drained, so a client still uploading reads the answer rather than a reset).
 */
export function serveRoute(
  routes: RouteTable<HttpEndpoint>,
  maxBodyBytes: number,
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  body?: unknown,
): void {
  const matched = routes.match(req.method ?? 'GET', requestPath(req.url ?? '/'));
  if (isRouteMiss(matched)) {
    answerAfterDrain(req, res, maxBodyBytes, () => writeError(res, matched.error, matched.headers));
    return;
  }
  matched.serve(req, res, scope, body);
}

class PipelineRoute implements HttpEndpoint {
  constructor(
    readonly method: 'GET' | 'POST',
    readonly path: string,
    readonly operation: Operation,
    readonly pipeline: ServerPipeline,
    readonly maxBodyBytes: number,
  ) {}

  serve(req: IncomingMessage, res: ServerResponse, scope: RequestScope, body?: unknown): void {
    const exchange = new Exchange(this, req, res, scope, body);
    // The pipeline authenticates before any body is read: an unauthenticated upload costs nothing.
    this.pipeline.open(exchange).then(onOpened, (error: unknown) => exchange.refuse(error));
  }
}

/** One request on its way through a route; it is also what the pipeline sees of the request. */
class Exchange implements RequestInfo {
  call: ServerCall | undefined;

  constructor(
    readonly route: PipelineRoute,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    private readonly scope: RequestScope,
    readonly parsed: unknown,
  ) {}

  get headers(): HeaderBag {
    return this.req.headers;
  }

  /** Parsed only when asked for: only an authenticator reads credentials from the query. */
  get query(): URLSearchParams | undefined {
    const url = this.req.url ?? '';
    const q = url.indexOf('?');
    return q === -1 ? undefined : new URLSearchParams(url.slice(q + 1));
  }

  get signal(): AbortSignal {
    return this.scope.signal;
  }

  get remoteAddress(): string | undefined {
    return this.req.socket.remoteAddress;
  }

  abort(reason: unknown): void {
    this.scope.abort(reason);
  }

  /** Answers an error while the body may still be unread. */
  refuse(error: unknown): void {
    const res = this.res;
    answerAfterDrain(this.req, res, this.route.maxBodyBytes, () => writeError(res, error));
  }

  /** A failure of the wire itself (an unreadable body), through the pipeline's error policy. */
  refuseBody(error: unknown): void {
    this.refuse(this.route.pipeline.wireError(error, this.route.operation.name, this.call));
  }

  run(body: unknown): void {
    const { operation, pipeline } = this.route;
    const call = this.call!;
    const res = this.res;
    if (operation.kind === 'stream') {
      answerStream(res, pipeline.stream(call, body));
      return;
    }
    operation.run(pipeline, call, body).then(
      (value) => writeJson(res, 200, value),
      (error: unknown) => writeError(res, error),
    );
  }
}

function onOpened(call: ServerCall): void {
  const exchange = call.request as Exchange;
  exchange.call = call;
  if (!exchange.route.operation.readsBody) {
    exchange.run(undefined);
    return;
  }
  if (exchange.parsed !== undefined) {
    // An express app parsed the body already: the one Content-Encoding rule still holds.
    const refused = unsupportedEncoding(exchange.req);
    if (refused) exchange.refuseBody(refused);
    else exchange.run(exchange.parsed);
    return;
  }
  readJsonBody(exchange.req, exchange.route.maxBodyBytes, (error, body) => {
    if (error) exchange.refuseBody(error);
    else exchange.run(body);
  });
}

/**
 * A stream is promised only once its first event exists: a failure before it (validation, a
 * handler that throws at once) is answered as a plain JSON error with its HTTP status. A client
 * that goes away ends the iteration, at any point; that is not a cancel.
 */
function answerStream(res: ServerResponse, stream: TaskEventStream): void {
  const gone = (): void => void stream.return();
  res.once('close', gone);
  stream.next().then(
    (first) => void writeEvents(res, stream, first).finally(() => res.off('close', gone)),
    (error: unknown) => {
      res.off('close', gone);
      writeError(res, error);
    },
  );
}

/** Writes the events as they come, with back-pressure, and ends after the final status. */
async function writeEvents(
  res: ServerResponse,
  stream: TaskEventStream,
  first: IteratorResult<TaskEvent>,
): Promise<void> {
  if (res.destroyed) return;
  res.writeHead(200, EVENT_STREAM_HEADERS);
  let seq = 0;
  try {
    for (let step = first; !step.done; step = await stream.next()) {
      if (res.destroyed) return;
      if (!res.write(encodeEvent(++seq, step.value))) await drained(res);
    }
    res.end();
  } catch {
    // The stream rule turns handler failures into events, so this is a broken socket: nothing to tell.
    res.destroy();
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
