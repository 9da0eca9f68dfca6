import {
  CLIENT_OPERATIONS,
  createTask,
  NotFoundError,
  nowIso,
  UnauthenticatedError,
  UnavailableError,
  ValidationError,
  type TaskEvent,
} from '@agent/core';
import { Metadata, Server, ServerCredentials, status, type ServerWritableStream } from '@grpc/grpc-js';
import { encodeTaskEvent } from './codec.js';
import * as pb from './gen/agent/v1/agent.js';
import { GRPCTransport } from './grpc-transport.js';

/** A hand-written AgentService, standing in for a server other than ours (no error trailers). */
async function foreignServer(
  invoke: (callback: (error: object | null, response?: pb.InvokeResponse) => void) => void,
  stream: (call: ServerWritableStream<pb.InvokeRequest, pb.TaskEvent>) => void,
  subscribe: (call: ServerWritableStream<pb.SubscribeRequest, pb.TaskEvent>) => void = (call) => call.end(),
): Promise<{ url: string; close(): void }> {
  const server = new Server();
  server.addService(pb.AgentServiceService, {
    invoke: (_call: unknown, callback: (error: object | null, response?: pb.InvokeResponse) => void) =>
      invoke(callback),
    stream,
    subscribe,
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { url: `grpc://127.0.0.1:${port}`, close: () => server.forceShutdown() };
}

const working: TaskEvent = {
  type: 'task.status',
  task_id: 't',
  state: 'working',
  final: false,
  timestamp: nowIso(),
};

describe('GRPCTransport client against other servers', () => {
  const client = new GRPCTransport({ url: 'grpc://127.0.0.1:0', timeoutMs: 5000 });
  let close = (): void => undefined;
  afterEach(() => close());
  afterAll(() => client.stop());

  async function collect(url: string): Promise<TaskEvent[]> {
    const events: TaskEvent[] = [];
    for await (const event of client.subscribe(url, createTask('x'))) events.push(event);
    return events;
  }

  it('without an agent-error-code trailer, the gRPC status picks the error class', async () => {
    let next: { code: number; details: string } = { code: status.NOT_FOUND, details: 'no such thing' };
    const server = await foreignServer(
      (callback) => callback(next),
      (call) => call.end(),
    );
    close = server.close;
    await expect(client.send(CLIENT_OPERATIONS.get_card, server.url)).rejects.toBeInstanceOf(NotFoundError);
    next = { code: status.UNAUTHENTICATED, details: '' };
    const error = client.send(CLIENT_OPERATIONS.get_card, server.url);
    await expect(error).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(error).rejects.toThrow('gRPC call failed with status UNAUTHENTICATED');
  });

  it('error data travels in the agent-error-data trailer', async () => {
    const metadata = new Metadata();
    metadata.set('agent-error-code', 'VALIDATION_FAILED');
    metadata.set(
      'agent-error-data',
      JSON.stringify({ errors: [{ pointer: '/id', message: 'is required' }] }),
    );
    const server = await foreignServer(
      (callback) => callback({ code: status.INVALID_ARGUMENT, details: 'Invalid task', metadata }),
      (call) => call.end(),
    );
    close = server.close;
    const failure = client.send(CLIENT_OPERATIONS.get_card, server.url);
    await expect(failure).rejects.toBeInstanceOf(ValidationError);
    await expect(failure).rejects.toMatchObject({
      message: 'Invalid task',
      data: { errors: [{ pointer: '/id', message: 'is required' }] },
    });
  });

  it('a stream that ends before its final status is an UnavailableError, after the events it did send', async () => {
    const server = await foreignServer(
      (callback) => callback({ code: status.UNIMPLEMENTED }),
      (call) => {
        call.write(encodeTaskEvent(working));
        call.end();
      },
    );
    close = server.close;
    const seen: TaskEvent[] = [];
    await expect(
      (async () => {
        for await (const event of client.subscribe(server.url, createTask('x'))) seen.push(event);
      })(),
    ).rejects.toBeInstanceOf(UnavailableError);
    expect(seen).toEqual([working]);
  });

  it('a subscription that ends after events but before the final status is an UnavailableError', async () => {
    const server = await foreignServer(
      (callback) => callback({ code: status.UNIMPLEMENTED }),
      (call) => call.end(),
      (call) => {
        call.write(encodeTaskEvent({ ...working, sequence: 4 }));
        call.end();
      },
    );
    close = server.close;
    const seen: TaskEvent[] = [];
    await expect(
      (async () => {
        for await (const event of client.subscribeTask(server.url, 't', { after: 3 })) seen.push(event);
      })(),
    ).rejects.toBeInstanceOf(UnavailableError);
    expect(seen).toEqual([{ ...working, sequence: 4 }]);
  });

  it('an empty subscription is complete: the caller had seen the final status already', async () => {
    const server = await foreignServer(
      (callback) => callback({ code: status.UNIMPLEMENTED }),
      (call) => call.end(),
    );
    close = server.close;
    const seen: TaskEvent[] = [];
    for await (const event of client.subscribeTask(server.url, 't', { after: 9 })) seen.push(event);
    expect(seen).toEqual([]);
  });

  it('a malformed event is a ValidationError, and an empty response is rejected', async () => {
    const server = await foreignServer(
      (callback) => callback(null, {}),
      (call) => {
        call.write({
          type: 'task.status',
          taskId: 't',
          timestamp: nowIso(),
          sequence: 0,
          event: { $case: 'llmStream', value: { delta: 'x' } },
        });
        call.end();
      },
    );
    close = server.close;
    await expect(collect(server.url)).rejects.toBeInstanceOf(ValidationError);
    await expect(client.send(CLIENT_OPERATIONS.get_card, server.url)).rejects.toBeInstanceOf(ValidationError);
  });
});
