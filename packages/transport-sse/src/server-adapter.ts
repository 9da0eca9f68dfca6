/**
 * The server side of the SSE JSON-RPC wire, served by `NodeHost`: routes `POST /rpc` (JSON-RPC 2.0
 * unary calls, single or batch), `POST /tasks/stream` (the event streams of `tasks/stream` and
 * `tasks/resubscribe`) and the native card onto the server pipeline, and encodes what comes back.
 * Every rule between the bytes and the handler (stopping, authentication, validation, the stream
 * rule, the error policy) is the pipeline's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidRequestError, NotFoundError, ParseError, type AgentCard } from '@agent/core';
import type { ServerCall, ServerPipeline } from '@agent/server';
import {
  answerAfterDrain,
  isRouteMiss,
  MalformedJsonError,
  NodeRequest,
  readJsonBody,
  requestPath,
  RouteTable,
  writeError,
  writeJson,
  type RequestListener,
  type RequestScope,
  type Routed,
} from '@agent/server/node';
import {
  failureResponse,
  isUnaryMethod,
  parseJsonRpcRequest,
  responseId,
  successResponse,
  UNARY_METHODS,
  unknownMethod,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from './codec.js';
import { serveStream, type StreamSettings } from './server-adapter-stream.js';

export interface ServerAdapterSettings extends StreamSettings {
  /** The URL's path: every route is served below it. */
  basePath: string;
  maxBodyBytes: number;
}

interface Route extends Routed {
  name: 'rpc' | 'stream' | 'card';
}

const ROUTES = new RouteTable<Route>([
  { method: 'POST', path: '/rpc', name: 'rpc' },
  { method: 'POST', path: '/tasks/stream', name: 'stream' },
  { method: 'GET', path: '/.well-known/agent.json', name: 'card' },
]);

export class SSEServerAdapter {
  /** The request listener `NodeHost` calls after it answered health and readiness. */
  readonly onRequest: RequestListener = (req, res, scope) => this.serve(req, res, scope);

  constructor(
    private readonly pipeline: ServerPipeline,
    private readonly settings: ServerAdapterSettings,
  ) {}

  private serve(req: IncomingMessage, res: ServerResponse, scope: RequestScope): void {
    const target = req.url ?? '/';
    const request = new NodeRequest(req, scope);
    // Authentication comes before routing, so an unauthenticated caller learns nothing about routes.
    this.pipeline
      .open(request)
      .then(
        (call) => this.route(call, req, res, scope, requestPath(target)),
        (error: unknown) => this.refuse(req, res, error),
      )
      .catch((error: unknown) => writeError(res, this.pipeline.wireError(error, 'route')));
  }

  private route(
    call: ServerCall,
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    path: string,
  ): void {
    const local = belowBase(path, this.settings.basePath);
    const matched =
      local === undefined
        ? { error: new NotFoundError(`No route for ${req.method ?? 'GET'} ${path}`) }
        : ROUTES.match(req.method ?? 'GET', local);
    if (isRouteMiss(matched)) {
      this.refuse(req, res, matched.error, matched.headers);
      return;
    }
    switch (matched.name) {
      case 'card':
        this.pipeline.card(call).then(
          (card: AgentCard) => writeJson(res, 200, card),
          (error: unknown) => writeError(res, error),
        );
        return;
      case 'rpc':
        readJsonBody(req, this.settings.maxBodyBytes, (error, body) => {
          // A body that is not JSON is JSON-RPC's own parse error (-32700, id null), answered like every
          // JSON-RPC error with HTTP 200; an oversized or compressed body never became JSON-RPC: plain HTTP.
          if (error instanceof MalformedJsonError)
            writeJson(res, 200, failureResponse(null, new ParseError(error.message)));
          else if (error) this.refuse(req, res, error);
          else void this.answerRpc(call, body, res);
        });
        return;
      case 'stream':
        readJsonBody(req, this.settings.maxBodyBytes, (error, body) => {
          if (error) this.refuse(req, res, error);
          else void serveStream(this.pipeline, call, body, lastEventId(req), res, scope, this.settings);
        });
        return;
    }
  }

  /** A refused request may still have an unread body: drain it (bounded) before answering. */
  private refuse(
    req: IncomingMessage,
    res: ServerResponse,
    error: unknown,
    headers?: Readonly<Record<string, string>>,
  ): void {
    answerAfterDrain(req, res, this.settings.maxBodyBytes, () => writeError(res, error, headers));
  }

  private async answerRpc(call: ServerCall, body: unknown, res: ServerResponse): Promise<void> {
    let reply: JsonRpcResponse | JsonRpcResponse[] | undefined;
    if (!Array.isArray(body)) {
      reply = await this.answerOne(call, body);
    } else if (body.length === 0) {
      reply = failureResponse(null, new InvalidRequestError('Invalid JSON-RPC request: empty batch'));
    } else {
      // Each entry is its own call (the pipeline tracks it until it answers) under the one authentication.
      const replies = await Promise.all(
        body.map((entry) => this.answerOne(this.pipeline.openOn(call, call.request), entry)),
      );
      const present = replies.filter((entry) => entry !== undefined);
      reply = present.length === 0 ? undefined : present;
    }
    if (reply !== undefined) writeJson(res, 200, reply);
    else if (!res.headersSent && !res.destroyed) res.writeHead(204).end();
  }

  /** One JSON-RPC request; undefined for a notification, which is run but never answered. */
  private async answerOne(call: ServerCall, raw: unknown): Promise<JsonRpcResponse | undefined> {
    let request: JsonRpcRequest;
    try {
      request = parseJsonRpcRequest(raw);
    } catch (error) {
      return failureResponse(responseId(raw), this.pipeline.wireError(error, 'rpc', call));
    }
    const id = request.id ?? null;
    const notification = !('id' in request);
    if (!isUnaryMethod(request.method)) {
      return notification ? undefined : failureResponse(id, unknownMethod(request.method));
    }
    try {
      const result = await this.pipeline.unary(call, UNARY_METHODS[request.method], request.params ?? {});
      return notification ? undefined : successResponse(id, result);
    } catch (error) {
      // The pipeline rejects only with safe AgentErrors; wireError returns those as they are.
      return notification
        ? undefined
        : failureResponse(id, this.pipeline.wireError(error, request.method, call));
    }
  }
}

function lastEventId(req: IncomingMessage): string | undefined {
  const value = req.headers['last-event-id'];
  return typeof value === 'string' ? value : undefined;
}

/** The path below the URL's base path, or undefined when the request is outside it. */
function belowBase(path: string, base: string): string | undefined {
  if (base === '') return path;
  if (path === base) return '/';
  return path.startsWith(`${base}/`) ? path.slice(base.length) : undefined;
}
