import { APIKeyAuth } from '@agent/auth';
import {
  createArtifact,
  createMessage,
  createTask,
  TaskAlreadyRunningError,
  messageText,
  ValidationError,
  ValueError,
  type JsonObject,
  type Task,
  type TaskEvent,
  type Transport,
  ActionDeniedError,
  createJsonLogger,
} from '@agent/core';
import {
  InMemoryEventSink,
  InMemoryRunStore,
  SqliteRunStore,
  type EventSink,
  type RunEvent,
} from '@agent/events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handsOverEvents, pushOf } from '@agent/core/internal';
import { Agent } from './agent.js';
import type { RunHandle } from './task-run.js';
import { collect, deferred, types } from './test-support/helpers.js';
import { InProcessNetwork } from './test-support/in-process-transport.js';

/** The call context of a server over HTTP that records the task in `taskStore` itself. */
function servedBy(taskStore: object) {
  return {
    transport: 'http' as const,
    signal: new AbortController().signal,
    headers: {},
    taskStore,
  };
}

describe('Agent', () => {
  it('exposes its card, with securitySchemes when an authenticator is set', () => {
    const plain = new Agent({ card: { name: 'plain', description: 'd', url: 'http://127.0.0.1:1' } });
    expect(plain.name).toBe('plain');
    expect(plain.card).toEqual({
      name: 'plain',
      description: 'd',
      url: 'http://127.0.0.1:1',
      capabilities: { streaming: true },
    });
    expect(plain.card.securitySchemes).toBeUndefined();
    const secured = new Agent({
      card: { name: 's' },
      authenticator: new APIKeyAuth({ validKeys: { k: [] } }),
    });
    expect(secured.getAgentCard()).toMatchObject({
      securitySchemes: { apiKey: { type: 'apiKey', scheme: null } },
    });
  });

  it('updates card fields but never the name, and hands out copies', () => {
    const agent = new Agent({ card: { name: 'n', url: 'http://127.0.0.1:0' } });
    agent.updateCard({ url: 'http://127.0.0.1:4321', name: 'other' } as never);
    expect(agent.card).toMatchObject({ name: 'n', url: 'http://127.0.0.1:4321' });
    agent.card.url = 'mutated copy';
    expect(agent.card.url).toBe('http://127.0.0.1:4321');
  });

  it('rejects bad construction with clear ValueErrors', () => {
    expect(() => new Agent({} as never)).toThrow(ValueError);
    expect(() => new Agent({ card: { name: 'x' }, execute: 'no' as never })).toThrow(/execute/);
    expect(() => new Agent({ card: { name: 'x' }, warningRatio: 3 })).toThrow(/warningRatio/);
    expect(() => new Agent({ card: { name: 'x' }, streamBufferSize: 0 })).toThrow(/streamBufferSize/);
    expect(() => new Agent({ card: { name: 'x' }, budget: { max_steps: -1 } })).toThrow(ValidationError);
  });

  it("after start the card's url follows the transport's real address, unless the card names another", async () => {
    const listening = (url: string): Transport => new ListeningTransport(url);
    const follows = listening('http://127.0.0.1:0');
    const agent = new Agent({ card: { name: 'a', url: 'http://127.0.0.1:0' }, transport: follows });
    await agent.start();
    expect(agent.card.url).toBe('http://127.0.0.1:4321');
    const unnamed = new Agent({ card: { name: 'b' }, transport: listening('http://127.0.0.1:0') });
    await unnamed.start();
    expect(unnamed.card.url).toBe('http://127.0.0.1:4321');
    const proxied = new Agent({
      card: { name: 'c', url: 'https://agents.example.com/c' },
      transport: listening('http://127.0.0.1:0'),
    });
    await proxied.start();
    expect(proxied.card.url).toBe('https://agents.example.com/c');
  });

  it('binds to a transport instance and starts/stops it', async () => {
    const network = new InProcessNetwork();
    const transport = network.transport('bound');
    const agent = new Agent({ card: { name: 'bound' }, transport, execute: () => undefined });
    expect(network.handlers.get('bound')).toBe(agent);
    await agent.start();
    expect(transport.started).toBe(true);
    await agent.stop();
    await agent.stop();
    expect(transport.stopped).toBe(true);
  });

  it('completes with what execute added, and adopts a returned task', async () => {
    const agent = new Agent({
      card: { name: 'echo' },
      execute: async (task, run) => {
        await run.addMessage(createMessage(`echo: ${messageText(task.messages[0])}`, { role: 'agent' }));
        await run.addArtifact(
          {
            id: 'art',
            parts: [{ type: 'text', content: 'a' }],
            metadata: {},
            created_at: new Date().toISOString(),
          },
          { append: true },
        );
        await run.addArtifact(
          {
            id: 'art',
            parts: [{ type: 'text', content: 'b' }],
            metadata: {},
            created_at: new Date().toISOString(),
          },
          { append: true, lastChunk: true },
        );
      },
    });
    const input = createTask('hi');
    const events = await collect(agent.handleTaskStreaming(input, undefined as never));
    expect(types(events)).toEqual([
      'task.status',
      'task.status',
      'task.artifact',
      'task.artifact',
      'task.status',
    ]);
    expect(events[2]).toMatchObject({ append: false, last_chunk: false });
    expect(events[3]).toMatchObject({ append: true, last_chunk: true });
    const final = (events.at(-1) as { task: Task }).task;
    expect(final.state).toBe('completed');
    expect(final.artifacts).toHaveLength(1);
    expect(final.artifacts[0].parts.map((part) => part.content)).toEqual(['a', 'b']);
    expect(messageText(final.messages.at(-1))).toBe('echo: hi');
    const replacing = new Agent({
      card: { name: 'replace' },
      execute: async (_task, run) => {
        await run.addArtifact({
          id: 'same',
          parts: [{ type: 'text', content: 'v1' }],
          metadata: {},
          created_at: new Date().toISOString(),
        });
        await run.addArtifact({
          id: 'same',
          parts: [{ type: 'text', content: 'v2' }],
          metadata: {},
          created_at: new Date().toISOString(),
        });
      },
    });
    const replaced = await replacing.handleTask(createTask('x'));
    expect(replaced.artifacts.map((artifact) => artifact.parts[0].content)).toEqual(['v2']);
    // The caller's object is never mutated.
    expect(input.state).toBe('submitted');
    expect(input.metadata).toEqual({});

    const returning = new Agent({
      card: { name: 'r' },
      execute: (task) => ({ ...task, state: 'input-required', metadata: { ...task.metadata, asked: true } }),
    });
    const paused = await returning.handleTask(createTask('x'));
    expect(paused.state).toBe('input-required');
    expect(paused.metadata).toMatchObject({ asked: true, run_context: expect.any(Object) });
  });

  it('a subclass can override execute', async () => {
    class Upper extends Agent {
      protected override async execute(task: Task, run: RunHandle): Promise<void> {
        await run.addMessage(createMessage(messageText(task.messages[0]).toUpperCase(), { role: 'agent' }));
      }
    }
    const task = await new Upper({ card: { name: 'upper' } }).handleTask(createTask('shout'));
    expect(messageText(task.messages.at(-1))).toBe('SHOUT');
  });

  it('ends failed with metadata.error and exactly one task.error for errors in execute', async () => {
    const sink = new InMemoryEventSink();
    const lines: Record<string, unknown>[] = [];
    const agent = new Agent({
      card: { name: 'f' },
      eventSink: sink,
      logger: createJsonLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
      execute: () => Promise.reject(new Error('kaput at 10.0.0.5')),
    });
    const task = await agent.handleTask(createTask('x'));
    expect(task.state).toBe('failed');
    // An unexpected error's message stays in the log; the task carries only its id.
    const errorId = (task.metadata.error as { data: { error_id: string } }).data.error_id;
    expect(task.metadata.error).toEqual({
      code: 'INTERNAL',
      message: 'Internal error',
      data: { error_id: errorId },
    });
    expect(JSON.stringify(task)).not.toContain('10.0.0.5');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      error_id: errorId,
      task_id: task.id,
      err: { message: 'kaput at 10.0.0.5' },
    });
    const own = await new Agent({
      card: { name: 'g' },
      execute: () => Promise.reject(new ValidationError('bad input from the user')),
    }).handleTask(createTask('x'));
    expect(own.metadata.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'bad input from the user',
    });
    expect(sink.toList().map((event) => event.type)).toEqual(['task.status', 'task.error', 'task.status']);
    expect(sink.toList()[1].severity).toBe('error');
    const none = await new Agent({ card: { name: 'n' } }).handleTask(createTask('x'));
    expect(none.metadata.error).toMatchObject({ code: 'UNSUPPORTED_OPERATION' });
  });

  it('rejects input that is not a task, and a task id that is already running', async () => {
    const started = deferred();
    const agent = new Agent({
      card: { name: 'a' },
      execute: async (_task, run) => {
        started.resolve();
        await run.sleep(60_000);
      },
    });
    await expect(agent.handleTask({ id: 1 } as never)).rejects.toBeInstanceOf(ValidationError);
    await expect(
      agent.handleTask({ ...createTask('x'), metadata: { f: () => 1 } } as never),
    ).rejects.toBeInstanceOf(ValidationError);
    const task = createTask('x');
    const running = agent.handleTask(task);
    await started.promise;
    await expect(agent.handleTask(task)).rejects.toBeInstanceOf(TaskAlreadyRunningError);
    await agent.stop();
    expect((await running).metadata.cancel_reason).toBe('agent stopping');
  });

  it('a throwing sink never changes the outcome; the error is reported', async () => {
    const reported: string[] = [];
    const throwing: EventSink = {
      emit: () => {
        throw new Error('sink down');
      },
      emitTaskEvent: () => {
        throw new Error('sink down');
      },
    };
    const agent = new Agent({
      card: { name: 'a' },
      eventSink: throwing,
      onObserverError: (_e, where) => reported.push(where),
      execute: () => undefined,
    });
    expect((await agent.handleTask(createTask('x'))).state).toBe('completed');
    expect(reported).toEqual(['eventSink', 'eventSink']);
  });

  it('verbosity 0 keeps streams to task.* events; the sink still gets everything', async () => {
    const sink = new InMemoryEventSink();
    const agent = new Agent({
      card: { name: 'quiet' },
      verbosity: 0,
      eventSink: sink,
      execute: async (_task, run) => {
        await run.emit({ type: 'llm.stream', delta: 'x' });
        await run.progress(0.5, 'half');
      },
    });
    const events = await collect(agent.handleTaskStreaming(createTask('x'), undefined as never));
    expect(types(events)).toEqual(['task.status', 'task.progress', 'task.status']);
    expect(sink.toList().map((event) => event.type)).toEqual([
      'task.status',
      'llm.stream',
      'task.progress',
      'task.status',
    ]);
  });

  it('run.emit fills ids and refuses a user-made final status; progress is validated', async () => {
    const agent = new Agent({
      card: { name: 'e' },
      execute: async (_task, run) => {
        await expect(
          run.emit({ type: 'task.status', final: true, state: 'completed' }),
        ).rejects.toBeInstanceOf(ValueError);
        await expect(run.progress(2)).rejects.toBeInstanceOf(ValueError);
        await run.emit({ type: 'task.progress', message: 'custom', task_id: 'spoofed' });
      },
    });
    const events = await collect(
      agent.handleTaskStreaming(createTask('x', { id: 'real' }), undefined as never),
    );
    const progress = events.find((event) => event.type === 'task.progress') as JsonObject;
    expect(progress).toMatchObject({
      task_id: 'real',
      agent_name: 'e',
      run_id: expect.any(String),
      timestamp: expect.any(String),
    });
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
  });

  it('leaves snapshots to a server that records the task in its own store, and still saves the report', async () => {
    const store = new InMemoryRunStore();
    const other = new InMemoryRunStore();
    const agent = new Agent({ card: { name: 'served' }, runStore: store, execute: async () => undefined });
    const served = await agent.runTask(createTask('x'), servedBy(store));
    expect(await store.getTaskRecord(served.id)).toBeNull();
    const runId = (served.metadata.run_context as JsonObject).run_id as string;
    expect((await store.getRunReport(runId))?.runId).toBe(runId);
    // A server recording elsewhere does not relieve the agent of its own store.
    const elsewhere = await agent.runTask(createTask('y'), servedBy(other));
    expect(await store.getTaskRecord(elsewhere.id)).toMatchObject({ state: 'completed' });
  });

  it("ends a run the server records without waiting for its report's write; a run of its own waits", async () => {
    const gate = deferred();
    const started: string[] = [];
    // A store whose report writes wait for the gate, as a database's wait for their commit.
    class SlowReports extends InMemoryRunStore {
      override async saveRunReport(...args: Parameters<InMemoryRunStore['saveRunReport']>): Promise<void> {
        started.push(args[0].taskId ?? '');
        await gate.promise;
        return super.saveRunReport(...args);
      }
    }
    const store = new SlowReports();
    const agent = new Agent({ card: { name: 'reports' }, runStore: store, execute: async () => undefined });
    const served = await agent.runTask(createTask('x', { id: 'served' }), servedBy(store));
    expect(served.state).toBe('completed');
    expect(started).toEqual(['served']);
    let ownDone = false;
    const own = agent.handleTask(createTask('y', { id: 'own' })).then((task) => ((ownDone = true), task));
    await new Promise(setImmediate);
    expect(started).toEqual(['served', 'own']);
    expect(ownDone).toBe(false);
    let stopped = false;
    const stopping = agent.stop().then(() => (stopped = true));
    await new Promise(setImmediate);
    // stop() waits for the report the served run left behind, as for the run still saving its own.
    expect(stopped).toBe(false);
    gate.resolve();
    expect((await own).state).toBe('completed');
    await stopping;
    const runId = (served.metadata.run_context as JsonObject).run_id as string;
    expect((await store.getRunReport(runId))?.taskId).toBe('served');
  });

  it("gives the caller a final task of its own: changing it changes neither a sink's final event nor the stored report", async () => {
    const store = new InMemoryRunStore();
    // A sink that keeps the task events it is given as they are (InMemoryEventSink copies them).
    const held: TaskEvent[] = [];
    const recorder = new InMemoryEventSink();
    const sink = {
      emit: (event: RunEvent) => recorder.emit(event),
      emitTaskEvent: (event: TaskEvent) => {
        held.push(event);
        return recorder.emitTaskEvent(event);
      },
    };
    const agent = new Agent({
      card: { name: 'own' },
      runStore: store,
      eventSink: sink,
      execute: async (_task, run) => void (await run.addMessage(createMessage('answer', { role: 'agent' }))),
    });
    const task = await agent.runTask(createTask('x'), servedBy(store));
    task.state = 'failed';
    task.messages.length = 0;
    const final = held.find((event) => event.type === 'task.status' && event.final === true) as
      (TaskEvent & { task: Task }) | undefined;
    expect(final?.task).toMatchObject({ state: 'completed' });
    expect(final?.task.messages).toHaveLength(2);
    const runId = (final!.task.metadata.run_context as JsonObject).run_id as string;
    expect((await store.getRunReport(runId))?.finalTask).toMatchObject({ state: 'completed' });
  });

  it('writes snapshots and the run report to the run store', async () => {
    const store = new InMemoryRunStore();
    const agent = new Agent({
      card: { name: 'stored' },
      runStore: store,
      execute: async (_task, run) => void (await run.progress(1, 'done')),
    });
    const task = await agent.handleTask(createTask('x', { metadata: { session_id: 'sess-1' } }));
    const record = await store.getTaskRecord(task.id);
    expect(record).toMatchObject({
      task_id: task.id,
      state: 'completed',
      session_id: 'sess-1',
      agent_name: 'stored',
    });
    const runId = (task.metadata.run_context as JsonObject).run_id as string;
    const report = await store.getRunReport(runId);
    expect(report?.runId).toBe(runId);
    expect(report?.events.map((event: RunEvent) => event.type)).toEqual([
      'task.status',
      'task.progress',
      'task.status',
    ]);
    expect(await agent.getTask(task.id)).toMatchObject({ id: task.id, state: 'completed' });
    expect((await agent.listTasks({ sessionId: 'sess-1' })).map((entry) => entry.id)).toEqual([task.id]);
  });

  it("hands its stream's events over to the reader, unless a sink may keep them too", async () => {
    const store = new InMemoryRunStore();
    const execute = async (_task: Task, run: RunHandle): Promise<void> =>
      void (await run.progress(0.5, 'half'));
    const alone = new Agent({ card: { name: 'alone' }, runStore: store, execute });
    const stream = alone.handleTaskStreaming(createTask('x'));
    expect(handsOverEvents(stream[Symbol.asyncIterator]())).toBe(true);
    const events = await collect(stream);
    // The reader numbers them in place (as a server does): the run's report keeps its own copies.
    events.forEach((event, index) => Object.assign(event, { sequence: index + 100, message: 'changed' }));
    const final = events.at(-1) as Extract<TaskEvent, { type: 'task.status' }>;
    const runId = (final.task!.metadata.run_context as JsonObject).run_id as string;
    await store.settled();
    const payloads = (await store.getRunReport(runId))!.events.map((event: RunEvent) => event.payload);
    expect(payloads.map((payload) => payload.sequence)).toEqual([undefined, undefined, undefined]);
    expect(payloads[1]).toMatchObject({ type: 'task.progress', message: 'half' });
    const sink = new InMemoryEventSink();
    const watched = new Agent({ card: { name: 'watched' }, eventSink: sink, execute });
    expect(handsOverEvents(watched.handleTaskStreaming(createTask('x'))[Symbol.asyncIterator]())).toBe(false);
  });

  it('pushes its stream into a receiver that attaches, and waits while the receiver asks it to', async () => {
    const produced: number[] = [];
    const agent = new Agent({
      card: { name: 'pusher' },
      execute: async (_task, run) => {
        for (let i = 1; i <= 3; i++) {
          await run.progress(i / 3, `step ${i}`);
          produced.push(i);
        }
      },
    });
    const task = createTask('x');
    const attach = pushOf<TaskEvent>(agent.handleTaskStreaming(task)[Symbol.asyncIterator]());
    expect(attach).toBeDefined();
    const got: TaskEvent[] = [];
    const ended = deferred();
    const held = deferred();
    const hold = deferred();
    attach!({
      push: (event) => {
        got.push(event);
        // The second progress event holds the run until released.
        if (event.type === 'task.progress' && event.message === 'step 2') {
          held.resolve();
          return hold.promise;
        }
        return undefined;
      },
      end: () => ended.resolve(),
    });
    await held.promise;
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(produced).toEqual([1]);
    expect(got.map((event) => event.type)).toEqual(['task.status', 'task.progress', 'task.progress']);
    hold.resolve();
    await ended.promise;
    expect(produced).toEqual([1, 2, 3]);
    expect(got.map((event) => event.type)).toEqual([
      'task.status',
      'task.progress',
      'task.progress',
      'task.progress',
      'task.status',
    ]);
    expect(got.at(-1)).toMatchObject({ type: 'task.status', final: true, state: 'completed' });

    // Read once only: a second attach, or one after a pull, is refused; a run that cannot start
    // refuses its attach, as its first next() would reject.
    expect(() => attach!({ push: () => undefined, end: () => undefined })).toThrow(ValueError);
    const pulled = agent.handleTaskStreaming(createTask('y'))[Symbol.asyncIterator]();
    await pulled.next();
    expect(() => pushOf<TaskEvent>(pulled)!({ push: () => undefined, end: () => undefined })).toThrow(
      ValueError,
    );
    await collect({ [Symbol.asyncIterator]: () => pulled });
    const invalid = agent.handleTaskStreaming({ id: 1 } as never)[Symbol.asyncIterator]();
    expect(() => pushOf<TaskEvent>(invalid)!({ push: () => undefined, end: () => undefined })).toThrow(
      ValidationError,
    );
  });

  it('lets a cancel end the wait of a run held by its receiver', async () => {
    const agent = new Agent({
      card: { name: 'held' },
      execute: async (_task, run) => {
        for (;;) await run.progress(null, 'tick');
      },
    });
    const task = createTask('x');
    const got: TaskEvent[] = [];
    const ended = deferred();
    const held = deferred();
    pushOf<TaskEvent>(agent.handleTaskStreaming(task)[Symbol.asyncIterator]())!({
      // Every progress event holds the run, for good.
      push: (event) => {
        got.push(event);
        if (event.type !== 'task.progress') return undefined;
        held.resolve();
        return new Promise<void>(() => undefined);
      },
      end: () => ended.resolve(),
    });
    await held.promise;
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(got.filter((event) => event.type === 'task.progress')).toHaveLength(1);
    const canceled = await agent.cancelTask(task.id, 'enough');
    expect(canceled.state).toBe('canceled');
    await ended.promise;
    expect(got.at(-1)).toMatchObject({ type: 'task.status', final: true, state: 'canceled' });
  });

  it('a run report keeps events as they were, whatever the run and the caller change later', async () => {
    // Without a stream or a sink the events share the run's own copies with the recorder only,
    // which must copy them as it records them.
    const store = new InMemoryRunStore();
    const artifact = createArtifact('original artifact');
    const agent = new Agent({
      card: { name: 'kept' },
      runStore: store,
      execute: async (task, run) => {
        await run.addMessage(createMessage('original message', { role: 'agent' }));
        await run.addArtifact(artifact);
        task.messages.at(-1)!.parts[0].content = 'changed by the run';
        artifact.parts[0].content = 'changed by the run';
      },
    });
    const done = await agent.handleTask(createTask('x'));
    done.messages.at(-1)!.parts[0].content = 'changed by the caller';
    done.metadata.extra = 'added by the caller';
    const runId = (done.metadata.run_context as JsonObject).run_id as string;
    const events = (await store.getRunReport(runId))!.events;
    expect(JSON.stringify(events)).not.toContain('by the caller');
    expect(events.map((event: RunEvent) => event.payload)).toEqual([
      expect.objectContaining({ type: 'task.status', state: 'working' }),
      expect.objectContaining({
        message: expect.objectContaining({
          parts: [expect.objectContaining({ content: 'original message' })],
        }),
      }),
      expect.objectContaining({
        artifact: expect.objectContaining({
          parts: [expect.objectContaining({ content: 'original artifact' })],
        }),
      }),
      expect.objectContaining({
        final: true,
        task: expect.objectContaining({
          messages: [
            expect.anything(),
            expect.objectContaining({ parts: [expect.objectContaining({ content: 'changed by the run' })] }),
          ],
        }),
      }),
    ]);
  });

  it('the finished task a served caller gets is its own, when the server records the task in the run store', async () => {
    const store = new InMemoryRunStore();
    let live: Task | undefined;
    const agent = new Agent({
      card: { name: 'served-own' },
      runStore: store,
      execute: async (task, run) => {
        live = task;
        await run.addMessage(createMessage('the answer', { role: 'agent' }));
        await run.addArtifact(createArtifact('the artifact'));
      },
    });
    const done = await agent.runTask(createTask('x'), servedBy(store));
    const runId = (done.metadata.run_context as JsonObject).run_id as string;
    const report = JSON.stringify((await store.getRunReport(runId))!.toDict({ redactionPolicy: null }));
    const result = JSON.stringify(done);
    // The run's live task, changed after the run, does not reach the caller's task…
    live!.messages.at(-1)!.parts[0].content = 'changed by the run';
    live!.artifacts[0].parts[0].content = 'changed by the run';
    (live!.metadata.run_context as JsonObject).run_id = 'changed by the run';
    expect(JSON.stringify(done)).toBe(result);
    // …nor the caller's changes the live task or the report.
    const liveNow = JSON.stringify(live);
    done.messages.at(-1)!.parts[0].content = 'changed by the caller';
    done.artifacts[0].parts[0].content = 'changed by the caller';
    done.state = 'failed';
    expect(JSON.stringify(live)).toBe(liveNow);
    expect(JSON.stringify((await store.getRunReport(runId))!.toDict({ redactionPolicy: null }))).toBe(report);
  });

  it('the finished task a caller gets is its own: changing it changes nothing the agent answers later', async () => {
    const agent = new Agent({
      card: { name: 'own-result' },
      execute: async (_task, run) => {
        await run.addMessage(createMessage('the answer', { role: 'agent' }));
      },
    });
    const done = await agent.handleTask(createTask('x'));
    done.messages.at(-1)!.parts[0].content = 'changed by the caller';
    done.state = 'failed';
    const later = await agent.getTask(done.id);
    expect(later?.state).toBe('completed');
    expect(later?.messages.at(-1)?.parts[0]?.content).toBe('the answer');
  });

  it('a run report lists reportMaxStreamedEvents streamed events, every other one, and the whole artifact', async () => {
    const chunks = 40;
    const streamer = (options: { reportMaxStreamedEvents?: number }) =>
      new Agent({
        card: { name: 'streamer' },
        runStore: store,
        ...options,
        execute: async (_task, run) => {
          await run.addMessage(createMessage('starting', { role: 'agent' }));
          for (let i = 1; i <= chunks; i++) {
            await run.addArtifact(createArtifact(`chunk ${i}`, { id: 'out' }), { append: i > 1 });
            if (i % 10 === 0) await run.progress(i / chunks);
          }
          await run.addMessage(createMessage('done', { role: 'agent' }));
        },
      });
    const store = new InMemoryRunStore();
    const reportOf = async (agent: Agent) => {
      const events = await collect(agent.handleTaskStreaming(createTask('x')));
      const runId = (events.at(-1) as unknown as { task: Task }).task.metadata.run_context as JsonObject;
      return { events, report: (await store.getRunReport(runId.run_id as string))! };
    };

    const { events, report } = await reportOf(streamer({ reportMaxStreamedEvents: 5 }));
    // The stream itself is complete: 40 chunks, 4 progress ticks.
    expect(events.filter((event) => event.type === 'task.artifact')).toHaveLength(chunks);
    expect(report.events.map((event: RunEvent) => event.type)).toEqual([
      'task.status',
      'task.status',
      ...Array<string>(5).fill('task.artifact'),
      'task.status',
      'task.status',
    ]);
    expect(report.droppedEvents).toBe(chunks - 5 + 4);
    expect(report.artifacts[0].parts.map((part) => part.content)).toEqual(
      Array.from({ length: chunks }, (_, i) => `chunk ${i + 1}`),
    );
    expect(report.finalTask?.artifacts[0].parts).toHaveLength(chunks);
    expect(report.finalTask?.messages.map((message) => messageText(message))).toEqual([
      'x',
      'starting',
      'done',
    ]);

    // Default: 1,000, far above this run.
    const unbounded = (await reportOf(streamer({}))).report;
    expect(unbounded.droppedEvents).toBe(0);
    expect(unbounded.eventCount).toBe(2 + chunks + 4 + 2);
    expect(() => new Agent({ card: { name: 'x' }, reportMaxStreamedEvents: -1 })).toThrow(ValueError);
    expect(() => new Agent({ card: { name: 'x' }, reportMaxStreamedEvents: 2.5 })).toThrow(
      /^reportMaxStreamedEvents must be/,
    );
  });

  it('appends a chunk of 200,000 parts, in the task, its stream and its report', async () => {
    const many = Array.from({ length: 200_000 }, (_, i) => ({ type: 'text' as const, content: `p${i}` }));
    const store = new InMemoryRunStore();
    const agent = new Agent({
      card: { name: 'bulk' },
      runStore: store,
      execute: async (_task, run) => {
        await run.addArtifact(createArtifact('first', { id: 'bulk' }));
        await run.addArtifact({ ...createArtifact('', { id: 'bulk' }), parts: many }, { append: true });
      },
    });
    const events = await collect(agent.handleTaskStreaming(createTask('x')));
    const final = (events.at(-1) as unknown as { task: Task }).task;
    expect(final.artifacts[0].parts).toHaveLength(200_001);
    expect(final.artifacts[0].parts.at(-1)?.content).toBe('p199999');
    const runId = (final.metadata.run_context as JsonObject).run_id as string;
    expect((await store.getRunReport(runId))!.artifacts[0].parts).toHaveLength(200_001);
  });

  it('works with a real SQLite run store file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runtime-store-'));
    const store = new SqliteRunStore({ path: join(dir, 'runs.db') });
    try {
      const agent = new Agent({
        card: { name: 'sql' },
        runStore: store,
        execute: () => Promise.reject(new ActionDeniedError('nope')),
      });
      const task = await agent.handleTask(createTask('x'));
      expect(await store.getTaskRecord(task.id)).toMatchObject({
        state: 'failed',
        task: { metadata: { error: { message: 'nope' } } },
      });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a failing run store is reported and does not change the outcome', async () => {
    const store = new InMemoryRunStore();
    await store.close();
    const reported: string[] = [];
    const agent = new Agent({
      card: { name: 'a' },
      runStore: store,
      onObserverError: (_e, where) => reported.push(where),
      execute: () => undefined,
    });
    expect((await agent.handleTask(createTask('x'))).state).toBe('completed');
    expect(reported).toContain('runStore');
  });
});

