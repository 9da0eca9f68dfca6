import { APIKeyAuth, Authenticator, SecurityContext, SecurityScheme } from '@agent/auth';
import {
  CLIENT_OPERATIONS,
  createTask,
  DeadlineExceededError,
  MethodNotFoundError,
  PayloadTooLargeError,
  TaskCanceledError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnavailableError,
  UnsupportedOperationError,
  ValidationError,
  ValueError,
  type AgentCard,
  type Task,
} from '@agent/core';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { GRPCTransport } from './grpc-transport.js';
import * as pb from './gen/agent/v1/agent.js';
import { ERROR_CODE_METADATA } from './grpc-errors.js';
import { Harness, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

function rawInvoke(url: string, request: pb.InvokeRequest, metadata = new Metadata()): Promise<ServiceError> {
  const client = new pb.AgentServiceClient(url.replace(/^grpc:\/\//, ''), credentials.createInsecure());
  return new Promise((resolve, reject) => {
    client.invoke(request, metadata, (error) => {
      client.close();
      if (error) resolve(error);
      else reject(new Error('expected an error'));
    });
  });
}

describe('GRPCTransport: unary operations over a real socket', () => {
  it('binds port 0 to a real port and reports it in url and port', async () => {
    const { server } = await harness.server();
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`grpc://127.0.0.1:${server.port}`);
  });

  it('send_task runs the task and returns the finished Task', async () => {
    const { url, handler } = await harness.server();
    const result = await harness
      .client()
      .send<Task>(CLIENT_OPERATIONS.send_task, url, task('echo hello grpc'));
    expect(result.state).toBe('completed');
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'agent']);
    expect(result.artifacts[0]!.parts).toEqual([{ type: 'text', content: 'hello grpc' }]);
    expect(handler.contexts[0]!.transport).toBe('grpc');
    expect(handler.contexts[0]!.security).toBeUndefined();
    expect(handler.contexts[0]!.headers['user-agent']).toMatch(/^grpc-node-js/);
  });

  it('send_task accepts the {task} payload shape too, and a failed task is a result, not an error', async () => {
    const { url } = await harness.server();
    const result = await harness
      .client()
      .send<Task>(CLIENT_OPERATIONS.send_task, url, { task: task('fail broken') });
    expect(result.state).toBe('failed');
    expect(result.metadata.error).toEqual({ code: 'INTERNAL', message: 'broken' });
  });

  it('get_card returns the agent card', async () => {
    const card: AgentCard = {
      name: 'demo',
      description: 'd',
      url: 'grpc://x',
      version: '2',
      skills: [{ id: 's', name: 'S' }],
    };
    const { url } = await harness.server(
      {},
      (await import('./test-support/harness.js')).createDemoHandler(card),
    );
    expect(await harness.client().send(CLIENT_OPERATIONS.get_card, url)).toEqual(card);
  });

  it('cancel_task cancels an active task; the canceled Task carries the reason', async () => {
    const { url, handler } = await harness.server();
    const client = harness.client();
    const sleeping = task('sleep 60000');
    const started = handler.nextStarted();
    const pending = client.send<Task>(CLIENT_OPERATIONS.send_task, url, sleeping);
    await started;
    const canceled = await client.send<Task>(CLIENT_OPERATIONS.cancel_task, url, {
      task_id: sleeping.id,
      reason: 'user asked',
    });
    expect(canceled).toMatchObject({
      id: sleeping.id,
      state: 'canceled',
      metadata: { cancel_reason: 'user asked' },
    });
    const finished = await pending;
    expect(finished).toMatchObject({ state: 'canceled', metadata: { cancel_reason: 'user asked' } });
    await expect(
      client.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: sleeping.id }),
    ).rejects.toBeInstanceOf(TaskNotCancelableError);
  });

  it('rebuilds typed errors from the agent-error-code trailer', async () => {
    const { url } = await harness.server();
    const client = harness.client();
    const notFound = client.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: 'nope' });
    await expect(notFound).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(notFound).rejects.toMatchObject({
      code: 'TASK_NOT_FOUND',
      message: 'Task nope not found',
      data: { task_id: 'nope' },
    });
    await expect(client.send(CLIENT_OPERATIONS.send_task, url, task('throw no good'))).rejects.toMatchObject({
      name: 'ValueError',
      code: 'VALUE_ERROR',
      message: 'no good',
    });
  });

  it('maps server errors to the table gRPC status with the code in trailing metadata', async () => {
    const { url } = await harness.server();
    const error = await rawInvoke(url, { operation: { $case: 'cancelTask', value: { taskId: 'missing' } } });
    expect(error.code).toBe(status.NOT_FOUND);
    expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual(['TASK_NOT_FOUND']);
    const empty = await rawInvoke(url, {});
    expect(empty.code).toBe(status.INVALID_ARGUMENT);
    expect(empty.metadata.get(ERROR_CODE_METADATA)).toEqual(['INVALID_REQUEST']);
  });

  it('a Task that fails the schema on the server is INVALID_ARGUMENT with the failing pointers', async () => {
    const { url } = await harness.server();
    const bad = createTask('x');
    const encoded = {
      operation: {
        $case: 'sendTask' as const,
        value: {
          task: {
            id: '',
            state: pb.TaskState.TASK_STATE_SUBMITTED,
            messages: [],
            artifacts: [],
            createdAt: bad.created_at,
          },
        },
      },
    };
    const error = await rawInvoke(url, encoded);
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.metadata.get(ERROR_CODE_METADATA)).toEqual(['VALIDATION_FAILED']);
    expect(JSON.parse(String(error.metadata.get('agent-error-data')[0]))).toMatchObject({
      errors: [expect.objectContaining({ pointer: '/id' })],
    });
  });

  it('validates a Task on the client before sending it', async () => {
    const { url, handler } = await harness.server();
    await expect(harness.client().send(CLIENT_OPERATIONS.send_task, url, { id: 1 })).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect(handler.contexts).toHaveLength(0);
  });

  it('refuses streaming and unknown operations on send()', async () => {
    const client = harness.client();
    await expect(
      client.send(CLIENT_OPERATIONS.stream_task, 'grpc://127.0.0.1:1', task('x')),
    ).rejects.toBeInstanceOf(UnsupportedOperationError);
    await expect(
      client.send({ name: 'list', method: 'GET', path: '/x' }, 'grpc://127.0.0.1:1'),
    ).rejects.toBeInstanceOf(MethodNotFoundError);
    await expect(client.send(CLIENT_OPERATIONS.get_card, 'http://127.0.0.1:1')).rejects.toBeInstanceOf(
      ValueError,
    );
  });

  it('applies timeoutMs as the call deadline: DEADLINE_EXCEEDED, and the task runs on', async () => {
    const { url, handler } = await harness.server();
    const client = harness.client({ timeoutMs: 200 });
    const started = handler.nextStarted();
    await expect(client.send(CLIENT_OPERATIONS.send_task, url, task('sleep 60000'))).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    const taskId = await started;
    const ctx = handler.contexts[0]!;
    // The RPC ended, the task did not: it is the server's, and its signal stays quiet.
    expect(ctx.signal.aborted).toBe(false);
    // The deadline ended the RPC, not the task: it is still active and cancelable.
    expect(handler.activeTaskIds).toContain(taskId);
    await client.send(CLIENT_OPERATIONS.cancel_task, url, { task_id: taskId }, undefined, {
      timeoutMs: 5000,
    });
  });

  it('an aborted signal cancels the call with the signal reason', async () => {
    const { url, handler } = await harness.server();
    const controller = new AbortController();
    const started = handler.nextStarted();
    const pending = harness
      .client()
      .send(CLIENT_OPERATIONS.send_task, url, task('sleep 60000'), undefined, { signal: controller.signal });
    await started;
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(TaskCanceledError);
  });

  it('a server that is not there is UNAVAILABLE', async () => {
    const { server, url } = await harness.server();
    await server.stop();
    await expect(
      harness.client({ timeoutMs: 5000 }).send(CLIENT_OPERATIONS.get_card, url),
    ).rejects.toBeInstanceOf(UnavailableError);
  });

  it('messages over maxBodyBytes are RESOURCE_EXHAUSTED → PayloadTooLargeError', async () => {
    const { url } = await harness.server({ maxBodyBytes: 64 * 1024 });
    const big = task(`echo ${'x'.repeat(100 * 1024)}`);
    await expect(harness.client().send(CLIENT_OPERATIONS.send_task, url, big)).rejects.toBeInstanceOf(
      PayloadTooLargeError,
    );
  });

  it('onTaskReceived serves a plain function', async () => {
    const server = new GRPCTransport({ url: 'grpc://127.0.0.1:0' });
    server.onTaskReceived(async (input) => ({ ...input, state: 'completed' }));
    await server.start();
    try {
      const result = await harness.client().send<Task>(CLIENT_OPERATIONS.send_task, server.url, task('x'));
      expect(result.state).toBe('completed');
    } finally {
      await server.stop();
    }
  });
});

