/**
 * The server side of the HTTP wire: each route decodes a request into one pipeline operation and
 * encodes what comes back. Authentication, validation, dispatch, the stream rule and the error
 * policy all happen inside `ServerPipeline`; nothing here decides a rule of its own.
 *
 * The per-request path is written for the fast path (the `node` backend): one exchange object, the
 * shared `onOpened` step (the exchange rides on the call as its request), the callback body reader.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CLIENT_OPERATIONS,
  InvalidRequestError,
  MethodNotAllowedError,
  type AgentCard,
  type Task,
  type TaskEvent,
  type TaskList,
} from '@agent/core';
import { CREDENTIAL_QUERY_PARAMS } from '@agent/auth';
import type { EventFeed, HeaderBag, RequestInfo, ServerCall, ServerPipeline } from '@agent/server';
import {
  answerAfterDrain,
  isRouteMiss,
  readJsonBody,
  requestPath,
  routeKey,
  RouteTable,
  unsupportedEncoding,
  writeError,
  writeJson,
  type RequestScope,
  type RouteMiss,
} from '@agent/server/node';
import type { HttpEndpoint } from './backend.js';
import { EVENT_STREAM_HEADERS, encodeEvent } from './codec.js';

type Unary = (
  pipeline: ServerPipeline,
  call: ServerCall,
  payload: unknown,
) => Promise<Task | AgentCard | TaskList>;
type Feed = (pipeline: ServerPipeline, call: ServerCall, payload: unknown) => EventFeed;

/**
 * Where an operation's payload comes from: the JSON body, nothing, or the request line and headers
 * (the GET routes of the task API, decoded by {@link Exchange}).
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
  source: (exchange) => ({ ...exchange.queryFields(), task_id: exchange.taskId() }),
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
    const payload: Record<string, unknown> = { ...exchange.queryFields(), task_id: exchange.taskId() };
    // An EventSource that reconnects sends the last frame's id; it names the same position as `?after`.
    const lastEventId = exchange.req.headers['last-event-id'];
    if (lastEventId !== undefined && lastEventId !== '') payload.after = lastEventId;
    return payload;
  },
  open: (pipeline, call, payload) => pipeline.subscribe(call, payload),
};

/**
 * Query parameters the authenticator reads credentials from (for clients that cannot set headers,
 * such as a browser's EventSource). They belong to authentication, not to the operation, so they
 * never reach its payload, where `validateSchema` would refuse them as unknown fields.
 */
const CREDENTIAL_PARAMS: ReadonlySet<string> = new Set(CREDENTIAL_QUERY_PARAMS);

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
    route(CLIENT_OPERATIONS.list_tasks, LIST_TASKS),
    route(CLIENT_OPERATIONS.get_task, GET_TASK),
    route(CLIENT_OPERATIONS.subscribe_task, SUBSCRIBE),
  ];
}

/** The placeholder of a path parameter in an endpoint's path: one path segment, the task id. */
const ID_PARAMETER = '{id}';

/**
 * A path with one `{id}` segment, such as `/tasks/{id}/events`. It matches a route key whose segment
 * in that place is not empty and holds no `/` (a client sends an id's `/` as `%2F`).
 */
class PathTemplate {
  private readonly prefix: string;
  private readonly suffix: string;

  constructor(path: string) {
    const at = path.indexOf(ID_PARAMETER);
    this.prefix = path.slice(0, at);
    this.suffix = routeKey(path.slice(at + ID_PARAMETER.length));
  }

  /** The id segment of `key` as it was sent (still percent-encoded), or undefined when `key` does not match. */
  segment(key: string): string | undefined {
    const { prefix, suffix } = this;
    if (key.length <= prefix.length + suffix.length) return undefined;
    if (!key.startsWith(prefix) || !key.endsWith(suffix)) return undefined;
    const segment = key.slice(prefix.length, key.length - suffix.length);
    return segment.includes('/') ? undefined : segment;
  }
}

/**
 * The routes a backend serves: fixed paths through `RouteTable`, then the paths with an `{id}`. A
 * fixed path wins, so `POST /tasks/cancel` is the cancel while `GET /tasks/cancel` reads the task
 * whose id is `cancel`; a method that neither takes answers 405 with every method the path has.
 */
export class HttpRoutes {
  private readonly fixed: RouteTable<HttpEndpoint>;
  private readonly templated: { key: string; template: PathTemplate; byMethod: Map<string, HttpEndpoint> }[] =
    [];

  constructor(endpoints: readonly HttpEndpoint[]) {
    const fixed: HttpEndpoint[] = [];
    for (const endpoint of endpoints) {
      if (!endpoint.path.includes(ID_PARAMETER)) {
        fixed.push(endpoint);
        continue;
      }
      const key = routeKey(endpoint.path);
      let entry = this.templated.find((t) => t.key === key);
      if (!entry)
        this.templated.push((entry = { key, template: new PathTemplate(key), byMethod: new Map() }));
      entry.byMethod.set(endpoint.method, endpoint);
    }
    this.fixed = new RouteTable(fixed);
  }

