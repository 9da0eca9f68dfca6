/**
 * Cases for a server that serves A2A 1.0 (HTTP only): the public agent card at
 * `/.well-known/agent-card.json`, the JSON-RPC 2.0 binding at the card's JSONRPC interface and the
 * HTTP+JSON binding at its HTTP+JSON interface, when it declares one. They speak raw HTTP (no A2A
 * SDK): the wire is what they check. Every case sends tasks of its own (`echo <random>`, message ids
 * `conformance-…`), so runs against one server do not see each other.
 *
 * What a task answers is checked loosely: against an agent whose card declares an `echo` skill (the
 * reference server's demo agent) the reply must carry the text; against any other agent only the
 * Task's shape is checked.
 */
import { validateA2ACard } from '@agent/a2a';
import { newId } from '@agent/core';
import type { CaseContext, ConformanceCase } from '../context.js';
import { assert, errorBody } from '../expect.js';
import { credentialHeaders, type Caller } from '../presented-credentials.js';
import { rawHttp, type RawResponse } from '../raw-http.js';

const HTTP = ['http'] as const;
export const A2A_CARD_PATH = '/.well-known/agent-card.json';
const VERSION = { 'a2a-version': '1.0' };
const TERMINAL = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];
const STATE_NAME = /^TASK_STATE_[A-Z_]+$/;

/** The A2A JSON-RPC error codes the cases expect. */
const CODES = {
  parse: -32700,
  methodNotFound: -32601,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  unsupportedOperation: -32004,
  versionNotSupported: -32009,
} as const;

interface A2APart {
  text?: string;
}
interface A2AMessage {
  messageId: string;
  role: string;
  parts: A2APart[];
}
interface A2ATask {
  id: string;
  contextId: string;
  status: { state: string; message?: A2AMessage };
  history?: A2AMessage[];
  artifacts?: { parts: A2APart[] }[];
}
interface A2AInterface {
  url: string;
  protocolBinding: string;
  protocolVersion?: string;
  tenant?: string;
}
interface Card {
  supportedInterfaces?: A2AInterface[];
  securitySchemes?: Record<string, Record<string, unknown>>;
  securityRequirements?: Record<string, unknown>[];
  skills?: { id: string }[];
}
interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** Who sends a request: the first principal (default), the second one, or nobody. */

/** Where the server speaks A2A, read from its card. */
interface Endpoints {
  card: Card;
  jsonRpc: A2AInterface;
  rest?: A2AInterface;
  /** The card declares an `echo` skill: its replies must carry the text. */
  echoes: boolean;
}

function base(ctx: CaseContext): string {
  assert.ok(ctx.httpUrl, 'the A2A cases need --transport http');
  return ctx.httpUrl;
}

function readCard(ctx: CaseContext, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawHttp(base(ctx), A2A_CARD_PATH, { headers, signal: ctx.signal });
}

async function endpoints(ctx: CaseContext): Promise<Endpoints> {
  const res = await readCard(ctx);
  expectStatus(res, 200, `GET ${A2A_CARD_PATH}`);
  const card = res.json as Card;
  const interfaces = Array.isArray(card?.supportedInterfaces) ? card.supportedInterfaces : [];
  const jsonRpc = interfaces.find((i) => i.protocolBinding === 'JSONRPC');
  assert.ok(jsonRpc, `the card declares no JSONRPC interface: ${JSON.stringify(interfaces)}`);
  const rest = interfaces.find((i) => i.protocolBinding === 'HTTP+JSON');
  const echoes = Array.isArray(card.skills) && card.skills.some((s) => s?.id === 'echo');
  return { card, jsonRpc, ...(rest ? { rest } : {}), echoes };
}

function expectStatus(res: RawResponse, status: number, what: string): void {
  assert.equal(
    res.status,
    status,
    `${what}: expected HTTP ${status}, got ${res.status} ${res.text.slice(0, 300)}`,
  );
}

interface RpcCall {
  as?: Caller;
  /** Headers over the defaults (`A2A-Version: 1.0`, the caller's credentials). */
  headers?: Record<string, string>;
  /** Sent as it is instead of a JSON-RPC request (malformed JSON). */
  raw?: string;
  /** The JSON-RPC request id (default: a fresh one). */
  id?: string | number;
}

