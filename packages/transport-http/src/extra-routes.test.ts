/** Extra routes: a route set served beside the task routes, on the same pipeline, on both backends. */
import { gzipSync } from 'node:zlib';
import express from 'express';
import { APIKeyAuth } from '@agent/auth';
import {
  NotFoundError,
  ValidationError,
  ValueError,
  createTask,
  type ClientRequestSpec,
  type Task,
} from '@agent/core';
import type { ServerCall } from '@agent/server';
import { RecordingLogger } from '@agent/server/testing';
import { createTestAgent, rawRequest, type RawResponse } from '@agent/test-support';
import type { HttpEndpoint } from './backend.js';
import { ExpressBackend } from './express-backend.js';
import { HTTPTransport } from './http-transport.js';
import {
  jsonEndpoint,
  type HttpRouteContext,
  type HttpRoutes,
  type JsonEndpointInput,
} from './json-endpoint.js';
import type { BackendName, HTTPTransportOptions } from './options.js';

const BACKENDS: BackendName[] = ['node', 'express'];
const KEY = 'sk-notes-owner-0123456789';
const OTHER_KEY = 'sk-notes-other-0123456789';

function errorOf(response: RawResponse): { code: string; message: string; data?: Record<string, unknown> } {
  return (response.json as { error: { code: string; message: string; data?: Record<string, unknown> } })
    .error;
}

interface Note {
  name: string;
  text: string;
}

/** What one run saw: enough to check what the plumbing handed the endpoint. */
interface Seen {
  operation: string;
  tenant: string;
  principal: string;
  input: JsonEndpointInput;
}

/**
 * A tiny route set: notes owned by the caller (tenant and principal), at `/notes`. It also has an
 * endpoint that fails with a plain Error, to see the error policy mask it.
 */
class NoteRoutes implements HttpRoutes {
  readonly notes = new Map<string, Note>();
  readonly seen: Seen[] = [];
  contexts: HttpRouteContext[] = [];

  endpoints(context: HttpRouteContext): HttpEndpoint[] {
    this.contexts.push(context);
    const endpoint = (
      method: HttpEndpoint['method'],
      path: string,
      operation: string,
      body: boolean,
      run: (key: (name: string) => string, input: JsonEndpointInput) => { status?: number; body: unknown },
    ): HttpEndpoint =>
      jsonEndpoint(
        {
          method,
          path,
          operation,
          body,
          run: async (call: ServerCall, input) => {
            this.seen.push({ operation, tenant: call.tenant, principal: call.owner.principal_id, input });
            const key = (name: string): string =>
              JSON.stringify([call.tenant, call.owner.principal_id, name]);
            return run(key, input);
          },
        },
        context,
      );
    const found = (key: string, name: string): Note => {
      const note = this.notes.get(key);
      if (!note) throw new NotFoundError(`Note ${name} not found`);
      return note;
    };
    return [
      endpoint('POST', '/notes', 'create_note', true, (key, { body }) => {
        const note = body as Note;
        this.notes.set(key(note.name), note);
        return { status: 201, body: note };
      }),
      endpoint('GET', '/notes', 'list_notes', false, (_key, { query }) => ({
        body: { notes: [...this.notes.values()], query: [...query] },
      })),
      endpoint('GET', '/notes/{name}', 'get_note', false, (key, { params }) => ({
        body: found(key(params.name!), params.name!),
      })),
      endpoint('PUT', '/notes/{name}', 'put_note', true, (key, { params, body }) => {
        const note = { name: params.name!, text: (body as { text: string }).text };
        this.notes.set(key(params.name!), note);
        return { body: note };
      }),
      endpoint('DELETE', '/notes/{name}', 'delete_note', false, (key, { params, query }) => {
        const note = found(key(params.name!), params.name!);
        this.notes.delete(key(params.name!));
        return { body: { ...note, force: query.get('force') } };
      }),
      endpoint('POST', '/notes/{name}/boom', 'boom', false, () => {
        throw new Error('secret detail: the database password is hunter2');
      }),
      endpoint('GET', '/books/{book}/pages/{page}', 'get_page', false, (_key, { params }) => ({
        body: params,
      })),
    ];
  }
}

