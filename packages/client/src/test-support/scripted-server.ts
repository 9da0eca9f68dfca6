import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTask, nowIso, type ErrorCode, type Task, type TaskEvent } from '@agent/core';

/** How the server answers one request. */
export type Answer = (res: ServerResponse, req: IncomingMessage) => void;

export interface SeenRequest {
  route: string;
  body: string;
  lastEventId: string | undefined;
  traceparent: string | undefined;
}

/**
 * A bare node:http server on 127.0.0.1:0 speaking just enough of the HTTP transport's routes for a
 * client to retry against: each route answers from its script, one answer per request in order,
 * the last one repeated. Routes are `"<METHOD> <path>"`, e.g. `"GET /tasks/t1"`.
 */
export class ScriptedServer {
  readonly seen: SeenRequest[] = [];
  private readonly scripts = new Map<string, Answer[]>();
  private readonly server: Server;
  private address = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const route = `${req.method} ${new URL(req.url ?? '/', 'http://x').pathname}`;
        const header = req.headers['last-event-id'];
        const lastEventId = Array.isArray(header) ? header[0] : header;
        const trace = req.headers.traceparent;
        this.seen.push({
          route,
          body: Buffer.concat(chunks).toString('utf8'),
          lastEventId,
          traceparent: Array.isArray(trace) ? trace[0] : trace,
        });
        const script = this.scripts.get(route);
        const answer = script && script.length > 1 ? script.shift() : script?.[0];
        if (answer) answer(res, req);
        else error(404, 'NOT_FOUND')(res, req);
      });
    });
  }

  get url(): string {
    return this.address;
  }

  /** Sets the answers of `route`, in order; the last one answers every later request too. */
  on(route: string, ...answers: Answer[]): this {
    this.scripts.set(route, answers);
    return this;
  }

  /** How many requests `route` received. */
  attempts(route: string): number {
    return this.seen.filter((request) => request.route === route).length;
  }

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.address = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

/** The transports' error body, `{"error": {code, message, data?}}`. */
export function error(
  status: number,
  code: ErrorCode,
  data?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Answer {
  const body = data === undefined ? { code, message: `${code} (scripted)` } : { code, message: code, data };
  return json(status, { error: body }, headers);
}

/** Closes the connection without any answer, as a server that went away would. */
export const drop: Answer = (_res, req) => {
  req.socket.destroy();
};

/**
 * A `text/event-stream` of `list`, then the end of the response: a list without a final status
 * is a stream that broke before its end.
 */
export function events(list: TaskEvent[]): Answer {
  return (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of list) {
      res.write(`id: ${String(event.sequence)}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    }
    res.end();
  };
}

/** Event `sequence` of a task: `working` statuses, then the final `completed` one when `final`. */
export function statusEvent(task: Task, sequence: number, final = false): TaskEvent {
  const state = final ? 'completed' : 'working';
  const event = { type: 'task.status', task_id: task.id, timestamp: nowIso(), state, final, sequence };
  return (final ? { ...event, task: { ...task, state } } : event) as TaskEvent;
}

export function taskNamed(id: string, state: Task['state'] = 'completed'): Task {
  return createTask('scripted', { id, state });
}
