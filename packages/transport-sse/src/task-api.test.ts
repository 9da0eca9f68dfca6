import {
  CLIENT_OPERATIONS,
  createTask,
  ERROR_CODES,
  TaskNotFoundError,
  ValidationError,
  type Task,
  type TaskEvent,
  type TaskList,
} from '@agent/core';
import { startHarness, type Harness } from './test-support/harness.js';
import { rawRequest, rpcBody, splitStream, type ParsedFrame } from './test-support/raw-http.js';

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

/** Each frame as `[id:, the sequence its event carries]`. */
function idsAndSequences(frames: ParsedFrame[]): [string | undefined, number | undefined][] {
  return frames.map((frame) => {
    const payload = JSON.parse(frame.data ?? 'null') as { result: TaskEvent };
    return [frame.id, payload.result.sequence];
  });
}

describe('the task API on the SSE JSON-RPC wire', () => {
  let h: Harness;
  /** A finished `stream 3` task: events 1–3 are artifacts, 4 the final status. */
  let done: Task;

  beforeAll(async () => {
    h = await startHarness();
    done = createTask('stream 3');
    await collect(h.client.subscribe(h.url, done));
  });
  afterAll(() => h.stop());

  function resubscribe(params: unknown, headers: Record<string, string> = {}, id: number | string = 1) {
    return rawRequest(`${h.url}/tasks/stream`, { body: rpcBody('tasks/resubscribe', params, id), headers });
  }

  describe('tasks/get and tasks/list on POST /rpc', () => {
    it('answers tasks/get with the Task, taking task_id or id and history_length', async () => {
      const res = await rawRequest(`${h.url}/rpc`, {
        body: rpcBody('tasks/get', { id: done.id, history_length: 0 }, 'g1'),
      });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({
        jsonrpc: '2.0',
        id: 'g1',
        result: { id: done.id, state: 'completed' },
      });
      expect((res.json as { result: Task }).result.messages).toEqual([]);
      // A bare id string is get_task data too.
      const task = await h.client.send<Task>(CLIENT_OPERATIONS.get_task, h.url, done.id);
      expect(task).toMatchObject({ id: done.id, state: 'completed' });
    });

    it('answers tasks/get of an unknown id with the TASK_NOT_FOUND JSON-RPC error, HTTP 200', async () => {
      const res = await rawRequest(`${h.url}/rpc`, { body: rpcBody('tasks/get', { task_id: 'ghost' }, 7) });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        jsonrpc: '2.0',
        id: 7,
        error: {
          code: ERROR_CODES.TASK_NOT_FOUND.jsonRpcCode,
          message: 'Task ghost not found',
          data: { code: 'TASK_NOT_FOUND', data: { task_id: 'ghost' } },
        },
      });
      const failure = h.client.send(CLIENT_OPERATIONS.get_task, h.url, { task_id: 'ghost' });
      await expect(failure).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(failure).rejects.toMatchObject({ data: { task_id: 'ghost' } });
    });

    it('answers tasks/list with {tasks, next_page_token}', async () => {
      const res = await rawRequest(`${h.url}/rpc`, {
        body: rpcBody('tasks/list', { state: 'completed', page_size: 1 }, 'l1'),
      });
      expect(res.status).toBe(200);
      const { result } = res.json as { result: TaskList };
      expect(result.tasks).toEqual([expect.objectContaining({ id: done.id })]);
      expect(result.next_page_token).toBe('');
    });

    it('answers a bad page_size with VALIDATION_FAILED (-32602), the field named in data.data.errors', async () => {
      const res = await rawRequest(`${h.url}/rpc`, { body: rpcBody('tasks/list', { page_size: 0 }, 3) });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({
        jsonrpc: '2.0',
        id: 3,
        error: {
          code: ERROR_CODES.VALIDATION_FAILED.jsonRpcCode,
          data: { code: 'VALIDATION_FAILED', data: { errors: [{ pointer: '/page_size' }] } },
        },
      });
      const failure = h.client.send(CLIENT_OPERATIONS.list_tasks, h.url, { page_size: 0 });
      await expect(failure).rejects.toBeInstanceOf(ValidationError);
      await expect(failure).rejects.toMatchObject({ data: { errors: [{ pointer: '/page_size' }] } });
    });

    it('answers tasks/get and tasks/list in a batch, and points tasks/resubscribe at the streaming route', async () => {
      const body = JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { task_id: done.id } },
        { jsonrpc: '2.0', id: 2, method: 'tasks/list', params: { state: 'completed' } },
        { jsonrpc: '2.0', id: 3, method: 'tasks/resubscribe', params: { task_id: done.id } },
      ]);
      const res = await rawRequest(`${h.url}/rpc`, { body });
      expect(res.json).toEqual([
        { jsonrpc: '2.0', id: 1, result: expect.objectContaining({ id: done.id }) },
        { jsonrpc: '2.0', id: 2, result: { tasks: expect.any(Array), next_page_token: '' } },
        {
          jsonrpc: '2.0',
          id: 3,
          error: {
            code: -32601,
            message: 'tasks/resubscribe is served at POST /tasks/stream',
            data: { code: 'METHOD_NOT_FOUND' },
          },
        },
      ]);
    });
  });

  describe('tasks/resubscribe on POST /tasks/stream', () => {
    it('frames every event with id: = its sequence, on tasks/stream and tasks/resubscribe alike', async () => {
      const streamed = await rawRequest(`${h.url}/tasks/stream`, {
        body: rpcBody('tasks/stream', { task: createTask('stream 2') }),
      });
      expect(idsAndSequences(splitStream(streamed.text).frames)).toEqual([
        ['1', 1],
        ['2', 2],
        ['3', 3],
      ]);
      const res = await resubscribe({ task_id: done.id, after: 2 }, {}, 'r1');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      const { frames } = splitStream(res.text);
      expect(idsAndSequences(frames)).toEqual([
        ['3', 3],
        ['4', 4],
      ]);
      expect(frames.map((frame) => frame.event)).toEqual(['task.artifact', 'task.status']);
      expect(JSON.parse(frames[1]!.data!)).toMatchObject({
        jsonrpc: '2.0',
        id: 'r1',
        result: { final: true },
      });
    });

    it('takes Last-Event-ID as after when the params name none; an after in the params wins', async () => {
      const byHeader = await resubscribe({ task_id: done.id }, { 'last-event-id': '3' });
      expect(splitStream(byHeader.text).frames.map((frame) => frame.id)).toEqual(['4']);
      const byParams = await resubscribe({ task_id: done.id, after: 1 }, { 'last-event-id': '3' });
      expect(splitStream(byParams.text).frames.map((frame) => frame.id)).toEqual(['2', '3', '4']);
    });

    it('refuses a Last-Event-ID that is no sequence like a bad after: 422 before any stream', async () => {
      const res = await resubscribe({ task_id: done.id }, { 'last-event-id': 'yesterday' });
      expect(res.status).toBe(422);
      expect(res.json).toMatchObject({
        error: { code: 'VALIDATION_FAILED', data: { errors: [{ pointer: '/after' }] } },
      });
    });

    it('answers an unknown id with a plain 404 TASK_NOT_FOUND, not a stream', async () => {
      const res = await resubscribe({ task_id: 'ghost' });
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.json).toEqual({
        error: { code: 'TASK_NOT_FOUND', message: 'Task ghost not found', data: { task_id: 'ghost' } },
      });
      await expect(collect(h.client.subscribeTask(h.url, 'ghost'))).rejects.toBeInstanceOf(TaskNotFoundError);
    });

    it('answers nothing after the last sequence with an empty event stream, which ends the iteration', async () => {
      const res = await resubscribe({ task_id: done.id, after: 4 });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(res.text).toBe('');
      expect(await collect(h.client.subscribeTask(h.url, done.id, { after: 4 }))).toEqual([]);
    });

    it('follows a running task to its final status through subscribeTask()', async () => {
      const task = createTask('sleep 60000');
      const streamed = h.client.subscribe(h.url, task)[Symbol.asyncIterator]();
      const first = await streamed.next();
      expect(first.value).toMatchObject({ type: 'task.progress', sequence: 1 });
      const followed = collect(h.client.subscribeTask(h.url, task.id, { after: 1 }));
      await h.client.send(CLIENT_OPERATIONS.cancel_task, h.url, { task_id: task.id, reason: 'seen enough' });
      const events = await followed;
      expect(events.at(-1)).toMatchObject({ type: 'task.status', state: 'canceled', final: true });
      expect(events.map((event) => event.sequence)).toEqual(events.map((_event, index) => index + 2));
      await streamed.return(undefined);
    });
  });
});