/** A JSON-RPC request to the card's JSONRPC interface; the interface's tenant goes into params. */
function rpc(
  ctx: CaseContext,
  ep: Endpoints,
  method: string,
  params: Record<string, unknown>,
  options: RpcCall = {},
): Promise<RawResponse> {
  const headers = {
    'content-type': 'application/json',
    ...VERSION,
    ...credentialHeaders(ctx, options.as ?? 'self'),
    ...options.headers,
  };
  const withTenant = ep.jsonRpc.tenant ? { tenant: ep.jsonRpc.tenant, ...params } : params;
  const body =
    options.raw ??
    JSON.stringify({
      jsonrpc: '2.0',
      id: options.id ?? `conformance-${newId()}`,
      method,
      params: withTenant,
    });
  return rawHttp(ep.jsonRpc.url, ep.jsonRpc.url, { method: 'POST', headers, body, signal: ctx.signal });
}

/** The `result` of a JSON-RPC answer that must succeed. */
function rpcResult<T>(res: RawResponse, what: string): T {
  expectStatus(res, 200, what);
  assert.match(String(res.headers['content-type']), /application\/(a2a\+)?json/, `${what}: a JSON answer`);
  const body = res.json as { jsonrpc?: unknown; result?: T; error?: unknown };
  assert.equal(body?.jsonrpc, '2.0', `${what}: a JSON-RPC 2.0 envelope: ${res.text.slice(0, 300)}`);
  assert.ok(body.result !== undefined, `${what}: expected a result, got ${res.text.slice(0, 300)}`);
  return body.result;
}

/** The JSON-RPC error of an answer that must fail with `code`, over HTTP 200. */
function rpcError(res: RawResponse, code: number, what: string): RpcError {
  expectStatus(res, 200, what);
  assert.match(
    String(res.headers['content-type']),
    /application\/(a2a\+)?json/,
    `${what}: a JSON answer, before any stream`,
  );
  const body = res.json as { jsonrpc?: unknown; result?: unknown };
  assert.equal(body?.jsonrpc, '2.0', `${what}: a JSON-RPC 2.0 envelope: ${res.text.slice(0, 300)}`);
  assert.equal(body.result, undefined, `${what}: expected an error, got a result`);
  const error = errorBody(body) as RpcError;
  assert.equal(error.code, code, `${what}: expected error code ${code}, got ${JSON.stringify(error)}`);
  assert.equal(typeof error.message, 'string', `${what}: error.message is a string`);
  return error;
}

function message(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messageId: `conformance-${newId()}`, role: 'ROLE_USER', parts: [{ text }], ...extra };
}

function textsOf(task: A2ATask): string[] {
  const messages = [...(task.history ?? []), ...(task.status.message ? [task.status.message] : [])];
  const parts = [
    ...messages.filter((m) => m.role === 'ROLE_AGENT').flatMap((m) => m.parts ?? []),
    ...(task.artifacts ?? []).flatMap((a) => a.parts ?? []),
  ];
  return parts.map((p) => p.text).filter((t): t is string => typeof t === 'string');
}

/** A Task as A2A 1.0 carries it: `id`, `contextId`, `status.state` a `TASK_STATE_*` name. */
function expectTask(value: unknown, what: string): A2ATask {
  const task = value as A2ATask;
  assert.ok(task && typeof task === 'object', `${what}: a Task object, got ${JSON.stringify(value)}`);
  assert.equal(typeof task.id, 'string', `${what}: the Task has an id`);
  assert.ok(task.id !== '', `${what}: the Task id is not empty`);
  assert.equal(typeof task.contextId, 'string', `${what}: the Task has a contextId`);
  assert.match(
    String(task.status?.state),
    STATE_NAME,
    `${what}: status.state is a TASK_STATE_* name, got ${JSON.stringify(task.status)}`,
  );
  return task;
}

/**
 * Sends `echo <random>` with SendMessage (blocking) in a context of its own; checks the answer is a
 * terminal Task that carries the echo (for an agent declaring the `echo` skill).
 */
