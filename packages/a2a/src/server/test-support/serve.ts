/** An A2AServer on a real socket for the tests: HTTPTransport on 127.0.0.1:0 with a small handler. */
import { APIKeyAuth, type Authenticator } from '@agent/auth';
import {
  type AgentCard,
  type CallContext,
  type Task,
  type TaskEvent,
  type TaskHandler,
  createArtifact,
  createMessage,
  messageText,
  nowIso,
} from '@agent/core';
import { ContractHandler, RecordingLogger } from '@agent/server/testing';
import { type RawRequestOptions, type RawResponse, rawRequest } from '@agent/test-support';
import { HTTPTransport } from '@agent/transport-http';
import { A2AServer, type A2AServerOptions } from '../a2a-server.js';

export const ALICE = 'alice-key-0000000001';
export const BOB = 'bob-key-000000000002';
/** May act only for tenant `t1`. */
export const CAROL = 'carol-key-0000000003';

export function apiKeys(): APIKeyAuth {
  return new APIKeyAuth({ validKeys: { [ALICE]: [], [BOB]: [], [CAROL]: [] }, tenants: { [CAROL]: ['t1'] } });
}

function card(): AgentCard {
  return {
    name: 'a2a-test',
    description: 'The A2A server tests agent',
    url: '',
    skills: [{ id: 'echo', name: 'Echo' }],
  };
}

/**
 * ContractHandler's commands, plus `art` (completes with one artifact) and `ask`: the first turn stops in `input-required` with an agent
 * question; a later turn completes with `got <text>`.
 */
export class TestHandler implements TaskHandler {
  readonly contract = new ContractHandler(card());

  private turn(task: Task): Task | undefined {
    const first = task.messages[0];
    if (first && messageText(first).startsWith('art')) {
      return { ...task, state: 'completed', artifacts: [createArtifact(messageText(first))] };
    }
    if (!first || !messageText(first).startsWith('ask')) return undefined;
    const users = task.messages.filter((m) => m.role === 'user');
    if (users.length === 1) {
      return {
        ...task,
        state: 'input-required',
        messages: [...task.messages, createMessage('what?', { role: 'agent' })],
      };
    }
    const last = users[users.length - 1]!;
    return {
      ...task,
      state: 'completed',
      messages: [...task.messages, createMessage(`got ${messageText(last)}`, { role: 'agent' })],
    };
  }

  handleTask(task: Task, ctx: CallContext): Promise<Task> {
    return Promise.resolve(this.turn(task) ?? this.contract.handleTask(task, ctx));
  }

  async *handleTaskStreaming(task: Task, ctx: CallContext): AsyncGenerator<TaskEvent> {
    const turn = this.turn(task);
    if (!turn) {
      yield* this.contract.handleTaskStreaming(task, ctx);
      return;
    }
    yield { type: 'task.status', task_id: task.id, state: 'working', final: false, timestamp: nowIso() };
    yield {
      type: 'task.status',
      task_id: task.id,
      state: turn.state,
      final: true,
      timestamp: nowIso(),
      task: turn,
    };
  }

  cancelTask(taskId: string, reason: string | undefined): Promise<Task> {
    return this.contract.cancelTask(taskId, reason);
  }

  getAgentCard(): AgentCard {
    return this.contract.getAgentCard();
  }
}

export interface Served {
  url: string;
  server: HTTPTransport;
  a2a: A2AServer;
  handler: TestHandler;
  /** A raw request below the transport URL as `key` (none: no credentials), with A2A-Version 1.0 unless given. */
  raw(
    path: string,
    options?: RawRequestOptions & { key?: string; version?: string | null },
  ): Promise<RawResponse>;
  /** A JSON-RPC call; `id` defaults to 1. */
  rpc(
    method: string,
    params: unknown,
    options?: { key?: string; id?: unknown; version?: string | null },
  ): Promise<RawResponse>;
  stop(): Promise<void>;
}

export async function serveA2A(
  options: A2AServerOptions = {},
  authenticator: Authenticator | null = apiKeys(),
): Promise<Served> {
  const a2a = new A2AServer(options);
  const handler = new TestHandler();
  const server = new HTTPTransport({
    url: 'http://127.0.0.1:0',
    ...(authenticator ? { authenticator } : {}),
    routes: [a2a],
    // The tests provoke failures on purpose: their log lines are kept, not printed.
    logger: new RecordingLogger(),
  });
  server.bind(handler);
  await server.start();
  const url = server.url;
  const raw: Served['raw'] = (path, opts = {}) => {
    const { key, version, ...rest } = opts;
    const headers: Record<string, string> = {};
    if (version !== null) headers['a2a-version'] = version ?? '1.0';
    if (key) headers['x-api-key'] = key;
    return rawRequest(`${url}${path}`, {
      ...rest,
      headers: { ...headers, ...(rest.headers as Record<string, string>) },
    });
  };
  return {
    url,
    server,
    a2a,
    handler,
    raw,
    rpc: (method, params, opts = {}) =>
      raw('/a2a', {
        method: 'POST',
        body: { jsonrpc: '2.0', id: opts.id === undefined ? 1 : opts.id, method, params },
        ...(opts.key ? { key: opts.key } : {}),
        ...(opts.version !== undefined ? { version: opts.version } : {}),
      }),
    async stop() {
      await a2a.close();
      await server.stop();
    },
  };
}

/** The `data:` payloads of an SSE body, parsed. */
export function sseData(text: string): unknown[] {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)) as unknown);
}

/** A user message in A2A form. */
export function userMessage(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    role: 'ROLE_USER',
    parts: [{ text }],
    ...extra,
  };
}

/** Polls until `check` holds (bounded). */
export async function eventually(check: () => Promise<boolean>, what: string, bound = 5000): Promise<void> {
  const end = Date.now() + bound;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
