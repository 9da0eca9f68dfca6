/**
 * gRPC unary: GRPCTransport Invoke (send_task echo) against a bare grpc-js unary echo that parses
 * and re-serializes the same Task JSON.
 */
import * as grpc from '@grpc/grpc-js';
import { CLIENT_OPERATIONS, createTask, handlerFromFunction, type Task } from '@agent/core';
import { GRPCTransport } from '@agent/transport-grpc';
import { closedLoop, compare, type Comparison } from './load.js';

const TASK = createTask('echo benchmark payload', { id: 'bench-task' });
const PATH = '/bench.Echo/Echo';
const identity = (b: Buffer) => b;

async function bareServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = new grpc.Server();
  server.addService(
    {
      Echo: {
        path: PATH,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        const task = JSON.parse(call.request.toString('utf8')) as Task;
        callback(null, Buffer.from(JSON.stringify({ ...task, state: 'completed' })));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) =>
      error ? reject(error) : resolve(p),
    ),
  );
  return {
    url: `127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => server.tryShutdown(() => resolve())),
  };
}

export async function runGrpcBench(settings: { seconds: number; concurrency: number }): Promise<Comparison> {
  const bare = await bareServer();
  const client = new grpc.Client(bare.url, grpc.credentials.createInsecure());
  const body = Buffer.from(JSON.stringify(TASK));
  const bareCall = () =>
    new Promise<number>((resolve, reject) =>
      client.makeUnaryRequest(
        PATH,
        identity,
        identity,
        body,
        (error: grpc.ServiceError | null, value?: Buffer) => {
          if (error || !value) return reject(error ?? new Error('empty reply'));
          JSON.parse(value.toString('utf8'));
          resolve(1);
        },
      ),
    );
  await closedLoop('warm-up', bareCall, { ...settings, seconds: 1 });
  const baseline = await closedLoop('bare grpc-js unary echo (JSON bytes)', bareCall, settings);
  client.close();
  await bare.stop();

  const server = new GRPCTransport({ url: 'grpc://127.0.0.1:0' });
  server.bind(handlerFromFunction(async (task) => ({ ...task, state: 'completed' })));
  await server.start();
  const caller = new GRPCTransport({ url: server.url });
  const invoke = async () => {
    await caller.send(CLIENT_OPERATIONS.send_task, server.url, TASK);
    return 1;
  };
  try {
    await closedLoop('warm-up', invoke, { ...settings, seconds: 1 });
    const subject = await closedLoop('GRPCTransport Invoke (send_task)', invoke, settings);
    return compare(baseline, subject);
  } finally {
    await caller.stop();
    await server.stop();
  }
}
