/** The task API on the HTTP wire: `GET /tasks`, `GET /tasks/{id}`, `GET /tasks/{id}/events`. */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIKeyAuth } from '@agent/auth';
import {
  CLIENT_OPERATIONS,
  UnavailableError,
  ValidationError,
  ValueError,
  createTask,
  type Task,
  type TaskEvent,
  type TaskList,
} from '@agent/core';
import { createTestAgent, rawRequest, type RawResponse, type TestAgent } from '@agent/test-support';
import { EventStreamParser, type SseFrame } from '@agent/server/node';
import { HTTPTransport } from './http-transport.js';
import type { HTTPTransportOptions } from './options.js';

const KEY = 'sk-task-api-0123456789';

function errorOf(response: RawResponse): { code: string; message: string; data?: unknown } {
  return (response.json as { error: { code: string; message: string; data?: unknown } }).error;
}

/** The frames of a whole `text/event-stream` body. */
function framesOf(response: RawResponse): SseFrame[] {
  return new EventStreamParser(1 << 20, 'test').push(Buffer.from(response.text));
}

/** Each frame's `id:` next to the `sequence` its TaskEvent carries. */
function idsAndSequences(response: RawResponse): [string, number | undefined][] {
  return framesOf(response).map((frame) => [frame.id, (JSON.parse(frame.data) as TaskEvent).sequence]);
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

describe.each(['node', 'express'] as const)('the task API on the %s backend', (backend) => {
  let server: HTTPTransport;
  let client: HTTPTransport;
  let handler: TestAgent;
  let base: string;

  async function serve(options: Partial<HTTPTransportOptions> = {}): Promise<void> {
    handler = createTestAgent({ announceWorking: false });
    server = new HTTPTransport({ url: 'http://127.0.0.1:0', backend, ...options });
    server.bind(handler);
    await server.start();
    base = server.url;
    client = new HTTPTransport({ url: base });
  }

  /** Runs `stream 2` to its end: two artifacts and the final status, sequences 1 to 3. */
  async function finishedTask(id?: string): Promise<Task> {
    const task = { ...createTask('stream 2'), ...(id === undefined ? {} : { id }) };
    const events = await collect(client.subscribe(base, task));
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    return task;
  }

  afterEach(async () => {
    await client?.stop();
    await server?.stop();
  });

  describe('without an authenticator', () => {
    beforeEach(() => serve());

    it('numbers the frames of POST /tasks/stream by sequence, also when it replays a finished task', async () => {
      const task = createTask('stream 2');
      const first = await rawRequest(`${base}/tasks/stream`, { body: task });
      const expected = [
        ['1', 1],
        ['2', 2],
        ['3', 3],
      ];
      expect(idsAndSequences(first)).toEqual(expected);
      const replay = await rawRequest(`${base}/tasks/stream`, { body: task });
      expect(idsAndSequences(replay)).toEqual(expected);
    });

    it('serves GET /tasks/{id}/events as text/event-stream, frame ids the sequences', async () => {
      const task = await finishedTask();
      const response = await rawRequest(`${base}/tasks/${task.id}/events`);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(idsAndSequences(response)).toEqual([
        ['1', 1],
        ['2', 2],
        ['3', 3],
      ]);
      expect(framesOf(response).map((f) => f.event)).toEqual([
        'task.artifact',
        'task.artifact',
        'task.status',
      ]);
    });

    it('resumes after Last-Event-ID, after ?after, and after the header when both are sent', async () => {
      const task = await finishedTask();
      const url = `${base}/tasks/${task.id}/events`;
      const byHeader = await rawRequest(url, { headers: { 'last-event-id': '1' } });
      expect(idsAndSequences(byHeader).map(([id]) => id)).toEqual(['2', '3']);
      const byQuery = await rawRequest(`${url}?after=2`);
      expect(idsAndSequences(byQuery).map(([id]) => id)).toEqual(['3']);
      const both = await rawRequest(`${url}?after=0`, { headers: { 'last-event-id': '2' } });
      expect(idsAndSequences(both).map(([id]) => id)).toEqual(['3']);
      // An empty header names no position (EventSource sends none before its first id).
      const empty = await rawRequest(`${url}?after=2`, { headers: { 'last-event-id': '' } });
      expect(idsAndSequences(empty).map(([id]) => id)).toEqual(['3']);
      const none = await rawRequest(url, { headers: { 'last-event-id': '3' } });
      expect([none.status, none.text]).toEqual([200, '']);
    });

    it('refuses a Last-Event-ID that is no sequence with 422, as a plain JSON error', async () => {
      const task = await finishedTask();
      const response = await rawRequest(`${base}/tasks/${task.id}/events`, {
        headers: { 'last-event-id': 'abc' },
      });
      expect(response.status).toBe(422);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(errorOf(response).code).toBe('VALIDATION_FAILED');
      expect(JSON.stringify(errorOf(response).data)).toContain('/after');
    });

    it('answers an unknown id with a 404 JSON error on GET /tasks/{id} and on its events', async () => {
      for (const path of ['/tasks/no-such-task', '/tasks/no-such-task/events']) {
        const response = await rawRequest(`${base}${path}`);
        expect([path, response.status]).toEqual([path, 404]);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(errorOf(response)).toMatchObject({
          code: 'TASK_NOT_FOUND',
          data: { task_id: 'no-such-task' },
        });
      }
    });

    it('decodes the query: history_length, and list filters and page size as decimal strings', async () => {
      const task = await finishedTask();
      const read = await rawRequest(`${base}/tasks/${task.id}?history_length=1`);
      expect(read.status).toBe(200);
      expect((read.json as Task).messages).toHaveLength(1);
      const other = await finishedTask();
      const page = await rawRequest(`${base}/tasks?state=completed&page_size=1`);
      expect(page.status).toBe(200);
      const first = page.json as TaskList;
      expect(first.tasks).toHaveLength(1);
      expect(first.next_page_token).not.toBe('');
      const token = encodeURIComponent(first.next_page_token);
      const next = await rawRequest(`${base}/tasks/?state=completed&page_size=1&page_token=${token}`);
      const second = next.json as TaskList;
      expect(second.next_page_token).toBe('');
      expect([...first.tasks, ...second.tasks].map((t) => t.id).sort()).toEqual([task.id, other.id].sort());
    });

    it('refuses a bad page_size, and a repeated parameter, with 422 naming the field', async () => {
      for (const query of ['page_size=0', 'page_size=abc', 'page_size=1&page_size=2', 'state=sleeping']) {
        const response = await rawRequest(`${base}/tasks?${query}`);
        expect([query, response.status]).toEqual([query, 422]);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(errorOf(response).code).toBe('VALIDATION_FAILED');
        const pointer = `/${query.slice(0, query.indexOf('='))}`;
        expect(errorOf(response).data).toEqual({ errors: [expect.objectContaining({ pointer })] });
      }
    });

    it('ignores query parameters the operation does not know', async () => {
      const task = await finishedTask();
      expect((await rawRequest(`${base}/tasks/${task.id}?expand=all`)).status).toBe(200);
      expect((await rawRequest(`${base}/tasks?pagesize=1`)).status).toBe(200);
    });

    it('takes the task id from the path, whatever the query says', async () => {
      const task = await finishedTask();
      const read = await rawRequest(`${base}/tasks/${task.id}?task_id=other&id=other`);
      expect((read.json as Task).id).toBe(task.id);
    });

    it('round-trips an id with a slash and spaces, on the wire and through the client', async () => {
      const id = 'team a/run 1';
      await finishedTask(id);
      const raw = await rawRequest(`${base}/tasks/${encodeURIComponent(id)}`);
      expect([raw.status, (raw.json as Task).id]).toEqual([200, id]);
      expect((await client.send<Task>(CLIENT_OPERATIONS.get_task, base, { task_id: id })).id).toBe(id);
      const events = await collect(client.subscribeTask(base, id, { after: 2 }));
      expect(events.map((e) => [e.task_id, e.sequence])).toEqual([[id, 3]]);
      // A raw slash is a path separator: that is no task route.
      expect((await rawRequest(`${base}/tasks/team a/run 1`.replace(/ /g, '%20'))).status).toBe(404);
    });

    it('reads GET /tasks/cancel and /tasks/stream as task ids, and keeps their POST routes', async () => {
      for (const id of ['cancel', 'stream']) {
        const response = await rawRequest(`${base}/tasks/${id}`);
        expect(errorOf(response)).toMatchObject({ code: 'TASK_NOT_FOUND', data: { task_id: id } });
        expect(errorOf(await rawRequest(`${base}/tasks/${id}/events`))).toMatchObject({
          data: { task_id: id },
        });
      }
      const cancel = await rawRequest(`${base}/tasks/cancel`, { body: { task_id: 'no-such-task' } });
      expect([cancel.status, errorOf(cancel).code]).toEqual([404, 'TASK_NOT_FOUND']);
      const stream = await rawRequest(`${base}/tasks/stream`, { body: createTask('stream 1') });
      expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    });

    it('refuses a malformed percent-escape in the id with 400 INVALID_REQUEST', async () => {
      for (const path of ['/tasks/%E0%A4%A', '/tasks/%zz/events']) {
        const response = await rawRequest(`${base}${path}`);
        expect([path, response.status, errorOf(response).code]).toEqual([path, 400, 'INVALID_REQUEST']);
      }
    });

    it('answers an empty id segment as no route', async () => {
      expect((await rawRequest(`${base}/tasks//events`)).status).toBe(404);
    });
  });

  describe('with validateSchema and an authenticator', () => {
    beforeEach(() =>
      serve({ validateSchema: true, authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] } }) }),
    );

    it('refuses unknown query parameters with 422, but not the query credentials', async () => {
      const known = await rawRequest(`${base}/tasks?page_size=5&api_key=${KEY}`);
      expect([known.status, known.json]).toEqual([200, { tasks: [], next_page_token: '' }]);
      const unknown = await rawRequest(`${base}/tasks?pagesize=5`, { headers: { 'x-api-key': KEY } });
      expect(unknown.status).toBe(422);
      expect(errorOf(unknown).data).toEqual({
        errors: [{ pointer: '/pagesize', message: 'is not allowed' }],
      });
    });

    it('authenticates before it decodes the path or the query', async () => {
      for (const path of ['/tasks?page_size=0', '/tasks/%zz', '/tasks/x/events?after=-1']) {
        const response = await rawRequest(`${base}${path}`);
        expect([path, response.status, errorOf(response).code]).toEqual([path, 401, 'UNAUTHENTICATED']);
      }
    });
  });

  describe('under a base path', () => {
    beforeEach(async () => {
      handler = createTestAgent({ announceWorking: false });
      server = new HTTPTransport({ url: 'http://127.0.0.1:0/agents/echo', backend });
      server.bind(handler);
      await server.start();
      base = server.url;
      client = new HTTPTransport({ url: base });
    });

    it('serves the task routes below the path of the URL', async () => {
      const task = await finishedTask();
      expect((await client.send<Task>(CLIENT_OPERATIONS.get_task, base, { task_id: task.id })).id).toBe(
        task.id,
      );
      expect((await client.send<TaskList>(CLIENT_OPERATIONS.list_tasks, base, {})).tasks).toHaveLength(1);
      const root = `http://127.0.0.1:${server.port}`;
      expect((await rawRequest(`${root}/tasks/${task.id}`)).status).toBe(404);
      expect(errorOf(await rawRequest(`${root}/tasks/${task.id}`)).code).toBe('NOT_FOUND');
    });
  });
});

