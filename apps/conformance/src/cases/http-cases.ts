/** Cases that check the HTTP wire itself (routes, status codes, bodies, credential extraction). */
import { createTask } from '@agent/core';
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
];
