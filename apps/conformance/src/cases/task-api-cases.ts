/**
 * Cases for the task API, identical on every transport: get_task, list_tasks, subscribe_task, the
 * event sequence, idempotent resubmission, and (with a second principal's credential) that one
 * principal's tasks are out of another's reach. They go through the transport's client operations,
 * so they check the wire mapping of each transport, not a convenience layer.
 */
import type { AgentClient } from '@agent/client';
import {
  CLIENT_OPERATIONS,
  createTask,
  isFinalEvent,
  newId,
  type Task,
  type TaskEvent,
  type TaskList,
} from '@agent/core';
import { STREAMING_TRANSPORTS, type CaseContext, type ConformanceCase } from '../context.js';
import {
  asJson,
  assert,
  assertOneFinalStatus,
  collect,
  expectCode,
  lastAgentText,
  rejection,
  untilRegistered,
} from '../expect.js';

function getTask(
  client: AgentClient,
  ctx: CaseContext,
  taskId: string,
  historyLength?: number,
): Promise<Task> {
  const body: Record<string, unknown> = { task_id: taskId };
  if (historyLength !== undefined) body.history_length = historyLength;
  return client.transport.send<Task>(CLIENT_OPERATIONS.get_task, client.baseUrl, body, undefined, {
    signal: ctx.signal,
  });
}

function listTasks(
  client: AgentClient,
  ctx: CaseContext,
  query: Record<string, unknown> = {},
): Promise<TaskList> {
  return client.transport.send<TaskList>(CLIENT_OPERATIONS.list_tasks, client.baseUrl, query, undefined, {
    signal: ctx.signal,
  });
}

function subscribeTask(
  client: AgentClient,
  ctx: CaseContext,
  taskId: string,
  after?: number,
): AsyncIterable<TaskEvent> {
  const { transport } = client;
  assert.ok(transport.subscribeTask, `the ${ctx.transport} client has no subscribeTask`);
  return transport.subscribeTask(client.baseUrl, taskId, {
    signal: ctx.signal,
    ...(after === undefined ? {} : { after }),
  });
}

/** A session of this case's own: listing by it leaves out every other task of the principal. */
function sessionTask(text: string, sessionId: string): Task {
  return createTask(text, { metadata: { run_context: { session_id: sessionId } } });
}

/** A counter of this case's own, so that no other caller of the demo agent moves it. */
function counterName(): string {
  return `conformance-${newId()}`;
}

async function count(ctx: CaseContext, name: string): Promise<string> {
  const done = await ctx.client.sendTask(createTask(`count ${name}`), { signal: ctx.signal });
  assert.equal(done.state, 'completed', JSON.stringify(done.metadata.error));
  return lastAgentText(done);
}

/** The sequences of a stream: 1, 2, … n from its first event, or from `after + 1`. */
function assertSequenced(events: TaskEvent[], after: number, what: string): void {
  assert.deepEqual(
    events.map((e) => e.sequence),
    events.map((_, i) => after + i + 1),
    `${what}: every event carries its sequence, counting on from ${after}`,
  );
}

/** A refusal as the wire carried it, with the id asked about made neutral. */
async function refusalOf(work: () => Promise<unknown>, taskId: string, what: string): Promise<unknown> {
  const error = await rejection(work, what);
  const text = JSON.stringify({ code: error.code, message: error.message, data: error.data ?? null });
  return JSON.parse(text.split(taskId).join('<id>')) as unknown;
}

/**
 * A call the case leaves running while it goes on. Should the case fail before it awaits the call,
 * the runner aborts it, and that rejection must not go unhandled (it would end the whole run).
 */
function inBackground<T>(call: Promise<T>): Promise<T> {
  call.catch(() => undefined);
  return call;
}

/** The ids of a page, in order. */
function idsOf(list: TaskList): string[] {
  return asJson(list.tasks.map((t) => t.id));
}

/** Sleeps a little so that tasks saved one after another do not tie on their update time. */
function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 3));
}