  /** The endpoint for a request, or the 404/405 miss to answer. HEAD is served as GET. */
  match(method: string, path: string): HttpEndpoint | RouteMiss {
    const found = this.fixed.match(method, path);
    if (!isRouteMiss(found) || this.templated.length === 0) return found;
    const key = routeKey(path);
    const allowed = found.headers?.allow ? found.headers.allow.split(', ') : [];
    for (const { template, byMethod } of this.templated) {
      if (template.segment(key) === undefined) continue;
      const endpoint = byMethod.get(method === 'HEAD' ? 'GET' : method);
      if (endpoint) return endpoint;
      for (const name of byMethod.keys()) if (!allowed.includes(name)) allowed.push(name);
    }
    if (allowed.length === 0) return found;
    const allow = allowed.join(', ');
    return {
      error: new MethodNotAllowedError(`${method} is not allowed on ${path} (allowed: ${allow})`),
      headers: { allow },
    };
  }
}

/**
 * Routes one request for a backend: the endpoint that takes it, or the 404/405 JSON error (after
 * the unread body was drained, so a client still uploading reads the answer rather than a reset).
 */
export function serveRoute(
  routes: HttpRoutes,
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
  /** Where the task id sits in the path, for the routes that carry one. */
  readonly template: PathTemplate | undefined;

  constructor(
    readonly method: 'GET' | 'POST',
    readonly path: string,
    readonly operation: Operation,
    readonly pipeline: ServerPipeline,
    readonly maxBodyBytes: number,
  ) {
    this.template = path.includes(ID_PARAMETER) ? new PathTemplate(routeKey(path)) : undefined;
  }

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

  /** Parsed only when asked for: an authenticator reading credentials, or a GET route of the task API. */
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

  /**
   * The task id of the path, percent-decoded. Throws InvalidRequestError for a malformed escape; a
   * request that reached this route has an id segment.
   */
  taskId(): string {
    const segment = this.route.template?.segment(routeKey(requestPath(this.req.url ?? '/'))) ?? '';
    try {
      return decodeURIComponent(segment);
    } catch {
      throw new InvalidRequestError('Malformed percent-encoding in the task id of the path');
    }
  }

  /**
   * The query parameters as the operation's fields, values as the strings they arrived as (the
   * pipeline decodes numbers); a repeated name gives its values as an array, which the pipeline
   * refuses. The pipeline ignores unknown names unless `validateSchema` is on.
   */
  queryFields(): Record<string, string | string[]> {
    const query = this.query;
    if (!query) return {};
    // A Map, then fromEntries: a parameter named `__proto__` stays a field, never the prototype.
    const fields = new Map<string, string | string[]>();
    for (const [name, value] of query) {
      if (CREDENTIAL_PARAMS.has(name)) continue;
      const seen = fields.get(name);
      fields.set(name, seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value]);
    }
    return Object.fromEntries(fields);
  }

  /** Answers an error while the body may still be unread. */
  refuse(error: unknown): void {
    const res = this.res;
    answerAfterDrain(this.req, res, this.route.maxBodyBytes, () => writeError(res, error));
  }

  /** A failure of the wire itself (an unreadable body or path), through the pipeline's error policy. */
  refuseBody(error: unknown): void {
    this.refuse(this.route.pipeline.wireError(error, this.route.operation.name, this.call));
  }

  run(payload: unknown): void {
    const { operation, pipeline } = this.route;
    const call = this.call!;
    const res = this.res;
    if (operation.kind === 'stream') {
      answerStream(res, operation.open(pipeline, call, payload));
      return;
    }
    operation.run(pipeline, call, payload).then(
      (value) => writeJson(res, 200, value),
      (error: unknown) => writeError(res, error),
    );
  }
}

function onOpened(call: ServerCall): void {
  const exchange = call.request as Exchange;
  exchange.call = call;
  const source = exchange.route.operation.source;
  if (source === 'none') {
    exchange.run(undefined);
    return;
  }
  if (typeof source === 'function') {
    let payload: unknown;
    try {
      payload = source(exchange);
    } catch (error) {
      exchange.refuseBody(error);
      return;
    }
    exchange.run(payload);
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
function answerStream(res: ServerResponse, stream: EventFeed): void {
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
  stream: EventFeed,
  first: IteratorResult<TaskEvent>,
): Promise<void> {
  if (res.destroyed) return;
  res.writeHead(200, EVENT_STREAM_HEADERS);
  try {
    for (let step = first; !step.done; step = await stream.next()) {
      if (res.destroyed) return;
      if (!res.write(encodeEvent(step.value))) await drained(res);
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
