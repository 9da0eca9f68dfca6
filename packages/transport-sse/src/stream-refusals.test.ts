/**
 * `POST /tasks/stream` refused before its first event: a plain HTTP error (the table's status and
 * the JSON error body), never a 200 with an error frame, as the HTTP transport's stream route does.
 */
import { APIKeyAuth } from '@agent/auth';
import { createTask, TaskAlreadyRunningError, type TaskEvent, type TaskHandler } from '@agent/core';
import { createSseTestAgent, startHarness, type Harness } from './test-support/harness.js';
import { rawRequest, rpcBody, splitStream, type RawResponse } from './test-support/raw-http.js';

function expectPlainError(res: RawResponse, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.text).not.toContain('event:');
  expect(res.json).toMatchObject({ error: { code } });
}

describe('a stream refused before its first event', () => {
  let h: Harness;
  const busy = createTask('hold');
  beforeAll(async () => {
    const agent = createSseTestAgent();
    // A handler that finds a conflict before it has anything to say, as a continuation of a task
    // that is still running does.
    const handler: TaskHandler = {
      ...agent,
      async *handleTaskStreaming(task, ctx): AsyncGenerator<TaskEvent> {
        if (task.id === busy.id) throw new TaskAlreadyRunningError(`Task ${task.id} is still running`);
        yield* agent.handleTaskStreaming(task, ctx);
      },
    };
    h = await startHarness({ handler });
  });
  afterAll(() => h.stop());

  const stream = (params: unknown, headers?: Record<string, string>): Promise<RawResponse> =>
    rawRequest(`${h.url}/tasks/stream`, { body: rpcBody('tasks/stream', params), headers });

  it('answers a task that is already running with 409 TASK_ALREADY_RUNNING', async () => {
    const res = await stream({ task: busy });
    expectPlainError(res, 409, 'TASK_ALREADY_RUNNING');
    expect(res.json).toEqual({
      error: { code: 'TASK_ALREADY_RUNNING', message: `Task ${busy.id} is still running` },
    });
  });

  it('answers an invalid task with 422 VALIDATION_FAILED', async () => {
    expectPlainError(await stream({ task: { id: 7 } }), 422, 'VALIDATION_FAILED');
  });

  it('answers a malformed tenant with 400 INVALID_REQUEST', async () => {
    expectPlainError(
      await stream({ task: createTask('x') }, { 'x-tenant': 'no spaces allowed' }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('answers a resubscription to an unknown task with 404 TASK_NOT_FOUND', async () => {
    const res = await rawRequest(`${h.url}/tasks/stream`, {
      body: rpcBody('tasks/resubscribe', { task_id: 'never-ran' }),
    });
    expectPlainError(res, 404, 'TASK_NOT_FOUND');
  });

  it('streams a resubmitted running id: the caller attaches to the run (the pipeline rule)', async () => {
    const task = createTask('stream 3');
    const [first, second] = await Promise.all([stream({ task }), stream({ task })]);
    for (const res of [first, second]) {
      expect(res.status).toBe(200);
      const { frames } = splitStream(res.text);
      expect(frames.at(-1)).toMatchObject({ event: 'task.status' });
    }
  });
});

describe('a stream refused by authentication', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ authenticator: new APIKeyAuth({ validKeys: { 'sk-stream-key-0001': [] } }) });
  });
  afterAll(() => h.stop());

  it('answers a missing or unknown key with 401 UNAUTHENTICATED before the stream', async () => {
    const body = rpcBody('tasks/stream', { task: createTask('x') });
    expectPlainError(await rawRequest(`${h.url}/tasks/stream`, { body }), 401, 'UNAUTHENTICATED');
    const wrong = await rawRequest(`${h.url}/tasks/stream`, {
      body,
      headers: { 'x-api-key': 'sk-nope-nope-0002' },
    });
    expectPlainError(wrong, 401, 'UNAUTHENTICATED');
  });
});
