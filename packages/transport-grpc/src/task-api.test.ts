import { CLIENT_OPERATIONS, type Task, type TaskEvent } from '@agent/core';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import * as pb from './gen/agent/v1/agent.js';
import { ERROR_CODE_METADATA, ERROR_DATA_METADATA } from './grpc-errors.js';
import { Harness, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

/** A generated grpc-js client, so the request is the proto message a caller in any language sends. */
function rawClient(url: string): pb.AgentServiceClient {
  return new pb.AgentServiceClient(url.replace('grpc://', ''), credentials.createInsecure());
}

/** Every message of a Subscribe call and how it ended: `null` for OK, else the status error. */
function rawSubscribe(
  client: pb.AgentServiceClient,
  request: pb.SubscribeRequest,
): Promise<{ events: pb.TaskEvent[]; error: ServiceError | null }> {
  return new Promise((resolve) => {
    const events: pb.TaskEvent[] = [];
    const call = client.subscribe(request, new Metadata());
    call.on('data', (event: pb.TaskEvent) => events.push(event));
    call.on('error', (error: ServiceError) => resolve({ events, error }));
    call.on('end', () => resolve({ events, error: null }));
  });
}

function rawInvoke(client: pb.AgentServiceClient, request: pb.InvokeRequest): Promise<ServiceError> {
  return new Promise((resolve, reject) => {
    client.invoke(request, new Metadata(), (error) =>
      error ? resolve(error) : reject(new Error('expected the call to fail')),
    );
  });
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

describe('GRPCTransport: the task API on the wire', () => {
  it('Subscribe of an unknown id ends with NOT_FOUND and the error trailers, before any event', async () => {
    const { url } = await harness.server();
    const client = rawClient(url);
    try {
      const { events, error } = await rawSubscribe(client, { taskId: 'no-such-task', after: 0 });
      expect(events).toEqual([]);
      expect(error?.code).toBe(status.NOT_FOUND);
      expect(error?.details).toBe('Task no-such-task not found');
      expect(error?.metadata.get(ERROR_CODE_METADATA)).toEqual(['TASK_NOT_FOUND']);
      expect(error?.metadata.get(ERROR_DATA_METADATA)).toEqual([JSON.stringify({ task_id: 'no-such-task' })]);
    } finally {
      client.close();
    }
  });

  it('Subscribe of a finished task replays its events after `after`, sequence in the proto field', async () => {
    const { url } = await harness.server();
    const sent = task('stream 2');
    const streamed = await collect(harness.client().subscribe(url, sent));
    const client = rawClient(url);
    try {
      const { events, error } = await rawSubscribe(client, { taskId: sent.id, after: 1 });
      expect(error).toBeNull();
      expect(events.map((event) => event.sequence)).toEqual(streamed.slice(1).map((event) => event.sequence));
      expect(events.map((event) => event.sequence)).toEqual(
        Array.from({ length: streamed.length - 1 }, (_, index) => index + 2),
      );
      // The sequence is a typed field, not one of the extra JSON fields.
      for (const event of events) {
        expect(event.extra?.sequence).toBeUndefined();
        if (event.event?.$case === 'runtime') expect(event.event.value?.sequence).toBeUndefined();
      }
      expect(events.at(-1)?.event).toMatchObject({ $case: 'status', value: { final: true } });
    } finally {
      client.close();
    }
  });

  it('Invoke GetTask and ListTasks answer a Task and a TaskList', async () => {
    const { url } = await harness.server();
    const done = await harness.client().send<Task>(CLIENT_OPERATIONS.send_task, url, task('echo hi'));
    const client = rawClient(url);
    try {
      const invoke = (request: pb.InvokeRequest): Promise<pb.InvokeResponse> =>
        new Promise((resolve, reject) =>
          client.invoke(request, new Metadata(), (error, response) =>
            error ? reject(error) : resolve(response),
          ),
        );
      const got = await invoke({
        operation: { $case: 'getTask', value: { taskId: done.id, historyLength: 1 } },
      });
      expect(got.result).toMatchObject({ $case: 'task', value: { id: done.id } });
      expect(got.result?.$case === 'task' && got.result.value.messages).toHaveLength(1);
      const listed = await invoke({
        operation: { $case: 'listTasks', value: { state: pb.TaskState.TASK_STATE_COMPLETED, pageSize: 10 } },
      });
      expect(listed.result).toMatchObject({
        $case: 'taskList',
        value: { tasks: [expect.objectContaining({ id: done.id })], nextPageToken: '' },
      });
    } finally {
      client.close();
    }
  });

  it('ListTasks with TASK_STATE_UNSPECIFIED set is INVALID_ARGUMENT pointing at the field', async () => {
    const { url } = await harness.server();
    const client = rawClient(url);
    try {
      const error = await rawInvoke(client, {
        operation: { $case: 'listTasks', value: { state: pb.TaskState.TASK_STATE_UNSPECIFIED } },
      });
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual(['VALIDATION_FAILED']);
      expect(JSON.parse(String(error.metadata.get(ERROR_DATA_METADATA)[0]))).toEqual({
        errors: [{ pointer: '/list_tasks/state', message: 'has unknown enum value 0' }],
      });
    } finally {
      client.close();
    }
  });

  it('refuses values the proto cannot carry before calling: VALIDATION_FAILED, even with no server', async () => {
    // Nothing listens on port 1: an attempted call would fail UNAVAILABLE instead.
    const url = 'grpc://127.0.0.1:1';
    const client = harness.client();
    const refusals: [() => Promise<unknown>, string][] = [
      [
        () => client.send(CLIENT_OPERATIONS.get_task, url, { task_id: 't', history_length: -1 }),
        '/history_length',
      ],
      [() => client.send(CLIENT_OPERATIONS.list_tasks, url, { state: 'sleeping' }), '/state'],
      [() => client.send(CLIENT_OPERATIONS.list_tasks, url, { page_size: 2.5 }), '/page_size'],
      [() => collect(client.subscribeTask(url, 't', { after: -1 })), '/after'],
    ];
    for (const [work, pointer] of refusals) {
      await expect(work()).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        data: { errors: [{ pointer, message: expect.any(String) }] },
      });
    }
  });

  it('send() of subscribe_task names subscribeTask()', async () => {
    await expect(
      harness.client().send(CLIENT_OPERATIONS.subscribe_task, 'grpc://127.0.0.1:1', { task_id: 't' }),
    ).rejects.toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
      message: expect.stringContaining('subscribeTask()'),
    });
  });
});
