/** Cases that check the HTTP wire itself (routes, status codes, bodies, credential extraction). */
import { createTask, newId, type Task, type TaskList } from '@agent/core';
import type { ConformanceCase, CaseContext } from '../context.js';
import { assert, errorBody } from '../expect.js';
import { authorizationHeader } from '../presented-credentials.js';
import { postJson, rawHttp, type RawResponse } from '../raw-http.js';

const HTTP = ['http'] as const;

function url(ctx: CaseContext): string {
  assert.ok(ctx.httpUrl, 'raw HTTP cases need --transport http');
  return ctx.httpUrl;
}

function goodAuth(ctx: CaseContext): Record<string, string> {
  return ctx.auth ? { authorization: authorizationHeader(ctx.auth.kind, ctx.auth.token) } : {};
}

function echoTask(text = 'conformance') {
  return createTask(`echo ${text}`);
}

function expectStatus(res: RawResponse, status: number, what: string): void {
  assert.equal(
    res.status,
    status,
    `${what}: expected HTTP ${status}, got ${res.status} ${res.text.slice(0, 200)}`,
  );
}

function expectErrorCode(res: RawResponse, status: number, code: string, what: string): void {
  expectStatus(res, status, what);
  assert.match(String(res.headers['content-type']), /application\/json/, `${what}: error bodies are JSON`);
  const error = errorBody(res.json);
  assert.equal(error.code, code, `${what}: expected error.code ${code}, got ${String(error.code)}`);
  assert.equal(typeof error.message, 'string', `${what}: error.message is a string`);
}

async function sendWith(ctx: CaseContext, headers: Record<string, string>, query = ''): Promise<RawResponse> {
  return postJson(url(ctx), `/tasks/${query}`, echoTask(), headers);
}

/** Runs a task through `POST /tasks/` and returns the answer. */
async function sendOver(ctx: CaseContext, task: Task): Promise<Task> {
  const res = await postJson(url(ctx), '/tasks/', task, goodAuth(ctx));
  expectStatus(res, 200, 'POST /tasks/');
  return res.json as Task;
}

/** The frames of a finished `text/event-stream` response: each frame's `id:` and its `data:` JSON. */
function eventFrames(
  res: RawResponse,
  what: string,
): { id: string; event: { sequence?: number; type?: string } }[] {
  expectStatus(res, 200, what);
  assert.match(String(res.headers['content-type']), /^text\/event-stream/, `${what}: text/event-stream`);
  return res.text
    .split(/\r?\n\r?\n/)
    .filter((frame) => /^data:/m.test(frame))
    .map((frame) => {
      const field = (name: string): string =>
        frame
          .split(/\r?\n/)
          .filter((line) => line.startsWith(`${name}:`))
          .map((line) => line.slice(name.length + 1).replace(/^ /, ''))
          .join('\n');
      return { id: field('id'), event: JSON.parse(field('data')) as { sequence?: number; type?: string } };
    });
}

function expectPointer(res: RawResponse, pointer: string, what: string): void {
  expectErrorCode(res, 422, 'VALIDATION_FAILED', what);
  const errors = (errorBody(res.json).data as { errors?: { pointer: string }[] } | undefined)?.errors ?? [];
  assert.ok(
    errors.some((e) => e.pointer === pointer),
    `${what}: data.errors names ${pointer}: ${JSON.stringify(errors)}`,
  );
}