/** The client's requests, against a plain node server that records them. */
describe('the task API client', () => {
  let server: Server;
  let url: string;
  const seen: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
  let answer: (res: ServerResponse) => void;
  const clients: HTTPTransport[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      answer(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  beforeEach(() => {
    seen.length = 0;
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    };
  });

  afterEach(() => Promise.all(clients.splice(0).map((c) => c.stop())));

  function client(): HTTPTransport {
    const transport = new HTTPTransport({ url });
    clients.push(transport);
    return transport;
  }

  it('builds GET /tasks/{id} and GET /tasks from the request fields', async () => {
    await client().send(CLIENT_OPERATIONS.get_task, url, { task_id: 'a/b c', history_length: 2 });
    await client().send(CLIENT_OPERATIONS.list_tasks, url, {
      session_id: 's 1',
      state: 'completed',
      page_size: 10,
      page_token: undefined,
    });
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /tasks/a%2Fb%20c?history_length=2',
      'GET /tasks?session_id=s+1&state=completed&page_size=10',
    ]);
    expect(seen.every((r) => r.headers['content-length'] === undefined)).toBe(true);
  });

  it('subscribes with GET /tasks/{id}/events, sending Last-Event-ID only past 0', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end();
    };
    // A subscription that is told nothing after its position has ended: no events, no error.
    expect(await collect(client().subscribeTask(url, 't/1', { after: 4 }))).toEqual([]);
    await expect(collect(client().subscribeTask(url, 't/1'))).resolves.toEqual([]);
    expect(seen.map((r) => [r.method, r.url, r.headers['last-event-id'], r.headers.accept])).toEqual([
      ['GET', '/tasks/t%2F1/events', '4', 'text/event-stream'],
      ['GET', '/tasks/t%2F1/events', undefined, 'text/event-stream'],
    ]);
  });

  it('still requires the final status of a subscription that received events', async () => {
    const working: TaskEvent = {
      type: 'task.status',
      task_id: 't1',
      state: 'working',
      final: false,
      sequence: 5,
      timestamp: '2026-01-01T00:00:00Z',
    };
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`id: 5\nevent: task.status\ndata: ${JSON.stringify(working)}\n\n`);
    };
    await expect(collect(client().subscribeTask(url, 't1', { after: 4 }))).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });

  it('refuses an id the path cannot carry before sending anything', async () => {
    const missing = client().send(CLIENT_OPERATIONS.get_task, url, { history_length: 1 });
    await expect(missing).rejects.toBeInstanceOf(ValidationError);
    await expect(missing).rejects.toMatchObject({ data: { errors: [{ pointer: '/task_id' }] } });
    await expect(client().send(CLIENT_OPERATIONS.get_task, url, { task_id: '..' })).rejects.toBeInstanceOf(
      ValueError,
    );
    await expect(collect(client().subscribeTask(url, '.'))).rejects.toBeInstanceOf(ValueError);
    expect(seen).toEqual([]);
  });
});