async function sendEcho(ctx: CaseContext, ep: Endpoints): Promise<{ task: A2ATask; text: string }> {
  const text = `conformance ${newId()}`;
  const contextId = `conformance-${newId()}`;
  const answer = rpcResult<{ task?: unknown }>(
    await rpc(ctx, ep, 'SendMessage', {
      message: message(`echo ${text}`, { contextId }),
      configuration: { returnImmediately: false },
    }),
    'SendMessage',
  );
  assert.ok(answer.task, `SendMessage answers {"task": …}, got ${JSON.stringify(answer).slice(0, 300)}`);
  const task = expectTask(answer.task, 'SendMessage');
  assert.ok(
    TERMINAL.includes(task.status.state),
    `SendMessage blocks until the task is terminal, got ${task.status.state}`,
  );
  assert.equal(task.contextId, contextId, "the Task keeps the message's contextId");
  if (ep.echoes) {
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED', 'echo completes');
    assert.ok(
      textsOf(task).some((t) => t.includes(text)),
      `the agent's reply carries the echoed text: ${JSON.stringify(task).slice(0, 500)}`,
    );
  }
  return { task, text };
}

/** The `result` (or `error`) of every `data:` frame of an SSE body, in order. */
function sseFrames(text: string): { result?: Record<string, unknown>; error?: unknown }[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((frame) =>
      frame
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length).replace(/^ /, ''))
        .join('\n'),
    )
    .filter((data) => data !== '')
    .map((data) => JSON.parse(data) as { result?: Record<string, unknown>; error?: unknown });
}

/** An answer made comparable across ids: the id made neutral. */
function neutral(res: RawResponse, id: string): { status: number; contentType: unknown; body: string } {
  return {
    status: res.status,
    contentType: res.headers['content-type'],
    body: res.text.split(id).join('<id>'),
  };
}

/** The REST base of the card's HTTP+JSON interface, its tenant as the path prefix. */
function restBase(rest: A2AInterface): string {
  const url = rest.url.replace(/\/+$/, '');
  return rest.tenant ? `${url}/${encodeURIComponent(rest.tenant)}` : url;
}

function restGet(ctx: CaseContext, rest: A2AInterface, path: string): Promise<RawResponse> {
  const url = `${restBase(rest)}${path}`;
  return rawHttp(url, url, {
    headers: { ...VERSION, ...credentialHeaders(ctx, 'self') },
    signal: ctx.signal,
  });
}