export const httpCases: ConformanceCase[] = [
  {
    id: 'http.healthz',
    title: '/healthz answers 200 {"status":"ok"} without credentials',
    transports: HTTP,
    async run(ctx) {
      const res = await rawHttp(url(ctx), '/healthz');
      expectStatus(res, 200, 'GET /healthz');
      assert.deepEqual(res.json, { status: 'ok' });
    },
  },
  {
    id: 'http.readyz',
    title: '/readyz answers 200 {"status":"ready"} without credentials',
    transports: HTTP,
    async run(ctx) {
      const res = await rawHttp(url(ctx), '/readyz');
      expectStatus(res, 200, 'GET /readyz');
      assert.deepEqual(res.json, { status: 'ready' });
    },
  },
  {
    id: 'http.card.public',
    title: 'without an authenticator the native card is public and has no securitySchemes',
    transports: HTTP,
    auth: 'none',
    async run(ctx) {
      const res = await rawHttp(url(ctx), '/.well-known/agent.json');
      expectStatus(res, 200, 'GET /.well-known/agent.json');
      const card = res.json as Record<string, unknown>;
      assert.equal(typeof card.name, 'string');
      assert.equal(typeof card.url, 'string');
      assert.ok(!('securitySchemes' in card), 'no securitySchemes key without an authenticator');
    },
  },
  {
    id: 'http.card.protected',
    title: 'with an authenticator the native card needs credentials and lists securitySchemes by auth type',
    transports: HTTP,
    auth: 'required',
    async run(ctx) {
      expectErrorCode(
        await rawHttp(url(ctx), '/.well-known/agent.json'),
        401,
        'UNAUTHENTICATED',
        'card without credentials',
      );
      const res = await rawHttp(url(ctx), '/.well-known/agent.json', { headers: goodAuth(ctx) });
      expectStatus(res, 200, 'card with credentials');
      const schemes = (
        res.json as { securitySchemes?: Record<string, { type: string; scheme: string | null }> }
      ).securitySchemes;
      assert.ok(schemes, 'card has securitySchemes');
      const expectedType = ctx.auth!.kind === 'apikey' ? 'apiKey' : 'http';
      assert.ok(
        schemes[expectedType],
        `securitySchemes is keyed by auth type ${expectedType}: ${JSON.stringify(schemes)}`,
      );
      assert.equal(schemes[expectedType]!.type, expectedType);
      for (const entry of Object.values(schemes)) {
        assert.deepEqual(Object.keys(entry).sort(), ['description', 'metadata', 'scheme', 'type']);
      }
      if (ctx.auth!.kind !== 'apikey') assert.equal(schemes.http!.scheme, ctx.auth!.kind);
    },
  },
  {
    id: 'http.auth.missing',
    title: 'a protected route without credentials answers 401 with the JSON error body',
    transports: HTTP,
    auth: 'required',
    async run(ctx) {
      expectErrorCode(await sendWith(ctx, {}), 401, 'UNAUTHENTICATED', 'POST /tasks/ without credentials');
      expectErrorCode(
        await postJson(url(ctx), '/tasks/cancel', { task_id: 'x' }),
        401,
        'UNAUTHENTICATED',
        'cancel without credentials',
      );
    },
  },
  {
    id: 'http.auth.wrong',
    title: 'wrong credentials answer 401 and the body never echoes the credential',
    transports: HTTP,
    auth: 'required',
    async run(ctx) {
      const wrong = 'wrong-credential-0123456789';
      const res = await sendWith(ctx, { authorization: authorizationHeader(ctx.auth!.kind, wrong) });
      expectErrorCode(res, 401, 'UNAUTHENTICATED', 'wrong credentials');
      assert.ok(!res.text.includes(wrong), 'the 401 body must not echo the credential');
    },
  },
  {
    id: 'http.auth.authorization-prefixes',
    title: 'the Authorization header is accepted with a case-insensitive scheme prefix',
    transports: HTTP,
    auth: 'required',
    async run(ctx) {
      const { kind, token } = ctx.auth!;
      const prefix = kind === 'apikey' ? 'apikey' : kind === 'bearer' ? 'BEARER' : 'basic';
      expectStatus(
        await sendWith(ctx, { authorization: `${prefix} ${token}` }),
        200,
        `Authorization: ${prefix}`,
      );
      expectStatus(
        await sendWith(ctx, { authorization: authorizationHeader(kind, token) }),
        200,
        'canonical prefix',
      );
    },
  },
  {
    id: 'http.auth.x-api-key',
    title: 'the X-API-Key header carries credentials when no Authorization header is sent',
    transports: HTTP,
    auth: 'required',
    async run(ctx) {
      expectStatus(await sendWith(ctx, { 'x-api-key': ctx.auth!.token }), 200, 'X-API-Key');
    },
  },
  {
    id: 'http.auth.query',
    title: 'query parameters api_key, apikey and token carry credentials when no header does',
    transports: HTTP,
    auth: 'required',
    async run(ctx) {
      const token = encodeURIComponent(ctx.auth!.token);
      for (const name of ['api_key', 'apikey', 'token']) {
        expectStatus(await sendWith(ctx, {}, `?${name}=${token}`), 200, `query ${name}`);
      }
    },
  },
  {
    id: 'http.auth.precedence',
    title: 'Authorization beats X-API-Key, and headers beat query parameters',
    transports: HTTP,
    auth: 'required',
    async run(ctx) {
      const { kind, token } = ctx.auth!;
      const wrong = authorizationHeader(kind, 'not-the-credential');
      expectErrorCode(
        await sendWith(ctx, { authorization: wrong, 'x-api-key': token }),
        401,
        'UNAUTHENTICATED',
        'bad Authorization + good X-API-Key',
      );
      expectStatus(
        await sendWith(ctx, { authorization: authorizationHeader(kind, token), 'x-api-key': 'nope' }),
        200,
        'good Authorization + bad X-API-Key',
      );
      expectErrorCode(
        await sendWith(ctx, { 'x-api-key': 'nope' }, `?api_key=${encodeURIComponent(token)}`),
        401,
        'UNAUTHENTICATED',
        'bad X-API-Key + good query',
      );
      expectErrorCode(
        await sendWith(ctx, {}, `?api_key=nope&token=${encodeURIComponent(token)}`),
        401,
        'UNAUTHENTICATED',
        'api_key is read before token',
      );
    },
  },
  {
    id: 'http.public-routes',
    title: '/healthz and /readyz stay public with an authenticator; /.well-known/agent.json does not',
    transports: HTTP,
    auth: 'required',
    async run(ctx) {
      expectStatus(await rawHttp(url(ctx), '/healthz'), 200, '/healthz');
      expectStatus(await rawHttp(url(ctx), '/readyz'), 200, '/readyz');
      expectStatus(await rawHttp(url(ctx), '/.well-known/agent.json'), 401, '/.well-known/agent.json');
    },
  },
  {
    id: 'http.body.malformed',
    title: 'malformed JSON answers 400 INVALID_REQUEST',
    transports: HTTP,
    async run(ctx) {
      const res = await rawHttp(url(ctx), '/tasks/', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...goodAuth(ctx) },
        body: '{"id": "x", ',
      });
      expectErrorCode(res, 400, 'INVALID_REQUEST', 'malformed JSON');
    },
  },
  {
    id: 'http.body.schema',
    title: 'a body that fails the Task schema answers 422 VALIDATION_FAILED naming the pointer',
    transports: HTTP,
    async run(ctx) {
      const res = await postJson(url(ctx), '/tasks/', { id: 't', state: 'sleeping' }, goodAuth(ctx));
      expectErrorCode(res, 422, 'VALIDATION_FAILED', 'unknown state');
      const errors =
        (errorBody(res.json).data as { errors?: { pointer: string }[] } | undefined)?.errors ?? [];
      assert.ok(
        errors.some((e) => e.pointer === '/state'),
        `data.errors names /state: ${JSON.stringify(errors)}`,
      );
      expectErrorCode(
        await postJson(url(ctx), '/tasks/', [1, 2], goodAuth(ctx)),
        422,
        'VALIDATION_FAILED',
        'array body',
      );
      expectErrorCode(
        await postJson(url(ctx), '/tasks/', 'text', goodAuth(ctx)),
        422,
        'VALIDATION_FAILED',
        'string body',
      );
    },
  },
  {
    id: 'http.body.too-large',
    title: 'a body over the limit (4 MiB) answers 413 PAYLOAD_TOO_LARGE',
    transports: HTTP,
    async run(ctx) {
      const task = createTask(`echo ${'x'.repeat(4 * 1024 * 1024 + 16)}`);
      const res = await postJson(url(ctx), '/tasks/', task, goodAuth(ctx));
      expectErrorCode(res, 413, 'PAYLOAD_TOO_LARGE', 'oversized body');
    },
  },
  {
    id: 'http.unknown-route',
    title: 'an unknown route answers 404 with the JSON error body',
    transports: HTTP,
    async run(ctx) {
      const res = await rawHttp(url(ctx), '/no/such/route', { headers: goodAuth(ctx) });
      assert.equal(res.status, 404);
      assert.equal(typeof errorBody(res.json).code, 'string');
    },
  },
  {
    id: 'http.cancel.body',
    title: 'POST /tasks/cancel reads task_id (and id) and answers 404 TASK_NOT_FOUND for unknown ids',
    transports: HTTP,
    async run(ctx) {
      expectErrorCode(
        await postJson(url(ctx), '/tasks/cancel', { task_id: 'never-seen' }, goodAuth(ctx)),
        404,
        'TASK_NOT_FOUND',
        'task_id',
      );
      expectErrorCode(
        await postJson(url(ctx), '/tasks/cancel', { id: 'never-seen' }, goodAuth(ctx)),
        404,
        'TASK_NOT_FOUND',
        'id',
      );
      expectErrorCode(
        await postJson(url(ctx), '/tasks/cancel', {}, goodAuth(ctx)),
        422,
        'VALIDATION_FAILED',
        'no id',
      );
    },
  },
  {
    id: 'http.tasks.get',
    title:
      'GET /tasks/{id}?history_length=N answers the Task with its newest N messages; an unknown id 404 TASK_NOT_FOUND',
    transports: HTTP,
    async run(ctx) {
      const done = await sendOver(ctx, echoTask('read over the wire'));
      const id = encodeURIComponent(done.id);
      const whole = await rawHttp(url(ctx), `/tasks/${id}`, { headers: goodAuth(ctx) });
      expectStatus(whole, 200, 'GET /tasks/{id}');
      assert.match(String(whole.headers['content-type']), /application\/json/);
      assert.deepEqual(whole.json, done, 'the task as answered');
      const last = await rawHttp(url(ctx), `/tasks/${id}?history_length=1`, { headers: goodAuth(ctx) });
      expectStatus(last, 200, 'history_length=1');
      assert.deepEqual((last.json as Task).messages, done.messages.slice(-1), 'the newest message');
      expectErrorCode(
        await rawHttp(url(ctx), `/tasks/${encodeURIComponent(newId())}`, { headers: goodAuth(ctx) }),
        404,
        'TASK_NOT_FOUND',
        'an unknown id',
      );
      expectPointer(
        await rawHttp(url(ctx), `/tasks/${id}?history_length=many`, { headers: goodAuth(ctx) }),
        '/history_length',
        'history_length=many',
      );
    },
  },
  {
    id: 'http.tasks.list',
    title:
      'GET /tasks?session_id=&state=&page_size=&page_token= answers {"tasks", "next_page_token"} page by page',
    transports: HTTP,
    async run(ctx) {
      const session = `conformance-${newId()}`;
      const ids: string[] = [];
      for (const text of ['older', 'newer']) {
        const task = createTask(`echo ${text}`, { metadata: { run_context: { session_id: session } } });
        ids.push((await sendOver(ctx, task)).id);
        // Newest first is by update time: tasks saved within one millisecond tie.
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
      const query = `session_id=${encodeURIComponent(session)}&state=completed&page_size=1`;
      const first = await rawHttp(url(ctx), `/tasks?${query}`, { headers: goodAuth(ctx) });
      expectStatus(first, 200, 'page 1');
      const page1 = first.json as TaskList;
      assert.deepEqual(Object.keys(page1).sort(), ['next_page_token', 'tasks']);
      assert.deepEqual(
        page1.tasks.map((t) => t.id),
        [ids[1]],
        'page 1: the newer task',
      );
      assert.notEqual(page1.next_page_token, '');
      const token = encodeURIComponent(page1.next_page_token);
      const second = await rawHttp(url(ctx), `/tasks?${query}&page_token=${token}`, {
        headers: goodAuth(ctx),
      });
      expectStatus(second, 200, 'page 2');
      assert.deepEqual(
        (second.json as TaskList).tasks.map((t) => t.id),
        [ids[0]],
        'page 2: the older task',
      );
      assert.equal((second.json as TaskList).next_page_token, '', 'the last page');
      expectPointer(
        await rawHttp(url(ctx), '/tasks?page_size=0', { headers: goodAuth(ctx) }),
        '/page_size',
        'page_size=0',
      );
    },
  },
  {
    id: 'http.tasks.events',
    title:
      'GET /tasks/{id}/events replays the events as text/event-stream, frame id = sequence, after Last-Event-ID or ?after',
    transports: HTTP,
    async run(ctx) {
      const task = createTask('stream 3');
      const streamed = eventFrames(
        await rawHttp(url(ctx), '/tasks/stream', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...goodAuth(ctx) },
          body: JSON.stringify(task),
        }),
        'POST /tasks/stream',
      );
      assert.ok(
        streamed.length >= 5,
        `stream 3: working, 3 artifacts, the final status; got ${streamed.length}`,
      );
      assert.deepEqual(
        streamed.map((f) => [f.id, f.event.sequence]),
        streamed.map((_, i) => [String(i + 1), i + 1]),
        'POST /tasks/stream: each frame id is its event sequence, from 1',
      );
      const path = `/tasks/${encodeURIComponent(task.id)}/events`;
      const all = eventFrames(await rawHttp(url(ctx), path, { headers: goodAuth(ctx) }), 'all events');
      assert.deepEqual(
        all.map((f) => [f.id, f.event.type]),
        streamed.map((f) => [f.id, f.event.type]),
        'the replay is the stream, frame for frame',
      );
      const tail = all.slice(2).map((f) => f.id);
      const header = eventFrames(
        await rawHttp(url(ctx), path, { headers: { ...goodAuth(ctx), 'last-event-id': '2' } }),
        'Last-Event-ID: 2',
      );
      assert.deepEqual(
        header.map((f) => f.id),
        tail,
        'Last-Event-ID: 2 resumes after the second event',
      );
      const query = eventFrames(
        await rawHttp(url(ctx), `${path}?after=2`, { headers: goodAuth(ctx) }),
        '?after=2',
      );
      assert.deepEqual(
        query.map((f) => f.id),
        tail,
        '?after=2 resumes after the second event',
      );
      expectErrorCode(
        await rawHttp(url(ctx), `/tasks/${encodeURIComponent(newId())}/events`, { headers: goodAuth(ctx) }),
        404,
        'TASK_NOT_FOUND',
        'events of an unknown id',
      );
    },
  },
];