describe.each(BACKENDS)('extra routes on the %s backend', (backend) => {
  let server: HTTPTransport;
  let notes: NoteRoutes;
  let logger: RecordingLogger;
  let base: string;

  async function serve(options: Partial<HTTPTransportOptions> = {}): Promise<void> {
    notes = new NoteRoutes();
    logger = new RecordingLogger();
    server = new HTTPTransport({ url: 'http://127.0.0.1:0', backend, logger, routes: [notes], ...options });
    server.bind(createTestAgent({ announceWorking: false }));
    await server.start();
    base = server.url;
  }

  afterEach(async () => {
    await server?.stop();
  });

  describe('without an authenticator', () => {
    beforeEach(() => serve({ maxBodyBytes: 1024 }));

    it('serves the route set beside the task routes', async () => {
      const created = await rawRequest(`${base}/notes`, { body: { name: 'n1', text: 'hello' } });
      expect([created.status, created.json]).toEqual([201, { name: 'n1', text: 'hello' }]);
      expect(created.headers['content-type']).toBe('application/json; charset=utf-8');
      const read = await rawRequest(`${base}/notes/n1/`);
      expect([read.status, read.json]).toEqual([200, { name: 'n1', text: 'hello' }]);
      const replaced = await rawRequest(`${base}/notes/n1`, { method: 'PUT', body: { text: 'again' } });
      expect([replaced.status, replaced.json]).toEqual([200, { name: 'n1', text: 'again' }]);
      const removed = await rawRequest(`${base}/notes/n1?force=yes`, { method: 'DELETE' });
      expect([removed.status, removed.json]).toEqual([200, { name: 'n1', text: 'again', force: 'yes' }]);
      const gone = await rawRequest(`${base}/notes/n1`);
      expect([gone.status, errorOf(gone)]).toEqual([
        404,
        { code: 'NOT_FOUND', message: 'Note n1 not found' },
      ]);
      // The task routes are still there, answering as before.
      const task = await rawRequest(`${base}/tasks/`, { body: createTask('hello') });
      expect([task.status, (task.json as Task).state]).toEqual([200, 'completed']);
      expect(notes.contexts).toHaveLength(1);
      expect(notes.contexts[0]).toMatchObject({ basePath: '', maxBodyBytes: 1024 });
    });

    it('hands run the anonymous owner, the default tenant and the query without credential parameters', async () => {
      const listed = await rawRequest(`${base}/notes?prefix=a&api_key=sk-x&prefix=b&token=t`);
      expect(listed.status).toBe(200);
      expect((listed.json as { query: unknown }).query).toEqual([
        ['prefix', 'a'],
        ['prefix', 'b'],
      ]);
      expect(notes.seen[0]).toMatchObject({ operation: 'list_notes', tenant: '', principal: 'anonymous' });
      expect(notes.seen[0]!.input.body).toBeUndefined();
      expect(notes.seen[0]!.input.params).toEqual({});
    });

    it('decodes the path parameters, and refuses a malformed escape with 400 before run', async () => {
      const slash = await rawRequest(`${base}/notes/a%2Fb%20c%C3%A9`);
      expect(slash.status).toBe(404);
      expect(notes.seen.at(-1)!.input.params).toEqual({ name: 'a/b cé' });
      const page = await rawRequest(`${base}/books/the%20book/pages/7`);
      expect([page.status, page.json]).toEqual([200, { book: 'the book', page: '7' }]);
      const before = notes.seen.length;
      const malformed = await rawRequest(`${base}/notes/%E0%A4%A`, { method: 'PUT', body: { text: 'x' } });
      expect([malformed.status, errorOf(malformed).code]).toEqual([400, 'INVALID_REQUEST']);
      expect(errorOf(malformed).message).toMatch(/percent-encoding in the \{name\} segment/);
      expect(notes.seen).toHaveLength(before);
    });

    it('answers HEAD on an extra GET endpoint without a body', async () => {
      await rawRequest(`${base}/notes`, { body: { name: 'h', text: 'x' } });
      const head = await rawRequest(`${base}/notes/h`, { method: 'HEAD' });
      expect([head.status, head.text]).toEqual([200, '']);
    });

    it('answers 405 with every method of the path, extra and task routes alike', async () => {
      const patch = await rawRequest(`${base}/notes/n1`, { method: 'PATCH', body: '{}' });
      expect([patch.status, errorOf(patch).code, patch.headers.allow]).toEqual([
        405,
        'METHOD_NOT_ALLOWED',
        'GET, PUT, DELETE',
      ]);
      const collection = await rawRequest(`${base}/notes`, { method: 'DELETE' });
      expect([collection.status, collection.headers.allow]).toEqual([405, 'POST, GET']);
      const boom = await rawRequest(`${base}/notes/n1/boom`);
      expect([boom.status, boom.headers.allow]).toEqual([405, 'POST']);
      const tasks = await rawRequest(`${base}/tasks/`, { method: 'PUT', body: '{}' });
      expect([tasks.status, tasks.headers.allow]).toEqual([405, 'POST, GET']);
      const taskId = await rawRequest(`${base}/tasks/t1`, { method: 'DELETE' });
      expect([taskId.status, taskId.headers.allow]).toEqual([405, 'GET']);
      const unknown = await rawRequest(`${base}/notes/n1/other`);
      expect([unknown.status, errorOf(unknown).code]).toEqual([404, 'NOT_FOUND']);
      expect(notes.seen).toHaveLength(0);
    });

    it('masks an unexpected failure with the error policy: 500 INTERNAL, logged under its error_id', async () => {
      const response = await rawRequest(`${base}/notes/n1/boom`, { method: 'POST' });
      expect(response.status).toBe(500);
      const error = errorOf(response);
      expect(error.code).toBe('INTERNAL');
      expect(error.message).toBe('Internal error');
      expect(response.text).not.toMatch(/hunter2/);
      const line = logger.withErrorId(error.data?.error_id);
      expect(line?.fields).toMatchObject({ operation: 'boom', transport: 'http' });
      expect(String((line?.fields.err as Error).message)).toMatch(/hunter2/);
    });

    it('reads the body with the transport limits: 413, malformed JSON, empty body, Content-Encoding', async () => {
      const big = await rawRequest(`${base}/notes`, { body: { name: 'big', text: 'x'.repeat(2048) } });
      expect([big.status, errorOf(big).code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
      const chunked = await rawRequest(`${base}/notes/big`, {
        method: 'PUT',
        body: JSON.stringify({ text: 'y'.repeat(4096) }),
        chunked: true,
      });
      expect([chunked.status, errorOf(chunked).code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
      const malformed = await rawRequest(`${base}/notes`, { body: '{"name": ' });
      expect([malformed.status, errorOf(malformed).code]).toEqual([400, 'INVALID_REQUEST']);
      expect(errorOf(malformed).message).toMatch(/Malformed JSON/);
      const empty = await rawRequest(`${base}/notes/e`, { method: 'PUT' });
      expect([empty.status, errorOf(empty).message]).toEqual([
        400,
        'Malformed JSON: the request body is empty',
      ]);
      const gzip = await rawRequest(`${base}/notes`, {
        body: gzipSync(JSON.stringify({ name: 'z', text: 'z' })),
        headers: { 'content-encoding': 'gzip' },
      });
      expect([gzip.status, errorOf(gzip).code, errorOf(gzip).data]).toEqual([
        400,
        'INVALID_REQUEST',
        { content_encoding: 'gzip' },
      ]);
      expect(notes.seen).toHaveLength(0);
    });

    it('ignores a body sent to an endpoint that reads none', async () => {
      await rawRequest(`${base}/notes`, { body: { name: 'd', text: 'x' } });
      const removed = await rawRequest(`${base}/notes/d`, { method: 'DELETE', body: 'not json at all' });
      expect([removed.status, (removed.json as Note).name]).toEqual([200, 'd']);
    });
  });

  describe('with an authenticator', () => {
    beforeEach(() =>
      serve({
        authenticator: new APIKeyAuth({
          validKeys: { [KEY]: [], [OTHER_KEY]: [] },
          principals: { [KEY]: 'owner', [OTHER_KEY]: 'other' },
          tenants: { [OTHER_KEY]: ['blue'] },
        }),
      }),
    );

    it('authenticates before run and before the body is read', async () => {
      const anonymous = await rawRequest(`${base}/notes`, { body: { name: 'n', text: 'x' } });
      expect([anonymous.status, errorOf(anonymous).code]).toEqual([401, 'UNAUTHENTICATED']);
      const wrong = await rawRequest(`${base}/notes/n`, { headers: { 'x-api-key': 'sk-wrong-key-000000' } });
      expect(wrong.status).toBe(401);
      // An unauthenticated upload is refused as such, whatever its body.
      const upload = await rawRequest(`${base}/notes`, { body: { name: 'n', text: 'x'.repeat(100_000) } });
      expect(upload.status).toBe(401);
      expect(notes.seen).toHaveLength(0);
    });

    it("hands run the caller's principal and tenant, and refuses a tenant the key may not use", async () => {
      const own = await rawRequest(`${base}/notes`, {
        body: { name: 'n', text: 'mine' },
        headers: { 'x-api-key': KEY },
      });
      expect(own.status).toBe(201);
      const blue = await rawRequest(`${base}/notes/n`, {
        headers: { 'x-api-key': OTHER_KEY, 'x-tenant': 'blue' },
      });
      expect([blue.status, errorOf(blue).code]).toEqual([404, 'NOT_FOUND']);
      expect(notes.seen.map((s) => [s.operation, s.principal, s.tenant])).toEqual([
        ['create_note', 'owner', ''],
        ['get_note', 'other', 'blue'],
      ]);
      const denied = await rawRequest(`${base}/notes/n`, {
        headers: { 'x-api-key': OTHER_KEY, 'x-tenant': 'red' },
      });
      expect([denied.status, errorOf(denied).code]).toEqual([403, 'PERMISSION_DENIED']);
      const malformed = await rawRequest(`${base}/notes/n`, {
        headers: { 'x-api-key': KEY, 'x-tenant': 'a b' },
      });
      expect([malformed.status, errorOf(malformed).code]).toEqual([400, 'INVALID_REQUEST']);
      // The credential in the query authenticates, and never reaches run's query.
      const byQuery = await rawRequest(`${base}/notes?api_key=${KEY}&x=1`);
      expect(byQuery.status).toBe(200);
      expect((byQuery.json as { query: unknown }).query).toEqual([['x', '1']]);
      expect(notes.seen).toHaveLength(3);
    });
  });

  it('serves the endpoints below the URL path, and asks the route set again on every start', async () => {
    await serve({ url: 'http://127.0.0.1:0/agents/a' });
    const created = await rawRequest(`${base}/notes`, { body: { name: 'n', text: 'x' } });
    expect(created.status).toBe(201);
    const outside = await rawRequest(`${base.replace('/agents/a', '')}/notes`, {
      body: { name: 'n', text: 'x' },
    });
    expect(outside.status).toBe(404);
    const first = notes.contexts[0]!;
    expect(first.basePath).toBe('/agents/a');
    await server.stop();
    await server.start();
    expect(notes.contexts).toHaveLength(2);
    expect(notes.contexts[1]!.pipeline).not.toBe(first.pipeline);
    const again = await rawRequest(`${server.url}/notes/n`);
    expect(again.status).toBe(200);
  });

  it('answers 503 UNAVAILABLE on an extra route while stopping', async () => {
    await serve();
    const pipeline = notes.contexts[0]!.pipeline;
    pipeline.beginStop();
    const refused = await rawRequest(`${base}/notes/n`);
    expect([refused.status, errorOf(refused).code]).toEqual([503, 'UNAVAILABLE']);
    expect(notes.seen).toHaveLength(0);
  });
});

describe('extra routes on an express app that parsed the body itself', () => {
  it('uses the parsed body, and still refuses a compressed one', async () => {
    const app = express();
    app.use(express.json());
    const notes = new NoteRoutes();
    const server = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      backend: (options) => new ExpressBackend({ ...options, app }),
      routes: [notes],
    });
    server.bind(createTestAgent({ announceWorking: false }));
    await server.start();
    try {
      const put = await rawRequest(`${server.url}/notes/p`, { method: 'PUT', body: { text: 'parsed' } });
      expect([put.status, put.json]).toEqual([200, { name: 'p', text: 'parsed' }]);
      const gzip = await rawRequest(`${server.url}/notes/p`, {
        method: 'PUT',
        body: gzipSync(JSON.stringify({ text: 'z' })),
        headers: { 'content-encoding': 'gzip' },
      });
      expect([gzip.status, errorOf(gzip).code]).toEqual([400, 'INVALID_REQUEST']);
    } finally {
      await server.stop();
    }
  });
});

describe('the routes option', () => {
  /** A route set of plain endpoints, each answering with its own path. */
  function routesOf(...specs: [HttpEndpoint['method'], string][]): HttpRoutes {
    return {
      endpoints: (context) =>
        specs.map(([method, path]) =>
          jsonEndpoint(
            { method, path, operation: 'probe', body: false, run: async () => ({ body: { route: path } }) },
            context,
          ),
        ),
    };
  }

  async function startWith(...routes: HttpRoutes[]): Promise<HTTPTransport> {
    const server = new HTTPTransport({ url: 'http://127.0.0.1:0', routes });
    server.bind(createTestAgent({ announceWorking: false }));
    await server.start();
    return server;
  }

  async function refusal(...routes: HttpRoutes[]): Promise<ValueError> {
    const server = new HTTPTransport({ url: 'http://127.0.0.1:0/base', routes });
    server.bind(createTestAgent({ announceWorking: false }));
    const error = await server.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    await server.stop();
    expect(error).toBeInstanceOf(ValueError);
    expect((error as ValueError).data).toEqual({ option: 'routes' });
    return error as ValueError;
  }

  it('refuses a value that is not a list of route sets at construction, naming the option', () => {
    for (const routes of [{}, 'notes', [{}], [null], [{ endpoints: 'no' }]]) {
      expect(
        () => new HTTPTransport({ url: 'http://127.0.0.1:0', routes } as unknown as HTTPTransportOptions),
      ).toThrow(/HTTPTransport option "routes"/);
    }
    expect(() => new HTTPTransport({ url: 'http://127.0.0.1:0', routes: [] })).not.toThrow();
  });

  it('refuses at start an endpoint that would take requests of a task route or of another endpoint', async () => {
    expect((await refusal(routesOf(['GET', '/tasks/{x}']))).message).toMatch(
      /routes\[0\]: GET \/base\/tasks\/\{x\} conflicts with GET \/base\/tasks\/\{id\} of the task routes/,
    );
    expect((await refusal(routesOf(['GET', '/tasks/special']))).message).toMatch(
      /conflicts with GET \/base\/tasks\/\{id\}/,
    );
    expect((await refusal(routesOf(['POST', '/tasks']))).message).toMatch(
      /conflicts with POST \/base\/tasks\//,
    );
    expect((await refusal(routesOf(['GET', '/.well-known/agent.json']))).message).toMatch(/conflicts/);
    expect((await refusal(routesOf(['POST', '/notes']), routesOf(['POST', '/notes/']))).message).toMatch(
      /routes\[1\]: POST \/base\/notes\/ conflicts with POST \/base\/notes of routes\[0\]/,
    );
    expect((await refusal(routesOf(['GET', '/n/{a}'], ['GET', '/n/{b}']))).message).toMatch(/conflicts/);
    expect((await refusal(routesOf(['GET', '/healthz']))).message).toMatch(/the host's own probe/);
  });

  it('refuses at start an endpoint that is not one', async () => {
    const raw = (endpoint: unknown): HttpRoutes => ({ endpoints: () => [endpoint as HttpEndpoint] });
    const serve = (): void => undefined;
    expect((await refusal(raw({ method: 'PATCH', path: '/base/x', serve }))).message).toMatch(
      /method must be one of/,
    );
    expect((await refusal(raw({ method: 'GET', path: '/elsewhere', serve }))).message).toMatch(
      /is not below/,
    );
    expect((await refusal(raw({ method: 'GET', path: '/base/{a}{b}', serve }))).message).toMatch(
      /one whole \{name\}/,
    );
    expect((await refusal(raw({ method: 'GET', path: '/base/x' }))).message).toMatch(/no serve\(\) function/);
    expect((await refusal({ endpoints: () => 'x' as unknown as HttpEndpoint[] })).message).toMatch(
      /did not return an array/,
    );
  });

  it('lets a more general endpoint serve what the more specific ones leave', async () => {
    const server = await startWith(routesOf(['GET', '/{anything}'], ['GET', '/a/{x}'], ['GET', '/{y}/b']));
    try {
      const answers = await Promise.all(
        ['/other', '/a/b', '/z/b', '/tasks/t1', '/tasks'].map((path) => rawRequest(`${server.url}${path}`)),
      );
      const said = (a: RawResponse): unknown =>
        (a.json as { route?: string; error?: { code: string } }).route ??
        (a.json as { error?: { code: string } }).error?.code;
      expect(answers.map((a) => [a.status, said(a)])).toEqual([
        [200, '/{anything}'],
        [200, '/a/{x}'],
        [200, '/{y}/b'],
        [404, 'TASK_NOT_FOUND'],
        [200, undefined],
      ]);
    } finally {
      await server.stop();
    }
  });

  it('refuses a jsonEndpoint spec that is not one', () => {
    const context = { basePath: '', maxBodyBytes: 1 } as HttpRouteContext;
    const run = async (): Promise<{ body: unknown }> => ({ body: null });
    const spec = { method: 'GET', path: '/x', operation: 'x', body: false, run } as const;
    expect(() => jsonEndpoint({ ...spec, method: 'PATCH' as 'GET' }, context)).toThrow(ValueError);
    expect(() => jsonEndpoint({ ...spec, path: 'x' }, context)).toThrow(/must start with "\/"/);
    expect(() => jsonEndpoint({ ...spec, path: '/x/{a}/{a}' }, context)).toThrow(/twice/);
    expect(() => jsonEndpoint({ ...spec, operation: '' }, context)).toThrow(ValueError);
    expect(() => jsonEndpoint({ ...spec, body: 'yes' as unknown as boolean }, context)).toThrow(ValueError);
    expect(() => jsonEndpoint({ ...spec, run: undefined as unknown as typeof run }, context)).toThrow(
      ValueError,
    );
    expect(() => jsonEndpoint(spec, undefined as unknown as HttpRouteContext)).toThrow(
      /needs the route context/,
    );
  });

  it('masks an endpoint that answers no answer, an invalid status or a body JSON cannot carry', async () => {
    const logger = new RecordingLogger();
    const broken: HttpRoutes = {
      endpoints: (context) => [
        jsonEndpoint(
          {
            method: 'GET',
            path: '/none',
            operation: 'none',
            body: false,
            run: async () => undefined as never,
          },
          context,
        ),
        jsonEndpoint(
          {
            method: 'GET',
            path: '/status',
            operation: 'status',
            body: false,
            run: async () => ({ status: 42, body: 1 }),
          },
          context,
        ),
        jsonEndpoint(
          {
            method: 'GET',
            path: '/nothing',
            operation: 'nothing',
            body: false,
            run: async () => ({ status: 202, body: undefined }),
          },
          context,
        ),
        jsonEndpoint(
          {
            method: 'GET',
            path: '/function',
            operation: 'function',
            body: false,
            run: async () => ({ body: () => 1 }),
          },
          context,
        ),
        jsonEndpoint(
          {
            method: 'GET',
            path: '/sync',
            operation: 'sync',
            body: false,
            run: () => {
              throw new NotFoundError('thrown, not rejected');
            },
          },
          context,
        ),
      ],
    };
    const server = new HTTPTransport({ url: 'http://127.0.0.1:0', routes: [broken], logger });
    server.bind(createTestAgent({ announceWorking: false }));
    await server.start();
    try {
      for (const path of ['/none', '/status', '/function']) {
        const response = await rawRequest(`${server.url}${path}`);
        expect([response.status, errorOf(response).code]).toEqual([500, 'INTERNAL']);
      }
      expect(logger.lines.map((line) => line.fields.operation)).toEqual(['none', 'status', 'function']);
      const nothing = await rawRequest(`${server.url}/nothing`);
      expect([nothing.status, nothing.text]).toEqual([202, 'null']);
      const sync = await rawRequest(`${server.url}/sync`);
      expect([sync.status, errorOf(sync).message]).toEqual([404, 'thrown, not rejected']);
    } finally {
      await server.stop();
    }
  });
});

/** The client side of the note routes: every method, placeholders from `params` or from `data`. */
const NOTE_OPERATIONS = {
  create: { name: 'create_note', method: 'POST', path: '/notes' },
  list: { name: 'list_notes', method: 'GET', path: '/notes' },
  get: { name: 'get_note', method: 'GET', path: '/notes/{name}' },
  put: { name: 'put_note', method: 'PUT', path: '/notes/{name}' },
  remove: { name: 'delete_note', method: 'DELETE', path: '/notes/{name}' },
  page: { name: 'get_page', method: 'GET', path: '/books/{book}/pages/{page}' },
} as const satisfies Record<string, ClientRequestSpec>;

describe.each(BACKENDS)('the client on extra routes of the %s backend', (backend) => {
  let server: HTTPTransport;
  let client: HTTPTransport;
  let notes: NoteRoutes;

  beforeEach(async () => {
    notes = new NoteRoutes();
    const authenticator = new APIKeyAuth({ validKeys: { [KEY]: [] }, principals: { [KEY]: 'owner' } });
    server = new HTTPTransport({ url: 'http://127.0.0.1:0', backend, authenticator, routes: [notes] });
    server.bind(createTestAgent({ announceWorking: false }));
    await server.start();
    client = new HTTPTransport({ url: server.url, authenticator, credentials: KEY, tenant: 'green' });
  });

  afterEach(async () => {
    await client.stop();
    await server.stop();
  });

  it('sends PUT and DELETE with their placeholders filled, authenticated, in its tenant', async () => {
    const url = server.url;
    await client.send(NOTE_OPERATIONS.create, url, { name: 'a/b c', text: 'first' });
    // From params: the body is sent whole, and the parameter is not repeated in the query.
    const put = await client.send<Note>(NOTE_OPERATIONS.put, url, { text: 'second' }, { name: 'a/b c' });
    expect(put).toEqual({ name: 'a/b c', text: 'second' });
    expect(notes.seen[1]!.input).toEqual({
      params: { name: 'a/b c' },
      body: { text: 'second' },
      query: expect.any(URLSearchParams),
    });
    expect([...notes.seen[1]!.input.query]).toEqual([]);
    // From data: the field fills the path and leaves the body.
    await client.send(NOTE_OPERATIONS.put, url, { name: 'a/b c', text: 'third' });
    expect(notes.seen[2]!.input.body).toEqual({ text: 'third' });
    const got = await client.send<Note>(NOTE_OPERATIONS.get, url, { name: 'a/b c' });
    expect(got).toEqual({ name: 'a/b c', text: 'third' });
    // DELETE carries the other fields in the query, as GET does; and sends no body.
    const removed = await client.send<Note & { force: string }>(NOTE_OPERATIONS.remove, url, {
      name: 'a/b c',
      force: true,
    });
    expect(removed).toEqual({ name: 'a/b c', text: 'third', force: 'true' });
    expect([...notes.seen[4]!.input.query]).toEqual([['force', 'true']]);
    expect(notes.seen.map((s) => [s.operation, s.principal, s.tenant])).toEqual([
      ['create_note', 'owner', 'green'],
      ['put_note', 'owner', 'green'],
      ['put_note', 'owner', 'green'],
      ['get_note', 'owner', 'green'],
      ['delete_note', 'owner', 'green'],
    ]);
    const error = await client.send(NOTE_OPERATIONS.get, url, { name: 'a/b c' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, message: 'Note a/b c not found' });
  });

  it('fills several placeholders and sends the remaining fields and params as the query', async () => {
    const page = await client.send(
      NOTE_OPERATIONS.page,
      server.url,
      { book: 'b/1', page: '7', limit: 5, skip: null },
      { lang: 'en' },
    );
    expect(page).toEqual({ book: 'b/1', page: '7' });
    expect([...notes.seen[0]!.input.query].sort()).toEqual([
      ['lang', 'en'],
      ['limit', '5'],
    ]);
    const listed = await client.send<{ query: [string, string][] }>(NOTE_OPERATIONS.list, server.url, {
      prefix: 'a',
    });
    expect(listed.query).toEqual([['prefix', 'a']]);
  });

  it('refuses a missing or unusable placeholder value before sending', async () => {
    const url = server.url;
    const missing = await client.send(NOTE_OPERATIONS.put, url, { text: 'x' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ValidationError);
    expect((missing as ValidationError).data).toEqual({
      errors: [{ pointer: '/name', message: 'is required' }],
    });
    const number = await client.send(NOTE_OPERATIONS.remove, url, { name: 5 }).catch((e: unknown) => e);
    expect((number as ValidationError).message).toBe('Invalid delete_note request: /name must be a string');
    const dots = await client.send(NOTE_OPERATIONS.get, url, {}, { name: '..' }).catch((e: unknown) => e);
    expect(dots).toBeInstanceOf(ValueError);
    expect((dots as ValueError).message).toMatch(/\{name\} value "\.\."/);
    expect(notes.seen).toHaveLength(0);
  });
});