describe('delegation', () => {
  function pair(parentOptions: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
    const network = new InProcessNetwork();
    const child = new Agent({
      card: { name: 'child' },
      transport: network.transport('child'),
      execute: async (task, run) => {
        const text = messageText(task.messages[0]);
        if (text === 'fail') throw new ActionDeniedError('child failed');
        await run.addMessage(createMessage(`child got: ${text}`, { role: 'agent' }));
      },
    });
    const sink = new InMemoryEventSink();
    const parent = new Agent({
      card: { name: 'parent' },
      transport: network.transport('parent'),
      eventSink: sink,
      ...parentOptions,
    });
    return { network, child, parent, sink };
  }

  it('sendTaskTo inside a run is an agent.call action and the child gets a child context', async () => {
    const { parent, sink } = pair({
      execute: async (_task, run) => {
        const result = await parent.sendTaskTo('child', createTask('sub'));
        await run.addMessage(result.messages.at(-1) as never);
      },
    });
    const task = await parent.handleTask(createTask('job'));
    expect(task.state).toBe('completed');
    expect(messageText(task.messages.at(-1))).toBe('child got: sub');
    const actions = sink.toList().filter((event) => event.type.startsWith('action.'));
    expect(actions.map((event) => event.type)).toEqual([
      'action.requested',
      'action.policy',
      'action.started',
      'action.completed',
    ]);
    expect(actions[0].payload.action).toMatchObject({
      kind: 'agent.call',
      name: 'child',
      capabilities: ['agent.call'],
    });
    expect(actions[0].delegation_id).toEqual(expect.any(String));
    expect(actions[3].payload.result).toMatchObject({ state: 'completed' });
  });

  it('a policy can deny delegation', async () => {
    const { parent, network } = pair({
      policy: { 'agent.call': 'deny' },
      execute: async (_task, run) => void (await run.sendTaskTo('child', createTask('sub'))),
    });
    const task = await parent.handleTask(createTask('job'));
    expect(task.metadata.error).toMatchObject({ code: 'ACTION_DENIED' });
    expect(network.log).toEqual([]);
  });

  it('sendMessageTo answers with the reply message, or throws the remote error', async () => {
    const { parent } = pair();
    const reply = await parent.sendMessageTo('child', 'hello');
    expect(messageText(reply)).toBe('child got: hello');
    await expect(parent.sendMessageTo('child', 'fail')).rejects.toThrow('child failed');
    await expect(parent.sendMessageTo('nobody', 'x')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      new Agent({ card: { name: 'lonely' } }).sendTaskTo('child', createTask('x')),
    ).rejects.toThrow(/transport/);
  });

  it('outbound carries sendTaskTo and sendMessageTo instead of the transport; stop() stops it', async () => {
    const sent: { name: string; target: string; data: unknown }[] = [];
    let stopped = 0;
    const outbound = {
      kind: 'http',
      start: async () => undefined,
      stop: async () => void stopped++,
      bind: () => undefined,
      onTaskReceived: () => undefined,
      subscribe: () => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true }) }) }),
      authenticate: async () => ({ principalId: 'p', token: 't', metadata: {} }),
      validateUrl: () => false,
      async send(spec: { name: string }, target: string, data: unknown) {
        sent.push({ name: spec.name, target, data });
        if (spec.name !== 'send_task') return data;
        const task = data as Task;
        return {
          ...task,
          state: 'completed',
          messages: [...task.messages, createMessage('remote', { role: 'agent' })],
        };
      },
    } as unknown as Transport;
    const network = new InProcessNetwork();
    const agent = new Agent({ card: { name: 'caller' }, transport: network.transport('caller'), outbound });
    expect(agent.outbound).toBe(outbound);
    expect(messageText(await agent.sendMessageTo('http://a2a.example', 'hi'))).toBe('remote');
    const task = await agent.sendTaskTo('http://a2a.example', createTask('job'));
    expect(task.state).toBe('completed');
    expect(sent.map((call) => [call.name, call.target])).toEqual([
      ['send_task', 'http://a2a.example'],
      ['send_task', 'http://a2a.example'],
    ]);
    expect(network.log).toEqual([]);
    await agent.stop();
    expect(stopped).toBe(1);
    expect(() => new Agent({ card: { name: 'x' }, outbound: {} as never })).toThrow(ValueError);
    const alone = new Agent({ card: { name: 'alone' }, outbound });
    expect(alone.transport).toBeNull();
    await expect(alone.sendTaskTo('http://a2a.example', createTask('x'))).resolves.toMatchObject({
      state: 'completed',
    });
  });
});

/** A transport that, like the network ones, knows its real port only once it listens. */
class ListeningTransport implements Transport {
  readonly kind = 'http' as const;
  constructor(public url: string) {}
  bind(): void {}
  onTaskReceived(): void {}
  async start(): Promise<void> {
    this.url = this.url.replace(/:0$/, ':4321');
  }
  async stop(): Promise<void> {}
  send<TResult>(): Promise<TResult> {
    return Promise.reject(new Error('not a client'));
  }
  subscribe(): AsyncIterable<TaskEvent> {
    throw new Error('not a client');
  }
  authenticate(): Promise<never> {
    return Promise.reject(new Error('not a client'));
  }
  validateUrl(): boolean {
    return true;
  }
}
