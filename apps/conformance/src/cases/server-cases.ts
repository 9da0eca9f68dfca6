/**
 * Cases for the rules every transport shares through the one server pipeline: error masking, the
 * stream rule, readiness on every port, and the two-phase stop (when the harness controls the server).
 */
import { createTask, isFinalEvent, type Task, type TaskEvent } from '@agent/core';
import { STREAMING_TRANSPORTS, type CaseContext, type ConformanceCase } from '../context.js';
import { assert, assertOneFinalStatus, collect } from '../expect.js';
import { checkHealth } from '@agent/transport-grpc';
import { rawHttp } from '../raw-http.js';

/** The plain-HTTP base of the transport's own port (health and readiness live on every HTTP-based port). */
function portUrl(ctx: CaseContext): string {
  return ctx.baseUrl.replace(/^ws(s?):/, 'http$1:');
}

const HTTP_PORTS = ['http', 'sse', 'ws'] as const;

interface ErrorDetail {
  code?: unknown;
  message?: unknown;
  data?: { error_id?: unknown };
}

export const serverCases: ConformanceCase[] = [
  {
    id: 'server.error-masking',
    title:
      'an unexpected error reaches the caller as INTERNAL "Internal error" with an error_id, never its message',
    async run(ctx) {
      const secret = 'db-password-rejected-by-10.0.0.5';
      const done = await ctx.client.sendTask(createTask(`crash ${secret}`), { signal: ctx.signal });
      assert.equal(done.state, 'failed');
      const error = done.metadata.error as ErrorDetail;
      assert.equal(error.code, 'INTERNAL');
      assert.equal(error.message, 'Internal error');
      assert.equal(typeof error.data?.error_id, 'string', 'data.error_id names the log line');
      assert.ok(!JSON.stringify(done.metadata).includes(secret), 'the message stays on the server');
    },
  },
  {
    id: 'server.stream-without-final',
    title: 'a handler stream that ends without a final status ends with one task.error and one final failed',
    transports: STREAMING_TRANSPORTS,
    async run(ctx) {
      const events = await collect(ctx.client.streamTask(createTask('unfinished 3'), { signal: ctx.signal }));
      assert.deepEqual(
        events.map((e) => e.type),
        ['task.artifact', 'task.artifact', 'task.artifact', 'task.error', 'task.status'],
      );
      const error = (events[3] as { error?: ErrorDetail }).error;
      assert.equal(error?.code, 'INTERNAL', 'the task.error says INTERNAL');
      assertOneFinalStatus(events, 'failed', 'unfinished stream');
    },
  },
  {
    id: 'server.readiness',
    title: 'every HTTP-based port answers /healthz 200 ok and /readyz 200 ready while serving',
    transports: HTTP_PORTS,
    async run(ctx) {
      const health = await rawHttp(portUrl(ctx), '/healthz', { signal: ctx.signal });
      assert.equal(health.status, 200);
      assert.deepEqual(health.json, { status: 'ok' });
      const ready = await rawHttp(portUrl(ctx), '/readyz', { signal: ctx.signal });
      assert.equal(ready.status, 200);
      assert.deepEqual(ready.json, { status: 'ready' });
    },
  },
  {
    id: 'server.readiness.grpc',
    title: 'the gRPC port answers the standard health check SERVING while serving',
    transports: ['grpc'],
    async run(ctx) {
      assert.equal(await checkHealth(ctx.baseUrl, { signal: ctx.signal }), 'SERVING');
    },
  },
  {
    id: 'server.stop',
    title:
      'stop: readiness turns 503 stopping (gRPC health NOT_SERVING), a call that ends within the grace completes, one past it is canceled "server shutting down"',
    needsControl: true,
    async run(ctx) {
      const control = ctx.control;
      assert.ok(control, 'server.stop needs a harness that can stop the server');
      const short = ctx.client.sendTask(createTask('sleep 700'), { signal: ctx.signal });
      const long = ctx.client.sendTask(createTask('sleep 60000'), { signal: ctx.signal });
      const streamed: TaskEvent[] = [];
      let firstEvent: () => void = () => undefined;
      const streamStarted = new Promise<void>((resolve) => (firstEvent = resolve));
      const streaming = STREAMING_TRANSPORTS.includes(ctx.transport)
        ? (async () => {
            for await (const event of ctx.client.streamTask(createTask('sleep 60000'), {
              signal: ctx.signal,
            })) {
              streamed.push(event);
              firstEvent();
            }
          })()
        : Promise.resolve();
      // Let the calls reach the server before it stops: the stream's first event proves it runs; the
      // unary calls were sent before it, and get a moment of their own where there is no stream.
      if (STREAMING_TRANSPORTS.includes(ctx.transport)) await Promise.race([streamStarted, streaming]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stopped = control.stop();
      if ((HTTP_PORTS as readonly string[]).includes(ctx.transport)) {
        // The stop is a signal to another process: ask until it has arrived (the case's own deadline bounds it).
        let ready = await rawHttp(portUrl(ctx), '/readyz', { signal: ctx.signal });
        while (ready.status === 200) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          ready = await rawHttp(portUrl(ctx), '/readyz', { signal: ctx.signal });
        }
        assert.equal(ready.status, 503, 'readiness turns 503 while stopping');
        assert.deepEqual(ready.json, { status: 'stopping' });
      } else if (ctx.transport === 'grpc') {
        let status = await checkHealth(ctx.baseUrl, { signal: ctx.signal });
        while (status === 'SERVING') {
          await new Promise((resolve) => setTimeout(resolve, 20));
          status = await checkHealth(ctx.baseUrl, { signal: ctx.signal });
        }
        assert.equal(status, 'NOT_SERVING', 'health turns NOT_SERVING while stopping');
      }
      const finished: Task = await short;
      assert.equal(finished.state, 'completed', 'a call that ends within the grace completes');
      const canceled: Task = await long;
      assert.equal(canceled.state, 'canceled', 'a call past the grace is canceled');
      assert.equal(canceled.metadata.cancel_reason, 'server shutting down');
      await streaming;
      if (STREAMING_TRANSPORTS.includes(ctx.transport)) {
        assertOneFinalStatus(streamed, 'canceled', 'stream open at stop');
        assert.equal(streamed.find(isFinalEvent)?.task?.metadata.cancel_reason, 'server shutting down');
      }
      await stopped;
    },
  },
];