export const taskApiCases: ConformanceCase[] = [
  {
    id: 'task.get.history-length',
    title: 'get_task reads a finished task back as answered; history_length keeps the newest messages',
    async run(ctx) {
      const done = await ctx.client.sendTask(createTask('echo read back'), { signal: ctx.signal });
      assert.equal(done.state, 'completed');
      assert.equal(done.messages.length, 2, 'the user message and the reply');
      assert.deepEqual(asJson(await getTask(ctx.client, ctx, done.id)), asJson(done), 'the task as answered');
      const last = await getTask(ctx.client, ctx, done.id, 1);
      assert.deepEqual(asJson(last.messages), asJson(done.messages.slice(-1)), 'history_length 1: the reply');
      assert.equal(last.state, 'completed');
      assert.deepEqual(asJson((await getTask(ctx.client, ctx, done.id, 0)).messages), [], 'history_length 0');
      assert.equal((await getTask(ctx.client, ctx, done.id, 10)).messages.length, 2, 'history_length 10');
      await expectCode(
        () => getTask(ctx.client, ctx, newId()),
        'TASK_NOT_FOUND',
        'get_task of an unknown id',
      );
    },
  },
  {
    id: 'task.get.running',
    title: 'get_task reads a running task as working, and its final state once canceled',
    async run(ctx) {
      const task = createTask('sleep 60000');
      const running = inBackground(ctx.client.sendTask(task, { signal: ctx.signal }));
      const seen = await untilRegistered(() => getTask(ctx.client, ctx, task.id), ctx.signal);
      assert.equal(seen.state, 'working');
      assert.equal(seen.id, task.id);
      await ctx.client.cancelTask(task.id, 'read enough', { signal: ctx.signal });
      const finished = await running;
      assert.equal(finished.state, 'canceled');
      const after = await getTask(ctx.client, ctx, task.id);
      assert.equal(after.state, 'canceled');
      assert.equal(after.metadata.cancel_reason, 'read enough');
    },
  },
  {
    id: 'task.list.pages',
    title: "list_tasks pages through the caller's tasks newest first, filtered by session and state",
    async run(ctx) {
      const session = `conformance-${newId()}`;
      const ids: string[] = [];
      for (const text of ['echo a', 'echo b', 'fail c']) {
        const done = await ctx.client.sendTask(sessionTask(text, session), { signal: ctx.signal });
        ids.push(done.id);
        await tick();
      }
      const [a, b, c] = ids;
      const first = await listTasks(ctx.client, ctx, { session_id: session, page_size: 2 });
      assert.deepEqual(idsOf(first), [c, b], 'page 1: the two newest');
      assert.equal(typeof first.next_page_token, 'string');
      assert.notEqual(first.next_page_token, '', 'page 1 has a next_page_token');
      const second = await listTasks(ctx.client, ctx, {
        session_id: session,
        page_size: 2,
        page_token: first.next_page_token,
      });
      assert.deepEqual(idsOf(second), [a], 'page 2: the oldest');
      assert.equal(second.next_page_token, '', 'the last page has an empty next_page_token');
      assert.equal(second.tasks[0]!.state, 'completed');
      const completed = await listTasks(ctx.client, ctx, { session_id: session, state: 'completed' });
      assert.deepEqual(idsOf(completed), [b, a], 'state completed');
      const failed = await listTasks(ctx.client, ctx, { session_id: session, state: 'failed' });
      assert.deepEqual(idsOf(failed), [c], 'state failed');
      const none = await listTasks(ctx.client, ctx, { session_id: `conformance-${newId()}` });
      assert.deepEqual(asJson(none), { tasks: [], next_page_token: '' }, 'a session without tasks');
    },
  },
  {
    id: 'task.query.malformed',
    title:
      'malformed get_task, list_tasks and subscribe_task requests fail VALIDATION_FAILED naming the field',
    async run(ctx) {
      const subscribe = STREAMING_TRANSPORTS.includes(ctx.transport);
      const bad: [string, () => Promise<unknown>, string][] = [
        ['get_task history_length -1', () => getTask(ctx.client, ctx, 'x', -1), '/history_length'],
        ['list_tasks page_size 0', () => listTasks(ctx.client, ctx, { page_size: 0 }), '/page_size'],
        ['list_tasks page_size 101', () => listTasks(ctx.client, ctx, { page_size: 101 }), '/page_size'],
        ['list_tasks state sleeping', () => listTasks(ctx.client, ctx, { state: 'sleeping' }), '/state'],
        [
          'list_tasks page_token not-a-token',
          () => listTasks(ctx.client, ctx, { page_token: 'not-a-token' }),
          '/page_token',
        ],
      ];
      if (subscribe)
        bad.push([
          'subscribe_task after -1',
          () => collect(subscribeTask(ctx.client, ctx, 'x', -1)),
          '/after',
        ]);
      for (const [what, work, pointer] of bad) {
        const error = await expectCode(work, 'VALIDATION_FAILED', what);
        assert.ok(
          JSON.stringify(error.data ?? null).includes(`"${pointer}"`),
          `${what}: data.errors names ${pointer}, got ${JSON.stringify(error.data)}`,
        );
      }
    },
  },
  {
    id: 'stream.sequence',
    title: 'every streamed event carries its sequence: 1, 2, … up to the final status',
    transports: STREAMING_TRANSPORTS,
    async run(ctx) {
      const events = await collect(ctx.client.streamTask(createTask('stream 3'), { signal: ctx.signal }));
      assertOneFinalStatus(events, 'completed', 'stream 3');
      assertSequenced(events, 0, 'stream 3');
    },
  },
  {
    id: 'task.subscribe.replay',
    title: 'subscribe_task replays a finished task: every event with its sequence, or those after `after`',
    transports: STREAMING_TRANSPORTS,
    async run(ctx) {
      const task = createTask('stream 3');
      const streamed = await collect(ctx.client.streamTask(task, { signal: ctx.signal }));
      assertOneFinalStatus(streamed, 'completed', 'stream 3');
      const n = streamed.length;
      const replayed = await collect(subscribeTask(ctx.client, ctx, task.id));
      assert.deepEqual(
        replayed.map((e) => [e.sequence, e.type]),
        streamed.map((e) => [e.sequence, e.type]),
        'the replay is the stream, event for event',
      );
      assert.deepEqual(
        asJson(replayed.find(isFinalEvent)?.task),
        asJson(streamed.find(isFinalEvent)?.task),
        'the replayed final status carries the task',
      );
      const tail = await collect(subscribeTask(ctx.client, ctx, task.id, 2));
      assertSequenced(tail, 2, 'after 2');
      assert.equal(tail.length, n - 2, `after 2: the last ${n - 2} events`);
      assertOneFinalStatus(tail, 'completed', 'after 2');
      assert.deepEqual(await collect(subscribeTask(ctx.client, ctx, task.id, n)), [], `after ${n}: nothing`);
      await expectCode(
        () => collect(subscribeTask(ctx.client, ctx, newId())),
        'TASK_NOT_FOUND',
        'subscribe_task of an unknown id',
      );
    },
  },
  {
    id: 'task.subscribe.resume',
    title:
      'a stream dropped after k events resumes with subscribe_task after k: each later event once, then the final status',
    transports: STREAMING_TRANSPORTS,
    async run(ctx) {
      const task = createTask('sleep 600');
      const seen: TaskEvent[] = [];
      // Dropping the stream detaches this caller only: the task goes on.
      for await (const event of ctx.client.streamTask(task, { signal: ctx.signal })) {
        seen.push(event);
        if (seen.length === 2) break;
      }
      assert.equal(seen.length, 2, 'the stream yields two events before it is dropped');
      assert.ok(!seen.some(isFinalEvent), 'dropped before the final status');
      assertSequenced(seen, 0, 'before the drop');
      const rest = await collect(subscribeTask(ctx.client, ctx, task.id, 2));
      assertSequenced(rest, 2, 'the resumed stream');
      assertOneFinalStatus(rest, 'completed', 'the resumed stream');
      assert.ok(
        rest.filter((e) => e.type === 'task.progress').length >= 1,
        'the progress events after the drop arrive',
      );
    },
  },
  {
    id: 'task.resubmit.finished',
    title:
      'resubmitting a finished task id answers the stored task and runs nothing (the demo counter stays)',
    async run(ctx) {
      const name = counterName();
      const task = createTask(`count ${name}`);
      const first = await ctx.client.sendTask(task, { signal: ctx.signal });
      assert.equal(first.state, 'completed', JSON.stringify(first.metadata.error));
      assert.equal(lastAgentText(first), '1', 'the first run counts 1');
      const again = await ctx.client.sendTask(task, { signal: ctx.signal });
      assert.deepEqual(asJson(again), asJson(first), 'the resubmission is answered with the stored task');
      if (STREAMING_TRANSPORTS.includes(ctx.transport)) {
        const replay = await collect(ctx.client.streamTask(task, { signal: ctx.signal }));
        assertOneFinalStatus(replay, 'completed', 'streamed resubmission');
        assertSequenced(replay, 0, 'streamed resubmission');
        assert.deepEqual(
          asJson(replay.find(isFinalEvent)?.task),
          asJson(first),
          'the streamed resubmission replays the stored task',
        );
      }
      assert.equal(
        await count(ctx, name),
        '2',
        'the counter moved once for the task, not for its resubmissions',
      );
    },
  },
  {
    id: 'task.resubmit.running',
    title: 'resubmitting a running task id attaches to the run: one run, every caller gets its end',
    async run(ctx) {
      const name = counterName();
      const task = createTask(`count ${name} 60000`);
      const first = inBackground(ctx.client.sendTask(task, { signal: ctx.signal }));
      const running = await untilRegistered(() => getTask(ctx.client, ctx, task.id), ctx.signal);
      assert.equal(running.state, 'working');
      const resubmitted = inBackground(ctx.client.sendTask(task, { signal: ctx.signal }));
      let streamed: Promise<TaskEvent[]> = Promise.resolve([]);
      if (STREAMING_TRANSPORTS.includes(ctx.transport)) {
        const iterator = ctx.client.streamTask(task, { signal: ctx.signal })[Symbol.asyncIterator]();
        const head = await iterator.next();
        assert.ok(!head.done, 'the streamed resubmission yields the run events');
        // Still working: the stream follows the run itself, it is not a replay of a finished task.
        assert.equal((await getTask(ctx.client, ctx, task.id)).state, 'working');
        streamed = inBackground(
          (async () => {
            const events = [head.value];
            for (let next = await iterator.next(); !next.done; next = await iterator.next())
              events.push(next.value);
            return events;
          })(),
        );
      }
      await ctx.client.cancelTask(task.id, 'one run is enough', { signal: ctx.signal });
      const [a, b, events] = await Promise.all([first, resubmitted, streamed]);
      assert.equal(a.state, 'canceled');
      assert.equal(a.metadata.cancel_reason, 'one run is enough');
      assert.deepEqual(asJson(b), asJson(a), 'the resubmission gets the run’s own end');
      if (STREAMING_TRANSPORTS.includes(ctx.transport)) {
        assertOneFinalStatus(events, 'canceled', 'streamed resubmission');
        assertSequenced(events, 0, 'streamed resubmission (from the run’s first event)');
        assert.deepEqual(asJson(events.find(isFinalEvent)?.task), asJson(a));
      }
      assert.equal(
        await count(ctx, name),
        '2',
        'the counter moved once for the run, not for its resubmissions',
      );
    },
  },
  {
    id: 'task.owner.other-principal',
    title:
      "another principal's get, cancel and subscribe of a task get exactly the unknown-id answer, and its list leaves the task out",
    auth: 'required',
    otherPrincipal: true,
    async run(ctx) {
      const other = ctx.other;
      assert.ok(other, 'this case needs a second principal');
      const session = `conformance-${newId()}`;
      const done = await ctx.client.sendTask(sessionTask('echo mine', session), { signal: ctx.signal });
      assert.equal(done.state, 'completed');
      const running = sessionTask('sleep 60000', session);
      const held = inBackground(ctx.client.sendTask(running, { signal: ctx.signal }));
      await untilRegistered(() => getTask(ctx.client, ctx, running.id), ctx.signal);

      const ops: [string, (id: string) => Promise<unknown>][] = [
        ['get_task', (id) => getTask(other, ctx, id)],
        [
          'cancel_task',
          (id) =>
            other.transport.send(
              CLIENT_OPERATIONS.cancel_task,
              other.baseUrl,
              { task_id: id, reason: 'probe' },
              undefined,
              {
                signal: ctx.signal,
              },
            ),
        ],
      ];
      if (STREAMING_TRANSPORTS.includes(ctx.transport))
        ops.push(['subscribe_task', (id) => collect(subscribeTask(other, ctx, id))]);
      for (const [target, state] of [
        [done.id, 'finished'],
        [running.id, 'running'],
      ] as const) {
        for (const [name, op] of ops) {
          const unknown = newId();
          const nobodys = await refusalOf(() => op(unknown), unknown, `${name} of an unknown id`);
          assert.equal((nobodys as { code?: unknown }).code, 'TASK_NOT_FOUND', `${name} of an unknown id`);
          const theirs = await refusalOf(
            () => op(target),
            target,
            `${name} of another principal's ${state} task`,
          );
          assert.deepEqual(
            theirs,
            nobodys,
            `${name} of another principal's ${state} task answers as an unknown id`,
          );
        }
      }
      const listed = await listTasks(other, ctx, { session_id: session });
      assert.deepEqual(idsOf(listed), [], "another principal's list by the session leaves the tasks out");
      const page = await listTasks(other, ctx, { page_size: 100 });
      const leaked = idsOf(page).filter((id) => id === done.id || id === running.id);
      assert.deepEqual(leaked, [], "another principal's list leaves the tasks out");
      const mine = await listTasks(ctx.client, ctx, { session_id: session });
      assert.deepEqual(idsOf(mine).sort(), [done.id, running.id].sort(), 'the owner lists both');

      // The same id sent by the other principal is a task of its own, and leaves the owner's alone.
      const theirs = await other.sendTask(
        { ...createTask('echo yours'), id: done.id },
        { signal: ctx.signal },
      );
      assert.equal(lastAgentText(theirs), 'yours');
      assert.deepEqual(
        asJson(await getTask(ctx.client, ctx, done.id)),
        asJson(done),
        "the owner's task is unchanged",
      );
      assert.equal((await getTask(ctx.client, ctx, running.id)).state, 'working', 'the running task runs on');
      await ctx.client.cancelTask(running.id, 'owner stops it', { signal: ctx.signal });
      const finished = await held;
      assert.equal(finished.state, 'canceled');
      assert.equal(finished.metadata.cancel_reason, 'owner stops it');
    },
  },
];