describe('GRPCTransport: lifecycle and configuration', () => {
  it('start() without a handler is a ValueError; bad URLs and options are rejected at construction', async () => {
    await expect(new GRPCTransport({ url: 'grpc://127.0.0.1:0' }).start()).rejects.toBeInstanceOf(ValueError);
    expect(() => new GRPCTransport({ url: 'http://127.0.0.1:1' })).toThrow(ValueError);
    expect(() => new GRPCTransport({ url: 'not a url' })).toThrow(ValueError);
    expect(() => new GRPCTransport({ url: 'grpc://127.0.0.1:1', credentials: 'k' })).toThrow(ValueError);
    expect(() => new GRPCTransport({ url: 'grpc://127.0.0.1:1', timeoutMs: -1 })).toThrow(ValueError);
    expect(() => new GRPCTransport({ url: 'grpc://127.0.0.1:1', maxMessageBytes: 1 } as never)).toThrow(
      /does not accept the option "maxMessageBytes"/,
    );
  });

  it('a port already in use is an UnavailableError from start()', async () => {
    const { server } = await harness.server();
    const second = new GRPCTransport({ url: `grpc://127.0.0.1:${server.port}` });
    second.bind((await import('./test-support/harness.js')).createDemoHandler());
    await expect(second.start()).rejects.toBeInstanceOf(UnavailableError);
    await second.stop();
  });

  it('stop() is idempotent and the transport can start again', async () => {
    const { server } = await harness.server();
    await Promise.all([server.stop(), server.stop()]);
    await server.stop();
    await server.start();
    expect(await harness.client().send(CLIENT_OPERATIONS.get_card, server.url)).toMatchObject({
      name: 'demo',
    });
  });

  it('a client used again after stop() reconnects, and the next stop() releases it', async () => {
    const { url } = await harness.server();
    const client = new GRPCTransport({ url });
    await client.send(CLIENT_OPERATIONS.get_card, url);
    await client.stop();
    await expect(client.send(CLIENT_OPERATIONS.get_card, url)).resolves.toMatchObject({ name: 'demo' });
    await client.stop();
  });

  it('validateUrl() is true for local grpc URLs only', () => {
    expect(new GRPCTransport({ url: 'grpc://127.0.0.1:50051' }).validateUrl()).toBe(true);
    expect(new GRPCTransport({ url: 'grpcs://localhost:443' }).validateUrl()).toBe(true);
    expect(new GRPCTransport({ url: 'grpc://example.com:50051' }).validateUrl()).toBe(false);
  });

  it('describe() nests a describable authenticator with the credentials, and refuses one that is not', () => {
    const apiKey = new APIKeyAuth({ validKeys: { k: [] } });
    const described = new GRPCTransport({
      url: 'grpcs://127.0.0.1:1',
      authenticator: apiKey,
      credentials: 'k',
      tls: { ca: 'PEM' },
    }).describe();
    expect(described.$component.options).toEqual({
      url: 'grpcs://127.0.0.1:1',
      timeoutMs: 30000,
      maxBodyBytes: 4 * 1024 * 1024,
      validateSchema: false,
      tls: { ca: 'PEM' },
      credentials: 'k',
      authenticator: apiKey.describe(),
    });
    class OpaqueAuth extends Authenticator {
      get securityScheme(): SecurityScheme {
        return new SecurityScheme({ authType: 'apiKey' });
      }
      async authenticate(token: string): Promise<SecurityContext> {
        return new SecurityContext({ principalId: 'p', token });
      }
      async refreshToken(context: SecurityContext): Promise<SecurityContext> {
        return context;
      }
    }
    const opaque = new GRPCTransport({
      url: 'grpc://127.0.0.1:1',
      authenticator: new OpaqueAuth(),
      credentials: 'k',
    });
    expect(() => opaque.describe()).toThrow(UnsupportedOperationError);
  });

  it('describe() is a recipe of the client side that rebuilds an equivalent transport', async () => {
    const { url } = await harness.server();
    const client = new GRPCTransport({ url, timeoutMs: 1234, maxBodyBytes: 1024 * 1024 });
    const descriptor = client.describe();
    expect(descriptor).toEqual({
      $component: {
        module: '@agent/transport-grpc',
        exportName: 'GRPCTransport',
        options: { url, timeoutMs: 1234, maxBodyBytes: 1024 * 1024, validateSchema: false },
      },
    });
    const clone = structuredClone(descriptor);
    const rebuilt = new GRPCTransport(clone.$component.options as { url: string });
    try {
      expect(await rebuilt.send(CLIENT_OPERATIONS.get_card, url)).toMatchObject({ name: 'demo' });
    } finally {
      await rebuilt.stop();
    }
  });
});
