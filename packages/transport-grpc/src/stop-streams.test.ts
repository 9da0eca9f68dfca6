import { AgentError, createTask, UnavailableError, type TaskEvent } from '@agent/core';
import { parseTransportUrl } from '@agent/core/internal';
import type { EventFeed, RequestInfo, ServerPipeline } from '@agent/server';
import { Client, credentials, Metadata, status, type StatusObject } from '@grpc/grpc-js';
import { encodeInvokeRequest } from './codec.js';
import * as pb from './gen/agent/v1/agent.js';
import { GrpcServerAdapter } from './server-adapter.js';
import { Harness, task } from './test-support/harness.js';

const harness = new Harness();
afterEach(() => harness.closeAll());

interface Outcome {
  events: pb.TaskEvent[];
  status: StatusObject;
  /** The call's status arrived after its last event. */
  statusLast: boolean;
}

/** A raw `Stream` call: every event and the call's own status, as a gRPC client sees them. */
function openStream(
  client: Client,
  body: pb.InvokeRequest,
  onEvent: () => void = () => undefined,
): Promise<Outcome> {
  const call = client.makeServerStreamRequest(
    '/agent.v1.AgentService/Stream',
    (value: Buffer) => value,
    (bytes: Buffer) => pb.TaskEvent.decode(bytes),
    Buffer.from(pb.InvokeRequest.encode(body).finish()),
    new Metadata(),
  );
  const events: pb.TaskEvent[] = [];
  let statusLast = true;
  call.on('data', (event: pb.TaskEvent) => {
    events.push(event);
    onEvent();
  });
  call.on('error', () => undefined);
  return new Promise((resolve) =>
    call.on('status', (status: StatusObject) => {
      call.on('data', () => (statusLast = false));
      setImmediate(() => resolve({ events, status, statusLast }));
    }),
  );
}

function finalState(outcome: Outcome): number | undefined {
  const last = outcome.events.at(-1)?.event;
  return last?.$case === 'status' && last.value.final ? last.value.state : undefined;
}

describe('GRPCTransport stop(): streams that got their final status end OK', () => {
  it('50 open streams each get one final canceled status, then status OK', async () => {
    const { server, url, handler } = await harness.server({ stopGraceMs: 50 });
    const client = new Client(url.replace('grpc://', ''), credentials.createInsecure());
    try {
      const streams: Array<Promise<Outcome>> = [];
      for (let index = 0; index < 50; index += 1) {
        const started = handler.nextStarted();
        streams.push(openStream(client, encodeInvokeRequest('send_task', task('sleep 60000'))));
        await started;
      }
      await server.stop();
      for (const outcome of await Promise.all(streams)) {
        expect(
          outcome.events.filter((event) => event.event?.$case === 'status' && event.event.value.final),
        ).toHaveLength(1);
        expect(finalState(outcome)).toBe(pb.TaskState.TASK_STATE_CANCELED);
        expect({ code: outcome.status.code, details: outcome.status.details }).toEqual({
          code: status.OK,
          details: 'OK',
        });
        expect(outcome.statusLast).toBe(true);
      }
    } finally {
      client.close();
    }
  });
});

/**
 * The adapter over a pipeline double whose feed gives one final status and then does not end: the
 * orderings a real stop can produce when the run behind a feed lingers after its final status.
 */
describe('GrpcServerAdapter: a stream whose final status was written', () => {
  const finalEvent = (): TaskEvent => {
    const canceled = { ...createTask('x'), state: 'canceled' as const };
    return {
      type: 'task.status',
      task_id: canceled.id,
      state: 'canceled',
      final: true,
      timestamp: new Date().toISOString(),
      task: canceled,
      sequence: 1,
    };
  };

  async function serve(
    afterFinal: (request: RequestInfo) => void,
  ): Promise<{ adapter: GrpcServerAdapter; url: string }> {
    let request: RequestInfo | undefined;
    const pipeline = {
      open: (info: RequestInfo) => {
        request = info;
        return Promise.resolve({});
      },
      stream: (): EventFeed => {
        let given = false;
        const feed = {
          next: (): Promise<IteratorResult<TaskEvent>> => {
            if (!given) {
              given = true;
              return Promise.resolve({ done: false, value: finalEvent() });
            }
            afterFinal(request!);
            return new Promise<never>(() => undefined);
          },
          return: () => Promise.resolve({ done: true as const, value: undefined }),
        };
        return feed as unknown as EventFeed;
      },
      wireError: (error: unknown) => AgentError.from(error),
    } as unknown as ServerPipeline;
    const adapter = new GrpcServerAdapter({
      pipeline,
      address: parseTransportUrl('grpc://127.0.0.1:0'),
      tls: undefined,
      health: false,
      reflection: false,
      maxMessageBytes: 1 << 20,
    });
    const port = await adapter.listen();
    return { adapter, url: `127.0.0.1:${port}` };
  }

  it('ends OK when a stop then gives up on the call (its request aborted)', async () => {
    const { adapter, url } = await serve((request) =>
      request.abort?.(new UnavailableError('The server stopped before the request finished')),
    );
    const client = new Client(url, credentials.createInsecure());
    try {
      const outcome = await openStream(client, encodeInvokeRequest('send_task', task('x')));
      expect(finalState(outcome)).toBe(pb.TaskState.TASK_STATE_CANCELED);
      expect(outcome.status.code).toBe(status.OK);
    } finally {
      client.close();
      await adapter.close();
    }
  });

  it('ends OK when the server closes before the feed ends, not cut short by forceShutdown', async () => {
    let finalSeen!: () => void;
    const seen = new Promise<void>((resolve) => (finalSeen = resolve));
    const { adapter, url } = await serve(() => undefined);
    const client = new Client(url, credentials.createInsecure());
    try {
      const outcome = openStream(client, encodeInvokeRequest('send_task', task('x')), finalSeen);
      await seen;
      await adapter.close();
      const { status: ended, events } = await outcome;
      expect(events).toHaveLength(1);
      expect({ code: ended.code, details: ended.details }).toEqual({ code: status.OK, details: 'OK' });
    } finally {
      client.close();
    }
  });
});
