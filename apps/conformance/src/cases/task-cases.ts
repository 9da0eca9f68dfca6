/** Cases that drive the agent through `@agent/client`, identical on every transport. */
import { createTask, isFinalEvent, type Task, type TaskEvent } from '@agent/core';
import { STREAMING_TRANSPORTS, type ConformanceCase } from '../context.js';
import {
  asJson,
  assert,
  assertOneFinalStatus,
  collect,
  expectCode,
  lastAgentText,
  untilRegistered,
} from '../expect.js';

export const taskCases: ConformanceCase[] = [
  {
    id: 'task.card',
    title: 'getAgentCard returns the native card',
    async run(ctx) {
      const card = await ctx.client.getAgentCard({ signal: ctx.signal });
      assert.equal(typeof card.name, 'string');
      assert.equal(typeof card.description, 'string');
      assert.equal(typeof card.url, 'string');
      if (ctx.auth) assert.ok(card.securitySchemes, 'securitySchemes present with an authenticator');
      else assert.equal(card.securitySchemes, undefined, 'no securitySchemes without an authenticator');
    },
  },
  {
    id: 'task.echo',
    title: 'echo <text> completes with the text as agent message and one text artifact',
    async run(ctx) {
      const task = createTask('echo hello conformance');
      const done = await ctx.client.sendTask(task, { signal: ctx.signal });
      assert.equal(done.id, task.id, 'the task id is the caller-created one');
      assert.equal(done.state, 'completed');
      assert.equal(lastAgentText(done), 'hello conformance');
      assert.equal(done.artifacts.length, 1, 'one artifact');
      assert.deepEqual(asJson(done.artifacts[0]!.parts), [{ type: 'text', content: 'hello conformance' }]);
      assert.equal(done.messages[0]!.role, 'user', 'history keeps the user message');
    },
  },
  {
    id: 'task.send-message',
    title: 'sendMessage wraps a message in a task and resolves with the reply',
    async run(ctx) {
      const reply = await ctx.client.sendMessage('echo via message', { signal: ctx.signal });
      assert.equal(reply.role, 'agent');
      assert.deepEqual(asJson(reply.parts), [{ type: 'text', content: 'via message' }]);
    },
  },
  {
    id: 'task.fail',
    title: 'fail <text> ends failed with metadata.error, over a successful call',
    async run(ctx) {
      const done = await ctx.client.sendTask(createTask('fail on purpose'), { signal: ctx.signal });
      assert.equal(done.state, 'failed');
      const error = done.metadata.error as { code?: string; message?: string } | undefined;
      assert.ok(error, 'metadata.error is set');
      assert.equal(typeof error.code, 'string');
      assert.match(String(error.message), /on purpose/);
    },
  },
  {
    id: 'task.unknown-command',
    title: 'an unknown command fails the task with a clear error',
    async run(ctx) {
      const done = await ctx.client.sendTask(createTask('dance'), { signal: ctx.signal });
      assert.equal(done.state, 'failed');
      assert.match(String((done.metadata.error as { message?: string }).message), /Unknown command/);
    },
  },
  {
    id: 'task.tool.allowed',
    title: 'a tool whose capability the policy allows runs and returns its result',
    async run(ctx) {
      const done = await ctx.client.sendTask(createTask('tool read_file {"path":"readme.txt"}'), {
        signal: ctx.signal,
      });
      assert.equal(done.state, 'completed', JSON.stringify(done.metadata.error));
      assert.match(lastAgentText(done), /reference server/);
    },
  },
  {
    id: 'task.tool.approval',
    title: 'a tool that needs approval without a handler fails with APPROVAL_REQUIRED and no side effect',
    async run(ctx) {
      const done = await ctx.client.sendTask(createTask('tool delete_record {"id":"r1"}'), {
        signal: ctx.signal,
      });
      assert.equal(done.state, 'failed');
      const error = done.metadata.error as { code?: string; data?: { request?: { request_id?: string } } };
      assert.equal(error.code, 'APPROVAL_REQUIRED');
    },
  },
  {
    id: 'task.tool.invalid-arguments',
    title: 'tool arguments that fail the tool schema fail the task before any side effect',
    async run(ctx) {
      const done = await ctx.client.sendTask(createTask('tool read_file {"path": 5}'), {
        signal: ctx.signal,
      });
      assert.equal(done.state, 'failed');
    },
  },
  {
    id: 'task.cancel.unknown',
    title: 'canceling an unknown task id fails with TASK_NOT_FOUND',
    async run(ctx) {
      await expectCode(
        () => ctx.client.cancelTask('never-registered-task', 'x', { signal: ctx.signal }),
        'TASK_NOT_FOUND',
        'cancel unknown',
      );
    },
  },
  {
    id: 'task.cancel.finished',
    title: 'canceling a finished task fails with TASK_NOT_CANCELABLE',
    async run(ctx) {
      const done = await ctx.client.sendTask(createTask('echo done'), { signal: ctx.signal });
      assert.equal(done.state, 'completed');
      await expectCode(
        () => ctx.client.cancelTask(done.id, 'too late', { signal: ctx.signal }),
        'TASK_NOT_CANCELABLE',
        'cancel finished',
      );
    },
  },
  {
    id: 'task.cancel.running',
    title: 'canceling a running sleep ends it canceled with cancel_reason, never failed',
    async run(ctx) {
      const task = createTask('sleep 20000');
      const running = ctx.client.sendTask(task, { signal: ctx.signal });
      const canceled = await untilRegistered(
        () => ctx.client.cancelTask(task.id, 'conformance cancel', { signal: ctx.signal }),
        ctx.signal,
      );
      assert.equal(canceled.state, 'canceled');
      assert.equal(canceled.metadata.cancel_reason, 'conformance cancel');
      const finished: Task = await running;
      assert.equal(finished.state, 'canceled');
      assert.equal(finished.metadata.cancel_reason, 'conformance cancel');
      const runContext = finished.metadata.run_context as { canceled?: boolean } | undefined;
      assert.equal(runContext?.canceled, true, 'run_context.canceled is true');
      await expectCode(
        () => ctx.client.cancelTask(task.id, 'again', { signal: ctx.signal }),
        'TASK_NOT_CANCELABLE',
        'second cancel',
      );
    },
  },
  {
    id: 'task.auth.wrong',
    title: 'wrong or missing credentials are rejected as UNAUTHENTICATED on this transport',
    auth: 'required',
    async run(ctx) {
      await expectCode(
        () => ctx.clientWith('wrong-credential').sendTask(createTask('echo x'), { signal: ctx.signal }),
        'UNAUTHENTICATED',
        'wrong credential',
      );
      await expectCode(
        () => ctx.clientWith(null).sendTask(createTask('echo x'), { signal: ctx.signal }),
        'UNAUTHENTICATED',
        'no credential',
      );
    },
  },
  {
    id: 'stream.chunks',
    title: 'stream <n> yields n artifact events in order, then one final completed status',
    transports: STREAMING_TRANSPORTS,
    async run(ctx) {
      const events = await collect(ctx.client.streamTask(createTask('stream 5'), { signal: ctx.signal }));
      const artifacts = events.filter(
        (e): e is Extract<TaskEvent, { type: 'task.artifact' }> => e.type === 'task.artifact',
      );
      assert.equal(artifacts.length, 5, `5 artifact events, got ${artifacts.length}`);
      assert.deepEqual(
        artifacts.map((a) => a.artifact.parts[a.artifact.parts.length - 1]!.content),
        ['chunk 1', 'chunk 2', 'chunk 3', 'chunk 4', 'chunk 5'],
      );
      assert.equal(artifacts[4]!.last_chunk, true, 'the last chunk is marked');
      assertOneFinalStatus(events, 'completed', 'stream 5');
      const final = events[events.length - 1] as Extract<TaskEvent, { type: 'task.status' }>;
      assert.equal(final.task?.state, 'completed', 'the final status carries the task');
    },
  },
  {
    id: 'stream.progress',
    title: 'a streamed sleep reports task.progress before its final status',
    transports: STREAMING_TRANSPORTS,
    async run(ctx) {
      const events = await collect(ctx.client.streamTask(createTask('sleep 250'), { signal: ctx.signal }));
      assert.ok(events.filter((e) => e.type === 'task.progress').length >= 2, 'progress events every 100 ms');
      assertOneFinalStatus(events, 'completed', 'sleep 250');
    },
  },
  {
    id: 'stream.cancel',
    title: 'a cancel from another connection ends a streaming sleep with exactly one canceled status',
    transports: STREAMING_TRANSPORTS,
    async run(ctx) {
      const task = createTask('sleep 20000');
      const events: TaskEvent[] = [];
      const streaming = (async () => {
        for await (const event of ctx.client.streamTask(task, { signal: ctx.signal })) events.push(event);
      })();
      const other = ctx.clientWith(ctx.auth ? ctx.auth.token : null);
      await untilRegistered(
        () => other.cancelTask(task.id, 'stream cancel', { signal: ctx.signal }),
        ctx.signal,
      );
      await streaming;
      assertOneFinalStatus(events, 'canceled', 'canceled stream');
      assert.ok(!events.some((e) => e.type === 'task.error'), 'cancellation is never a task.error');
      const final = events.find(isFinalEvent)!;
      assert.equal(final.task?.metadata.cancel_reason, 'stream cancel');
    },
  },
];