export const a2aCases: ConformanceCase[] = [
  {
    id: 'a2a.card.public',
    title: `GET ${A2A_CARD_PATH} is public JSON with Cache-Control max-age and an ETag; If-None-Match answers 304`,
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const res = await readCard(ctx);
      expectStatus(res, 200, 'the card without credentials');
      assert.match(String(res.headers['content-type']), /application\/json/, 'the card is JSON');
      assert.ok(res.json && typeof res.json === 'object', 'the card is a JSON object');
      assert.match(
        String(res.headers['cache-control']),
        /max-age=\d+/,
        `Cache-Control has a max-age: ${String(res.headers['cache-control'])}`,
      );
      const etag = res.headers.etag;
      assert.equal(typeof etag, 'string', 'the card has an ETag');
      const again = await readCard(ctx, { 'if-none-match': etag as string });
      expectStatus(again, 304, 'the card with a matching If-None-Match');
      assert.equal(again.text, '', 'a 304 has no body');
      const other = await readCard(ctx, { 'if-none-match': '"conformance-not-the-etag"' });
      expectStatus(other, 200, 'the card with an If-None-Match that does not match');
    },
  },
  {
    id: 'a2a.card.schema',
    title:
      'the card is an A2A 1.0 card: every securitySchemes entry has exactly one wrapper key, securityRequirements entries have schemes',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const res = await readCard(ctx);
      expectStatus(res, 200, 'the card');
      try {
        validateA2ACard(res.json);
      } catch (error) {
        assert.fail(`${(error as Error).message}: ${JSON.stringify((error as { data?: unknown }).data)}`);
      }
      const card = res.json as Card;
      for (const [name, scheme] of Object.entries(card.securitySchemes ?? {})) {
        const keys = Object.keys(scheme ?? {});
        assert.equal(
          keys.length,
          1,
          `securitySchemes.${name} has exactly one wrapper key, got ${keys.join(', ')}`,
        );
      }
      for (const [i, requirement] of (card.securityRequirements ?? []).entries()) {
        assert.ok(
          requirement && typeof requirement.schemes === 'object',
          `securityRequirements[${i}] has schemes: ${JSON.stringify(requirement)}`,
        );
        for (const name of Object.keys(requirement.schemes as object)) {
          assert.ok(
            card.securitySchemes?.[name],
            `securityRequirements[${i}] names ${name}, which securitySchemes declares`,
          );
        }
      }
      if (ctx.auth) {
        assert.ok(
          Object.keys(card.securitySchemes ?? {}).length > 0,
          'a server that authenticates declares its securitySchemes',
        );
        assert.ok((card.securityRequirements ?? []).length > 0, 'and its securityRequirements');
      }
    },
  },
  {
    id: 'a2a.card.interfaces',
    title: 'supportedInterfaces[0] is JSONRPC with protocolVersion "1.0"',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const res = await readCard(ctx);
      expectStatus(res, 200, 'the card');
      const first = (res.json as Card).supportedInterfaces?.[0];
      assert.ok(first, 'the card has supportedInterfaces');
      assert.equal(
        first.protocolBinding,
        'JSONRPC',
        `the first interface is JSONRPC: ${JSON.stringify(first)}`,
      );
      assert.equal(first.protocolVersion, '1.0', 'the first interface speaks protocolVersion "1.0"');
      assert.doesNotThrow(() => new URL(first.url), `its url is absolute: ${first.url}`);
    },
  },
  {
    id: 'a2a.send',
    title:
      'SendMessage (blocking, A2A-Version: 1.0) answers a terminal Task (id, contextId, TASK_STATE_*) carrying the echo',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      await sendEcho(ctx, ep);
    },
  },
  {
    id: 'a2a.get',
    title: 'GetTask reads a sent task back',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      const { task } = await sendEcho(ctx, ep);
      const read = expectTask(
        rpcResult(await rpc(ctx, ep, 'GetTask', { id: task.id }), 'GetTask'),
        'GetTask',
      );
      assert.equal(read.id, task.id, 'GetTask answers the task asked for');
      assert.equal(read.contextId, task.contextId, 'with its contextId');
      assert.equal(read.status.state, task.status.state, 'in the state SendMessage answered');
    },
  },
  {
    id: 'a2a.list',
    title: "ListTasks includes a sent task (by its contextId and in the caller's first page)",
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      const { task } = await sendEcho(ctx, ep);
      const ids = (res: RawResponse, what: string): string[] => {
        const page = rpcResult<{ tasks?: unknown }>(res, what);
        assert.ok(
          Array.isArray(page.tasks),
          `${what}: {tasks: […]}, got ${JSON.stringify(page).slice(0, 300)}`,
        );
        return (page.tasks as unknown[]).map((t, i) => expectTask(t, `${what}: tasks[${i}]`).id);
      };
      assert.deepEqual(
        ids(await rpc(ctx, ep, 'ListTasks', { contextId: task.contextId }), 'ListTasks by contextId'),
        [task.id],
        'ListTasks by contextId lists exactly the task',
      );
      assert.ok(
        ids(await rpc(ctx, ep, 'ListTasks', { pageSize: 100 }), 'ListTasks').includes(task.id),
        'the first page of ListTasks includes the task just sent',
      );
    },
  },
  {
    id: 'a2a.cancel.finished',
    title: 'CancelTask of a finished task answers -32002 (task not cancelable)',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      const { task } = await sendEcho(ctx, ep);
      if (task.status.state === 'TASK_STATE_CANCELED') return; // canceling a canceled task is idempotent
      rpcError(await rpc(ctx, ep, 'CancelTask', { id: task.id }), CODES.taskNotCancelable, 'CancelTask');
    },
  },
  {
    id: 'a2a.subscribe.finished',
    title: 'SubscribeToTask of a finished task answers -32004 (unsupported operation) before any stream',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      const { task } = await sendEcho(ctx, ep);
      rpcError(
        await rpc(ctx, ep, 'SubscribeToTask', { id: task.id }, { headers: { accept: 'text/event-stream' } }),
        CODES.unsupportedOperation,
        'SubscribeToTask',
      );
    },
  },
  {
    id: 'a2a.stream',
    title:
      'SendStreamingMessage answers text/event-stream: the first frame is the task, the last a terminal statusUpdate',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      const text = `conformance ${newId()}`;
      const id = `conformance-${newId()}`;
      const res = await rpc(
        ctx,
        ep,
        'SendStreamingMessage',
        { message: message(`echo ${text}`) },
        { id, headers: { accept: 'text/event-stream' } },
      );
      expectStatus(res, 200, 'SendStreamingMessage');
      assert.match(
        String(res.headers['content-type']),
        /^text\/event-stream/,
        'the answer is an event stream',
      );
      const frames = sseFrames(res.text);
      assert.ok(frames.length >= 2, `at least the task and a final status: ${res.text.slice(0, 500)}`);
      for (const [i, frame] of frames.entries()) {
        assert.equal((frame as { jsonrpc?: unknown }).jsonrpc, '2.0', `frame ${i} is a JSON-RPC response`);
        assert.equal((frame as { id?: unknown }).id, id, `frame ${i} carries the request's id`);
        assert.ok(frame.result, `frame ${i} is a result, not an error: ${JSON.stringify(frame)}`);
      }
      const first = frames[0]!.result!;
      assert.ok(first.task, `the first frame's result has task: ${JSON.stringify(first).slice(0, 300)}`);
      const task = expectTask(first.task, 'the first frame');
      const last = frames[frames.length - 1]!.result!;
      const update = last.statusUpdate as { taskId?: string; status?: { state?: string } } | undefined;
      assert.ok(update, `the last frame's result has statusUpdate: ${JSON.stringify(last).slice(0, 300)}`);
      assert.equal(update.taskId, task.id, "the final statusUpdate is the task's");
      assert.ok(
        TERMINAL.includes(String(update.status?.state)),
        `the final statusUpdate is terminal, got ${JSON.stringify(update.status)}`,
      );
      if (ep.echoes) {
        assert.equal(update.status?.state, 'TASK_STATE_COMPLETED', 'echo completes');
        assert.ok(res.text.includes(text), 'the stream carries the echoed text');
      }
    },
  },
  {
    id: 'a2a.errors.method',
    title: 'an unknown JSON-RPC method answers -32601 (HTTP 200)',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      rpcError(await rpc(ctx, ep, 'NoSuchMethod', {}), CODES.methodNotFound, 'an unknown method');
    },
  },
  {
    id: 'a2a.errors.parse',
    title: 'malformed JSON answers -32700 with HTTP 200 and id null',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      const res = await rpc(ctx, ep, 'SendMessage', {}, { raw: '{"jsonrpc": "2.0", "id": 1, "method": ' });
      rpcError(res, CODES.parse, 'malformed JSON');
      assert.equal((res.json as { id?: unknown }).id, null, 'the id of an unreadable request is null');
    },
  },
  {
    id: 'a2a.errors.version',
    title: 'A2A-Version: 99.0 answers -32009 (version not supported)',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      rpcError(
        await rpc(
          ctx,
          ep,
          'GetTask',
          { id: `conformance-${newId()}` },
          { headers: { 'a2a-version': '99.0' } },
        ),
        CODES.versionNotSupported,
        'A2A-Version: 99.0',
      );
    },
  },
  {
    id: 'a2a.auth.missing',
    title: 'a JSON-RPC call without credentials answers HTTP 401 with WWW-Authenticate',
    transports: HTTP,
    auth: 'required',
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      const res = await rpc(ctx, ep, 'GetTask', { id: `conformance-${newId()}` }, { as: 'anonymous' });
      expectStatus(res, 401, 'a call without credentials');
      const challenge = res.headers['www-authenticate'];
      assert.ok(
        typeof challenge === 'string' && challenge.trim() !== '',
        `the 401 carries WWW-Authenticate, got ${JSON.stringify(res.headers)}`,
      );
      const send = await rpc(
        ctx,
        ep,
        'SendMessage',
        { message: message('echo nobody') },
        { as: 'anonymous' },
      );
      expectStatus(send, 401, 'SendMessage without credentials');
    },
  },
  {
    id: 'a2a.owner.other-principal',
    title:
      "a second principal's GetTask, CancelTask and SubscribeToTask of the first one's task answer as for an unknown id; its ListTasks leaves it out",
    transports: HTTP,
    otherPrincipal: true,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      const { task } = await sendEcho(ctx, ep);
      const calls: [string, Record<string, string>][] = [
        ['GetTask', {}],
        ['CancelTask', {}],
        ['SubscribeToTask', { accept: 'text/event-stream' }],
      ];
      for (const [method, headers] of calls) {
        const unknown = `conformance-${newId()}`;
        const nobodys = await rpc(ctx, ep, method, { id: unknown }, { as: 'other', headers, id: 'owner' });
        rpcError(nobodys, CODES.taskNotFound, `the other's ${method} of an unknown id`);
        const theirs = await rpc(ctx, ep, method, { id: task.id }, { as: 'other', headers, id: 'owner' });
        assert.deepEqual(
          neutral(theirs, task.id),
          neutral(nobodys, unknown),
          `the other's ${method} of the task answers as for an unknown id`,
        );
      }
      for (const [params, what] of [
        [{ contextId: task.contextId }, 'by contextId'],
        [{ pageSize: 100 }, 'first page'],
      ] as const) {
        const page = rpcResult<{ tasks?: A2ATask[] }>(
          await rpc(ctx, ep, 'ListTasks', params, { as: 'other' }),
          `the other's ListTasks (${what})`,
        );
        assert.ok(Array.isArray(page.tasks), `the other's ListTasks (${what}): {tasks: […]}`);
        assert.ok(
          !page.tasks.some((t) => t.id === task.id),
          `the other's ListTasks (${what}) leaves the first one's task out`,
        );
      }
      // Still the owner's, untouched.
      const read = expectTask(
        rpcResult(await rpc(ctx, ep, 'GetTask', { id: task.id }), 'GetTask'),
        'GetTask',
      );
      assert.equal(read.status.state, task.status.state, "the owner's task is untouched");
    },
  },
  {
    id: 'a2a.rest.get',
    title:
      'HTTP+JSON (when the card declares it): GET {rest}/tasks/{id} reads the task; an unknown id is 404 with a google.rpc.Status body',
    transports: HTTP,
    a2a: true,
    async run(ctx) {
      const ep = await endpoints(ctx);
      if (!ep.rest) return; // the binding is optional: nothing to check
      const { task } = await sendEcho(ctx, ep);
      const res = await restGet(ctx, ep.rest, `/tasks/${encodeURIComponent(task.id)}`);
      expectStatus(res, 200, 'GET /tasks/{id}');
      assert.match(String(res.headers['content-type']), /application\/(a2a\+)?json/, 'a JSON answer');
      const read = expectTask(res.json, 'GET /tasks/{id}');
      assert.equal(read.id, task.id, 'the task asked for');
      assert.equal(read.contextId, task.contextId, 'with its contextId');
      assert.equal(read.status.state, task.status.state, 'in its state');
      const unknown = `conformance-${newId()}`;
      const missing = await restGet(ctx, ep.rest, `/tasks/${unknown}`);
      expectStatus(missing, 404, 'GET /tasks/{unknown id}');
      assert.match(String(missing.headers['content-type']), /application\/(a2a\+)?json/, 'a JSON error body');
      const status = errorBody(missing.json) as { code?: unknown; status?: unknown; message?: unknown };
      assert.equal(status.code, 404, `google.rpc.Status code 404: ${missing.text.slice(0, 300)}`);
      assert.equal(status.status, 'NOT_FOUND', 'google.rpc.Status status NOT_FOUND');
      assert.equal(typeof status.message, 'string', 'google.rpc.Status message is a string');
    },
  },
];
